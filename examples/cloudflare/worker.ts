import { Hono, type Context } from "hono";
import * as z from "zod";
import { Logger, toMs } from "../../src/index.js";
import { Cache } from "../../src/cache/index.js";
import { kvCache, workersLogs } from "../../src/runtime/cloudflare/index.js";
import { readPrices } from "../price-refresh/prices.js";
import { PRICES_TASK, SWEEP_TASK } from "../price-refresh/tasks.js";
import type { Env } from "./env.js";
import { AGGREGATOR_NAME } from "./aggregator-do.js";
import { ALERTS, COLLECTORS, REGISTRY_NAME } from "./registry-do.js";
import { SCHEDULER_NAME } from "./scheduler-do.js";

export { SchedulerDO } from "./scheduler-do.js";
export { PortfolioDO } from "./portfolio-do.js";
export { AggregatorDO } from "./aggregator-do.js";
export { SymbolRegistryDO } from "./registry-do.js";
export { PriceCollectorDO, PriceAlertDO } from "./receivers.js";

/** `GET /api/prices` reports older prices as stale: three missed refreshes. */
const PRICE_MAX_AGE_MS = 15 * 60_000;
const TOKEN_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const MAX_TOKENS = 50;

const app = new Hono<{ Bindings: Env }>();
const scheduler = (env: Env) => env.SCHEDULER.get(env.SCHEDULER.idFromName(SCHEDULER_NAME));

/**
 * The leaderboard's prices, straight from KV: no request waits on Tenero or wakes the scheduler, and
 * every user's request costs the same nothing (seed 003: prices are the same for everyone).
 */
app.get("/api/prices", async (c) => {
  const tokens = [...new Set((c.req.query("tokens") ?? "").split(",").map((t) => t.trim()).filter(Boolean))];
  const bad = tokens.find((t) => !TOKEN_ID.test(t));
  if (tokens.length === 0 || tokens.length > MAX_TOKENS || bad !== undefined) {
    return c.json({ error: "invalid_query", message: bad !== undefined ? `invalid token id ${JSON.stringify(bad)}` : `tokens is required: 1 to ${MAX_TOKENS} comma-separated token ids, e.g. ?tokens=stx,sbtc` }, 400);
  }
  const now = Date.now();
  const prices = await readPrices(new Cache(kvCache(c.env.PRICES), () => Date.now()), tokens, { maxAgeMs: PRICE_MAX_AGE_MS, now });
  c.header("cache-control", "public, max-age=30");
  return c.json({ asOf: now, maxAgeMs: PRICE_MAX_AGE_MS, prices });
});

// The seed's RPC surface for ops, behind a bearer token: status, refresh, pause, resume.
const RefreshBody = z.object({ task: z.enum(["all", PRICES_TASK, SWEEP_TASK]).default("all") }).strict();
const isDuration = (value: string) => {
  try {
    toMs(value);
    return true;
  } catch {
    return false;
  }
};
const PauseBody = z
  .object({
    until: z.union([z.number().int().positive(), z.string().refine(isDuration, 'a duration such as "1h", or epoch milliseconds')]),
    task: z.enum([PRICES_TASK, SWEEP_TASK]).optional(),
  })
  .strict();

app.use("/api/scheduler/*", async (c, next) => {
  if (!c.env.ADMIN_TOKEN || c.req.header("authorization") !== `Bearer ${c.env.ADMIN_TOKEN}`) {
    return c.json({ error: "unauthorized", message: "the scheduler routes need Authorization: Bearer <ADMIN_TOKEN>" }, 401);
  }
  await next();
});
app.get("/api/scheduler/status", async (c) => c.json(await scheduler(c.env).status()));
app.post("/api/scheduler/refresh", async (c) => {
  const body = RefreshBody.safeParse(await jsonBody(c));
  if (!body.success) return invalid(c, body.error);
  return c.json({ results: await scheduler(c.env).refreshNow(body.data.task) });
});
app.post("/api/scheduler/pause", async (c) => {
  const body = PauseBody.safeParse(await jsonBody(c));
  if (!body.success) return invalid(c, body.error);
  return c.json(await scheduler(c.env).pauseUntil(body.data.until, body.data.task));
});
app.post("/api/scheduler/resume", async (c) => {
  await scheduler(c.env).resume();
  return c.json({ resumed: true });
});

