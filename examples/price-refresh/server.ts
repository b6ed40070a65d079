import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { Hono, type Context } from "hono";
import * as z from "zod";
import type { Tickwork } from "../../src/index.js";
import { readPrices } from "./prices.js";

/**
 * The HTTP surface, a Hono app:
 * - `GET /api/prices?tokens=a,b` reads the cache the price task fills (the seed's KV-backed route
 *   for the leaderboard); it never calls Tenero, so a request costs no budget and never waits.
 * - `GET /api/scheduler/status` and `POST /api/scheduler/refresh` are the seed's RPC surface
 *   (`status()`, `refreshNow(task)`) for a Node process: tickwork's scheduler behind two routes.
 */

export interface ApiOptions {
  tw: Tickwork;
  /** Older prices are reported as stale (price null, with their age). */
  maxAgeMs: number;
  /** The tasks `refresh` may name (besides "all"). */
  tasks: readonly string[];
  /** When set, `POST /api/scheduler/refresh` needs `Authorization: Bearer <adminToken>`. */
  adminToken?: string;
}

/** Tenero's ids are contract principals (`SP...sbtc-token`), some with `::asset`; "stx" for the native token. */
const TOKEN_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
/** A leaderboard page asks for its 3-30 tokens at once; 50 leaves room and bounds a request's cost. */
const MAX_TOKENS = 50;

const TokensQuery = z.object({
  tokens: z
    .string({ error: "tokens is required: a comma-separated list of token ids, e.g. ?tokens=stx,sbtc" })
    .transform((s) => s.split(",").map((t) => t.trim()))
    .pipe(
      z
        .array(z.string().regex(TOKEN_ID, "a token id is 1-128 letters, digits, '.', ':', '_' or '-', starting with a letter or digit"))
        .min(1)
        .max(MAX_TOKENS, `at most ${MAX_TOKENS} tokens per request`),
    ),
});

export function createApi(options: ApiOptions): Hono {
  const { tw, maxAgeMs } = options;
  const app = new Hono();
  const RefreshBody = z.object({ task: z.enum(["all", ...options.tasks] as [string, ...string[]]).default("all") }).strict();

  app.get("/api/prices", async (c) => {
    const parsed = TokensQuery.safeParse({ tokens: c.req.query("tokens") });
    if (!parsed.success) return invalid(c, "invalid_query", parsed.error);
    const tokens = [...new Set(parsed.data.tokens)];
    const now = tw.clock.now();
    const prices = await readPrices(tw.cache, tokens, { maxAgeMs, now });
    // The same answer for every user: a CDN or the browser may keep it for a short while.
    c.header("cache-control", "public, max-age=30");
    return c.json({ asOf: now, maxAgeMs, prices });
  });

  app.get("/api/scheduler/status", async (c) => c.json(await tw.scheduler.status()));

  app.post("/api/scheduler/refresh", async (c) => {
    if (options.adminToken !== undefined && c.req.header("authorization") !== `Bearer ${options.adminToken}`) {
      return c.json({ error: "unauthorized", message: "POST /api/scheduler/refresh needs Authorization: Bearer <admin token>" }, 401);
    }
    const text = await c.req.text();
    let body: unknown = {};
    if (text.trim() !== "") {
      try {
        body = JSON.parse(text);
      } catch {
        return c.json({ error: "invalid_body", message: "the body must be JSON, e.g. {\"task\":\"all\"}" }, 400);
      }
    }
    const parsed = RefreshBody.safeParse(body);
    if (!parsed.success) return invalid(c, "invalid_body", parsed.error);
    // runNow clears a backoff and runs whatever the schedule says; a task already running is reported skipped.
    return c.json({ results: await tw.scheduler.runNow(parsed.data.task) });
  });

  app.notFound((c) => c.json({ error: "not_found", message: `no route for ${c.req.method} ${c.req.path}` }, 404));
  app.onError((error, c) => {
    tw.logger.error("api.error", { method: c.req.method, path: c.req.path, error: error.message });
    return c.json({ error: "internal_error", message: "the request failed; see the server's logs" }, 500);
  });
  return app;
}

function invalid(c: Context, error: string, zodError: z.ZodError) {
  const issues = zodError.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
  return c.json({ error, message: issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; "), issues }, 400);
}

export interface Listening {
  /** `http://127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

/** Serves the app with @hono/node-server on 127.0.0.1 (port 0: any free port). */
export async function listen(app: Hono, options: { port?: number; hostname?: string } = {}): Promise<Listening> {
  const hostname = options.hostname ?? "127.0.0.1";
  // overrideGlobalObjects: false keeps the process's own Request and Response, which tickwork's
  // HTTP client (and anything else in the process) shares.
  const server = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, hostname, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${hostname}:${port}`,
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
