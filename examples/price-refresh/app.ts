import type { Hono } from "hono";
import { toMs, type Clock, type Duration, type Limiter, type LogLevel, type LoggerOption, type RateOptions, type Tickwork } from "../../src/index.js";
import { createHttpClient, type HttpClient, type HttpRetryOptions } from "../../src/http/index.js";
import { hostExample, type Hosting } from "../support/engine.js";
import type { AppDatabase } from "./database.js";
import { CREATE_TABLES } from "./sql.js";
import { createApi, listen, type Listening } from "./server.js";
import { defineTasks, PRICES_TASK, SWEEP_TASK, type SweepOptions } from "./tasks.js";

/** The competition's always-priced tokens; the agents' swaps add the rest. */
export const BASE_TOKENS = ["stx", "sbtc", "usdh", "alex", "welsh"] as const;

export type PriceRefreshAppOptions = Hosting & {
  /** Tenero's base URL (the fake's in tests and the demo). */
  teneroUrl: string;
  /**
   * Sent as `x-api-key` when set. The seed's open question: Tenero's header name is unconfirmed
   * (`x-api-key` is its guess); without a key the budget is per source IP (100/min, 50k/month).
   */
  teneroApiKey?: string;
  /**
   * The Tenero budget every process on the database draws from before each request (`TENERO_LIMITER`):
   * default Tenero's 100 a minute. The demo and the tests shrink it with the fake's window.
   */
  teneroLimit?: RateOptions;
  /** The chain API the sweep reads (the fake Hiro's URL). */
  hiroUrl: string;
  /** Addresses of the competition's agents: the sweep records their swaps only. */
  agents: readonly string[];
  baseTokens?: readonly string[];
  /** Production: prices "5m", sweep "15m" (README: the rationale). */
  cadence?: { prices?: Duration; sweep?: Duration };
  /** `GET /api/prices` reports older prices as stale; default 15m (three missed refreshes). */
  priceMaxAge?: Duration;
  /**
   * Retries of a failing price or block request within a run: 5xx, timeouts and network errors,
   * default 2 attempts in all. A 429 is never retried inside a run: the task backs off instead.
   */
  retry?: HttpRetryOptions;
  /** Per-attempt timeout of the upstream calls; default 10s. */
  requestTimeout?: Duration;
  /** Sent as `user-agent` to both upstreams, so their logs tell this app's processes apart. */
  userAgent?: string;
  sweep?: SweepOptions;
  adminToken?: string;
  clock?: Clock;
  logger?: LoggerOption;
  logLevel?: LogLevel;
  handleSignals?: boolean;
};

export interface PriceRefreshApp {
  tw: Tickwork;
  db: AppDatabase;
  api: Hono;
  /** Serves the API on 127.0.0.1 (any free port unless given). */
  listen(options?: { port?: number }): Promise<Listening>;
  /** Stops the engine (in-flight runs finish), closes the listeners and the database. */
  stop(): Promise<void>;
}

/** 5xx, timeouts and network errors are worth one more try; a 429 is the scheduler's business. */
const RETRY_ON = [500, 502, 503, 504];

/** The limiter's name: every process and every caller of Tenero (the price task, a sweep, a job) draws from it. */
export const TENERO_LIMITER = "tenero";
/**
 * Tenero's budget without an API key is 100 requests a minute per source IP, counted in fixed
 * windows. Ours is evenly spaced (burst 1), and 5 under it: a token is timed when it is granted and
 * its request arrives a few milliseconds later, so with the same 100 a request granted at a window's
 * end could land in the next window as its 101st.
 */
export const TENERO_BUDGET = { max: 95, per: "1m" } as const satisfies RateOptions;

export interface TeneroClientOptions {
  url: string;
  apiKey?: string;
  limit?: RateOptions;
  retry?: HttpRetryOptions;
  requestTimeout?: Duration;
  /** Sent with every request (a caller's `user-agent`). */
  headers?: Record<string, string>;
}

/**
 * The Tenero client for any code that calls Tenero, in any process: every attempt first takes a token
 * of the shared `tenero` limiter, and an answer that says the budget is spent (a 429, or a minute's
 * remaining at 0) pauses that limiter for every process until Tenero's reset, not only for this caller.
 */
export function createTeneroClient(tw: Tickwork, options: TeneroClientOptions): { tenero: HttpClient; budget: Limiter } {
  const budget = tw.limiter(TENERO_LIMITER, options.limit ?? TENERO_BUDGET);
  const tenero = createHttpClient({
    logger: tw.logger,
    clock: tw.clock,
    timeout: options.requestTimeout ?? "10s",
    retry: options.retry ?? { maxAttempts: 2 },
    retryOn: RETRY_ON,
    name: "tenero",
    baseUrl: options.url,
    limiter: budget,
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.apiKey ? { apiKey: { header: "x-api-key", value: options.apiKey } } : {}),
  });
  return { tenero, budget };
}

/** Seed 003 on tickwork: two periodic tasks, the cache they fill and the API that reads it, on one database. */
export async function createPriceRefreshApp(options: PriceRefreshAppOptions): Promise<PriceRefreshApp> {
  const host = await hostExample(options, CREATE_TABLES, { clock: options.clock, logger: options.logger, logLevel: options.logLevel, handleSignals: options.handleSignals ?? false });
  const { tw, db } = host;
  // Both clients log to the engine's logger: one sink for tickwork's events and the upstreams'
  // failures (seed 003's root cause was a Tenero client that logged to a console nobody read).
  const headers = options.userAgent ? { "user-agent": options.userAgent } : undefined;
  const common = { logger: tw.logger, clock: tw.clock, timeout: options.requestTimeout ?? "10s", retry: options.retry ?? { maxAttempts: 2 }, retryOn: RETRY_ON, ...(headers ? { headers } : {}) };
  const { tenero, budget } = createTeneroClient(tw, {
    url: options.teneroUrl,
    ...(headers ? { headers } : {}),
    ...(options.teneroApiKey ? { apiKey: options.teneroApiKey } : {}),
    ...(options.teneroLimit ? { limit: options.teneroLimit } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.requestTimeout ? { requestTimeout: options.requestTimeout } : {}),
  });
  const hiro = createHttpClient({ ...common, name: "hiro", baseUrl: options.hiroUrl });
  const baseTokens = options.baseTokens ?? BASE_TOKENS;
  const agents = new Set(options.agents);
  const deps = { tw, db, tenero, teneroBudget: budget, hiro, baseTokens, agents, sweep: options.sweep, cadence: options.cadence };
  defineTasks(deps);

  const api = createApi({
    tw,
    maxAgeMs: toMs(options.priceMaxAge ?? "15m"),
    tasks: [PRICES_TASK, SWEEP_TASK],
    ...(options.adminToken !== undefined ? { adminToken: options.adminToken } : {}),
  });
  const listeners: Listening[] = [];

  return {
    tw,
    db,
    api,
    async listen(o = {}) {
      const l = await listen(api, o);
      listeners.push(l);
      return l;
    },
    async stop() {
      await Promise.allSettled(listeners.map((l) => l.close()));
      await host.close();
    },
  };
}
