import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { Hono, type Context } from "hono";
import { InvalidInputError, type Tickwork } from "../../src/index.js";
import { EmptyStateError, type Fanout } from "../../src/fanout/index.js";
import type { AdminResult } from "./app.js";
import type { CrawlerConfig } from "./crawler.js";
import { LastEnabledSymbolError, UnknownSymbolError, type SymbolRegistry } from "./registry.js";
import type { SymbolMetadata } from "./symbols.js";

/**
 * The registry's admin surface, a Hono app (the seed's SymbolRegistry RPC for a Node process):
 * - `GET /api/symbols`: every symbol with its flag;
 * - `POST /api/symbols/:symbol/enable` and `.../disable`: the admin change, pushed at once;
 * - `GET /api/fanout`: the fan-out's version, whether all receivers have it, who is behind;
 * - `POST /api/fanout/reconcile`: re-push the current state to every receiver now;
 * - `GET /api/crawler`, `POST /api/crawler/enable` and `.../disable`: the crawler's flag, which
 *   decides whether reconciliation follows the crawler's runs or has its own 15 minutes.
 * Put it behind your own authentication: it has none.
 */
export interface ApiDeps {
  tw: Tickwork;
  registry: SymbolRegistry;
  symbols: Fanout<SymbolMetadata[]>;
  setEnabled(symbol: string, enabled: boolean): Promise<AdminResult>;
  crawler: CrawlerConfig;
  setCrawlerEnabled(enabled: boolean): Promise<void>;
}

export function createApi({ tw, registry, symbols, setEnabled, crawler, setCrawlerEnabled }: ApiDeps): Hono {
  const app = new Hono();

  app.get("/api/symbols", async (c) => c.json({ symbols: await registry.all() }));

  app.post("/api/symbols/:symbol/:action{enable|disable}", async (c) => {
    try {
      return c.json(await setEnabled(c.req.param("symbol"), c.req.param("action") === "enable"));
    } catch (error) {
      return refusal(c, error);
    }
  });

  app.get("/api/fanout", async (c) => {
    const s = await symbols.status();
    const behind = s.targets.filter((t) => t.behind);
    return c.json({
      name: s.name,
      version: s.version,
      converged: s.converged,
      targets: s.targets.length,
      behind: behind.map((t) => ({ id: t.id, group: t.group, version: t.version, failures: t.failures, lastError: firstLine(t.lastError) })),
      nextAt: s.nextAt,
      nextReason: s.nextReason,
      consecutiveFailures: s.consecutiveFailures,
      lastError: firstLine(s.lastError),
      lastSuccessAt: s.lastSuccessAt,
    });
  });

  app.post("/api/fanout/reconcile", async (c) => {
    await symbols.reconcileNow();
    return c.json({ scheduled: "now" }, 202);
  });

  app.get("/api/crawler", async (c) => c.json({ enabled: await crawler.enabled() }));

  app.post("/api/crawler/:action{enable|disable}", async (c) => {
    await setCrawlerEnabled(c.req.param("action") === "enable");
    return c.json({ enabled: await crawler.enabled() });
  });

  app.notFound((c) => c.json({ error: "not_found", message: `no route for ${c.req.method} ${c.req.path}` }, 404));
  app.onError((error, c) => {
    tw.logger.error("symbol-fanout.api_error", { method: c.req.method, path: c.req.path, error: error.message });
    return c.json({ error: "internal_error", message: "the request failed; see the server's logs" }, 500);
  });
  return app;
}

function refusal(c: Context, error: unknown) {
  if (error instanceof UnknownSymbolError) return c.json({ error: "unknown_symbol", message: error.message }, 404);
  // Both mean "this would push an empty list": the registry's guard, or the fan-out's own refusal.
  if (error instanceof LastEnabledSymbolError || error instanceof EmptyStateError) return c.json({ error: "empty_state_refused", message: error.message }, 409);
  if (error instanceof InvalidInputError) return c.json({ error: "invalid_symbol", message: error.message }, 400);
  throw error;
}

const firstLine = (text: string | null) => (text === null ? null : text.split("\n")[0]!);

export interface Listening {
  /** `http://127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

/** Serves the app with @hono/node-server on 127.0.0.1 (port 0: any free port). */
export async function listen(app: Hono, options: { port?: number } = {}): Promise<Listening> {
  // overrideGlobalObjects: false keeps the process's own Request and Response for everything else in it.
  const server = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = (server.address() as AddressInfo);
  return {
    url: `http://127.0.0.1:${port}`,
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
