import { type Tickwork } from "../../src/index.js";
import { createHttpClient } from "../../src/http/index.js";
import { TickworkObject, type DurableObjectContext } from "../../src/runtime/cloudflare/index.js";
import { CREATE_TABLES } from "../price-refresh/sql.js";
import { defineTasks } from "../price-refresh/tasks.js";
import { d1Database } from "./databases.js";
import { list, logLevel, type Env } from "./env.js";

/** The scheduler's name: versioned, so a later migration can move to "v2" without touching this one (seed 003). */
export const SCHEDULER_NAME = "v1";

/** 5xx, timeouts and network errors are worth one more try within a run; a 429 backs the task off instead. */
const RETRY_ON = [500, 502, 503, 504];

/**
 * Seed 003's SchedulerDO: one object with an alarm for the landing page's periodic work, on the same
 * task code as the Node example (examples/price-refresh/tasks.ts): the Tenero price refresh every 5
 * minutes into KV, and the competition sweep every 15 minutes over D1's `competition_state`. Each
 * task runs in its own try/catch, a rate-limit signal backs it off, and its runs, results and
 * consecutive failures are in the object's storage; its events go to `env.LOGS`, never to the console.
 * As the seed's object runs a task whose `lastRunAt` is 0 on its first alarm, both tasks are defined
 * with `immediately: true`: a new object fills KV with prices at once rather than 5 minutes later.
 */
export class SchedulerDO extends TickworkObject<Env> {
  constructor(ctx: DurableObjectContext, env: Env) {
    super(ctx, env, { logger: { binding: "LOGS", appId: "landing-page" }, logLevel: logLevel(env), cache: { kv: "PRICES" } });
  }

  protected async setup(tw: Tickwork): Promise<void> {
    const { env } = this;
    const db = d1Database(env.DB, "D1 (swaps, competition_state)");
    await db.transaction(CREATE_TABLES.map((sql) => ({ sql })));
    // Both clients log to the object's logger: one sink for tickwork's events and the upstreams' failures.
    const common = { logger: tw.logger, clock: tw.clock, timeout: "10s", retry: { maxAttempts: 2 }, retryOn: RETRY_ON };
    const tenero = createHttpClient({
      ...common,
      name: "tenero",
      baseUrl: env.TENERO_URL,
      ...(env.TENERO_API_KEY ? { apiKey: { header: "x-api-key", value: env.TENERO_API_KEY } } : {}),
    });
    const hiro = createHttpClient({ ...common, name: "hiro", baseUrl: env.HIRO_URL });
    defineTasks({ tw, db, tenero, hiro, baseTokens: list(env.BASE_TOKENS), agents: new Set(list(env.COMPETITION_AGENTS)) });
  }
}
