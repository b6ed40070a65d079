import type { Hono } from "hono";
import { createTickwork, type Clock, type LogLevel, type LoggerOption, type Tickwork } from "../../src/index.js";
import { type IdempotencyOptions } from "../../src/idempotency/index.js";
import { openDatabase, type AppDatabase, type DatabaseTarget } from "./database.js";
import { Market } from "./market.js";
import { createPortfolio, type EffectHooks, type Portfolio } from "./portfolio.js";
import { createApi, listen, type Listening } from "./server.js";

/** $10,000.00: what a new or reset account starts with unless the request says otherwise. */
export const STARTING_BALANCE_CENTS = 1_000_000;

export interface PaperOrdersAppOptions {
  database: DatabaseTarget;
  /** Prices in cents per unit; default ETH $3,000, SOL $150, STX $2. */
  prices?: Record<string, number>;
  startingBalanceCents?: number;
  /**
   * tickwork's idempotency settings: `ttl` (how long a key is remembered, 24 h) and `staleAfter`
   * (how long a crashed server's claim blocks its key, 1 min; the crash test uses 3 s).
   */
  idempotency?: IdempotencyOptions;
  clock?: Clock;
  logger?: LoggerOption;
  logLevel?: LogLevel;
  instanceId?: string;
  /** Test seams around each change (the crash test stops a request between claim and complete). */
  hooks?: EffectHooks;
}

export interface PaperOrdersApp {
  tw: Tickwork;
  db: AppDatabase;
  market: Market;
  portfolio: Portfolio;
  api: Hono;
  /** Serves the API on 127.0.0.1 (any free port unless given). */
  listen(options?: { port?: number }): Promise<Listening>;
  /** Closes the listeners, stops the engine and closes the database. */
  stop(): Promise<void>;
}

/** Seed 002's paper-trading portfolio on tickwork: the ledger, its idempotency keys and the HTTP API, on one database. */
export async function createPaperOrdersApp(options: PaperOrdersAppOptions): Promise<PaperOrdersApp> {
  const { store, db } = await openDatabase(options.database);
  let tw: Tickwork | undefined;
  try {
    tw = await createTickwork({
      store,
      clock: options.clock,
      logger: options.logger,
      logLevel: options.logLevel,
      instanceId: options.instanceId,
      idempotency: options.idempotency,
      handleSignals: false,
    });
    // Started for its upkeep: expired keys are pruned at start and then every minute.
    await tw.start();
  } catch (error) {
    await Promise.allSettled([tw ? tw.stop() : store.close(), db.close()]);
    throw error;
  }
  const market = new Market(options.prices);
  const portfolio = createPortfolio({ tw, db, market, startingBalanceCents: options.startingBalanceCents ?? STARTING_BALANCE_CENTS, hooks: options.hooks });
  const api = createApi({ portfolio, market, logger: tw.logger });
  const listeners: Listening[] = [];

  return {
    tw,
    db,
    market,
    portfolio,
    api,
    async listen(o = {}) {
      const l = await listen(api, o);
      listeners.push(l);
      return l;
    },
    async stop() {
      await Promise.allSettled(listeners.map((l) => l.close()));
      await tw.stop();
      await db.close();
    },
  };
}
