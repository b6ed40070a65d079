import type { Hono } from "hono";
import type { Tickwork } from "../../tickwork.js";
import { errorText } from "../../core/errors.js";

/** Probes, open without a token: they say whether to send traffic, nothing about the work. */
export function healthRoutes(app: Hono, tw: Tickwork): void {
  /** The process is up and serving. */
  app.get("/healthz", (c) => c.json({ status: "ok" }));

  /** The store answers and its schema is the one this code expects. */
  app.get("/readyz", async (c) => {
    let schema: { current: number; latest: number };
    try {
      schema = await tw.store.schemaVersion();
    } catch (error) {
      tw.logger.error("store.error", { operation: "readyz", error: errorText(error) });
      return c.json({ status: "unavailable", reason: "the store cannot be reached" }, 503);
    }
    if (schema.current !== schema.latest) {
      const reason = schema.current < schema.latest ? "migrations are pending" : "the database was migrated by newer code";
      return c.json({ status: "unavailable", reason, schema }, 503);
    }
    return c.json({ status: "ready", schema });
  });
}