// Seed 002: every change takes the client's Idempotency-Key; the user's portfolio object dedupes it.
const USER = /^[A-Za-z0-9_-]{1,64}$/;
const portfolio = (env: Env, user: string) => env.PORTFOLIO.get(env.PORTFOLIO.idFromName(user));
app.post("/api/portfolios/:user/positions", async (c) => {
  const user = c.req.param("user");
  if (!USER.test(user)) return c.json({ error: "invalid_user", message: "a user id is 1-64 letters, digits, '_' or '-'" }, 400);
  const outcome = await portfolio(c.env, user).openPosition(c.req.header("idempotency-key") ?? null, (await jsonBody(c)) as never);
  return c.json(outcome, outcome.success ? 201 : 422);
});
app.post("/api/portfolios/:user/reset", async (c) => {
  const user = c.req.param("user");
  if (!USER.test(user)) return c.json({ error: "invalid_user", message: "a user id is 1-64 letters, digits, '_' or '-'" }, 400);
  return c.json(await portfolio(c.env, user).reset(c.req.header("idempotency-key") ?? null));
});
app.get("/api/portfolios/:user", async (c) => c.json(await portfolio(c.env, c.req.param("user")).view()));

// Seed 000 and 001: admin routes, behind the same token.
app.use("/api/admin/*", async (c, next) => {
  if (!c.env.ADMIN_TOKEN || c.req.header("authorization") !== `Bearer ${c.env.ADMIN_TOKEN}`) return c.json({ error: "unauthorized", message: "admin routes need Authorization: Bearer <ADMIN_TOKEN>" }, 401);
  await next();
});
const aggregator = (env: Env) => env.AGGREGATOR.get(env.AGGREGATOR.idFromName(AGGREGATOR_NAME));
const registry = (env: Env) => env.REGISTRY.get(env.REGISTRY.idFromName(REGISTRY_NAME));
app.post("/api/admin/account-values", async (c) => c.json(await aggregator(c.env).recordValues((await jsonBody(c)) as never)));
app.get("/api/admin/aggregator", async (c) => c.json(await aggregator(c.env).status()));
app.post("/api/admin/aggregator/emit", async (c) => c.json({ results: await aggregator(c.env).refreshNow("all") }));
app.post("/api/admin/symbols", async (c) => c.json(await registry(c.env).upsertSymbols((await jsonBody(c)) as never)));
app.post("/api/admin/symbols/:symbol/:action{enable|disable}", async (c) => c.json(await registry(c.env).setEnabled(c.req.param("symbol"), c.req.param("action") === "enable")));
app.get("/api/admin/symbols", async (c) => c.json(await registry(c.env).status()));
app.get("/api/admin/receivers/:id", async (c) => {
  const id = c.req.param("id");
  if (COLLECTORS.includes(id)) return c.json(await c.env.COLLECTOR.get(c.env.COLLECTOR.idFromName(id)).symbols());
  if (ALERTS.includes(id)) return c.json(await c.env.ALERT.get(c.env.ALERT.idFromName(id)).symbols());
  return c.json({ error: "not_found", message: `no receiver ${id}` }, 404);
});

app.notFound((c) => c.json({ error: "not_found", message: `no route for ${c.req.method} ${c.req.path}` }, 404));
app.onError((error, c) => {
  // The Worker's own failures go where the objects' do (seed 003: never to a console nobody reads).
  const sink = workersLogs(c.env.LOGS, { appId: "landing-page", context: { worker: "api" } });
  new Logger(sink, () => Date.now()).error("api.error", { method: c.req.method, path: c.req.path, error: error.message });
  c.executionCtx.waitUntil(sink.flush());
  return c.json({ error: "internal_error", message: "the request failed; see the logs" }, 500);
});

async function jsonBody(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    return Symbol.for("invalid json");
  }
}

function invalid(c: Context, error: z.ZodError) {
  return c.json({ error: "invalid_body", message: error.issues.map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`).join("; ") }, 400);
}

export default app;
