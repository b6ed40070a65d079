import type { Hono } from "hono";
import * as z from "zod";
import { InvalidInputError, schedule, type Clock, type Duration, type LogLevel, type LoggerOption, type Tickwork } from "../../src/index.js";
import { type Fanout } from "../../src/fanout/index.js";
import { createApi, listen, type Listening } from "./api.js";
import type { AppDatabase, DatabaseTarget } from "./database.js";
import { CREATE_TABLES } from "./sql.js";
import { hostExample } from "../support/engine.js";
import { pushOverHttp, type PushOutcome, type ReceiverTarget, type SymbolFanoutTargets } from "./push.js";
import { CRAWL_EVERY, CRAWL_TASK, CrawlerConfig, reconcileWithCrawler } from "./crawler.js";
import { SymbolRegistry } from "./registry.js";
import { symbolNames, type SymbolMetadata } from "./symbols.js";
import type { ReconcileOption } from "../../src/fanout/index.js";

export type { PushOutcome, ReceiverTarget, SymbolFanoutTargets } from "./push.js";
export { CRAWL_EVERY, CRAWL_TASK } from "./crawler.js";

/** Prefixed like the table, so this example can declare its fan-out on an engine the other examples share. */
export const FANOUT_NAME = "symbol-fanout.symbols";
/** Seed 001's retry steps after a failed round; the last one repeats until the targets catch up. */
export const RETRY_STEPS = ["30s", "1m", "2m", "5m", "15m"] as const;
/** Seed 001's standalone reconciliation interval (while its crawler is disabled). */
export const RECONCILE_EVERY = "15m";

interface CommonOptions {
  /** Every receiver: 7 collectors and 70 alert receivers in the seed. Ids must be unique across both. */
  targets: SymbolFanoutTargets;
  /**
   * When every receiver is sent the current state again. Default: seed 001's rule, after each run of
   * the crawler while it is enabled and every 15 minutes while it is not (`reconcileWithCrawler`). A
   * duration, `false` or any other `reconcile` option of a fan-out replaces the rule.
   */
  reconcile?: ReconcileOption;
  /** A push not answered after this long (on the engine's clock) fails and is retried; default "30s". */
  pushTimeout?: Duration;
  /** Called after every push with how it went. */
  onPush?: (outcome: PushOutcome) => void;
}

/** The app opens its own database and engine. */
export interface OwnEngineOptions extends CommonOptions {
  database: DatabaseTarget;
  clock?: Clock;
  logger?: LoggerOption;
  logLevel?: LogLevel;
  handleSignals?: boolean;
}

/** The app declares itself on an engine and a database connection that the caller opened and will close. */
export interface SharedEngineOptions extends CommonOptions {
  tw: Tickwork;
  db: AppDatabase;
}

export type SymbolFanoutAppOptions = OwnEngineOptions | SharedEngineOptions;

export interface AdminResult {
  symbol: string;
  enabled: boolean;
  /** false: the symbol already was in that state. */
  changed: boolean;
  /** The fan-out's state version after the change. */
  version: number;
}

export interface SymbolFanoutApp {
  tw: Tickwork;
  db: AppDatabase;
  registry: SymbolRegistry;
  /** The crawler's flag (the seed's CrawlerConfigManager); `setCrawlerEnabled` changes it. */
  crawler: CrawlerConfig;
  /** Enables or disables the crawler. Its task (`symbol-fanout.crawl`, hourly) then crawls or skips, and reconciliation follows it or has its own 15 minutes. */
  setCrawlerEnabled(enabled: boolean): Promise<void>;
  /** The fan-out: `status()` per target, `reconcileNow()`. */
  symbols: Fanout<SymbolMetadata[]>;
  /** The admin routes (`api.ts`). */
  api: Hono;
  /**
   * The admin function: enables or disables a symbol in the registry, then pushes the new enabled
   * list to every receiver (the seed's pushWithRetryOnFailure). Disabling the last enabled symbol
   * is refused with `LastEnabledSymbolError`.
   */
  setEnabled(symbol: string, enabled: boolean): Promise<AdminResult>;
  /** Serves the admin API on 127.0.0.1 (any free port unless given). */
  listen(options?: { port?: number }): Promise<Listening>;
  /** Closes the listeners; with its own engine, also stops it and closes the database. */
  stop(): Promise<void>;
}

const TargetSchema = z.object({ id: z.string().min(1).max(200), url: z.url({ protocol: /^https?$/ }) });
const TargetsSchema = z
  .object({ collectors: z.array(TargetSchema).min(1), alerts: z.array(TargetSchema).min(1) })
  .refine((t) => new Set([...t.collectors, ...t.alerts].map((x) => x.id)).size === t.collectors.length + t.alerts.length, "target ids must be unique across collectors and alerts");

/**
 * Seed 001 on tickwork: the symbol registry's table, the fan-out of its enabled symbols to every
 * collector (full metadata) and alert receiver (names only), and the admin API. With `{ database }`
 * it opens its own store and engine; with `{ tw, db }` it declares itself on the caller's, so one
 * process can run every example on one engine.
 */
export async function createSymbolFanoutApp(options: SymbolFanoutAppOptions): Promise<SymbolFanoutApp> {
  const targets = TargetsSchema.safeParse(options?.targets);
  if (!targets.success) throw new InvalidInputError(`createSymbolFanoutApp: targets: ${targets.error.issues.map((i) => `${i.path.join(".") || "(value)"}: ${i.message}`).join("; ")}`);
  const shared = "tw" in options;
  if (shared && "database" in options) throw new InvalidInputError("createSymbolFanoutApp: give either { database } (its own engine) or { tw, db } (an engine you opened), not both");
  if (!shared && !("database" in options)) throw new InvalidInputError("createSymbolFanoutApp: give { database } (its own engine) or { tw, db } (an engine you opened)");

  // Its own engine and database, or the caller's (examples/support/engine.ts).
  const host = shared
    ? await hostExample({ shared: { tw: options.tw, db: options.db } }, CREATE_TABLES, {})
    : await hostExample({ database: options.database }, CREATE_TABLES, {
        clock: options.clock,
        logger: options.logger,
        logLevel: options.logLevel,
        handleSignals: options.handleSignals ?? false,
      });
  const { tw, db } = host;
  try {
    const registry = new SymbolRegistry(db, () => tw.clock.now());
    const crawler = new CrawlerConfig(db, () => tw.clock.now());
    const symbols = tw.fanout<SymbolMetadata[], ReceiverTarget>(FANOUT_NAME, {
      groups: {
        collectors: { targets: targets.data.collectors },
        alerts: { targets: targets.data.alerts, project: symbolNames },
      },
      send: pushOverHttp(options.onPush),
      backoff: schedule([...RETRY_STEPS]),
      reconcile: options.reconcile ?? reconcileWithCrawler(crawler, RECONCILE_EVERY),
      // Retries and reconciliations read the table, not a copy: a change made while a retry waits
      // goes out with it, and a fresh engine has something to push before any admin call.
      state: () => registry.enabled(),
      timeout: options.pushTimeout ?? "30s",
    });
    // The seed's crawler runs on its own alarm; here a periodic task. What it crawls is outside this
    // example: it reports the registry's size. Disabled, it skips; the fan-out hears of each run either way.
    tw.task(CRAWL_TASK, {
      every: CRAWL_EVERY,
      run: async () => ((await crawler.enabled()) ? { crawled: (await registry.all()).length } : { skipped: "the crawler is disabled" }),
    });
    const setEnabled = async (symbol: string, enabled: boolean): Promise<AdminResult> => {
      const { changed } = await registry.setEnabled(symbol, enabled);
      // Pushing an unchanged list is a no-op (the seed: pushes are idempotent), so always push.
      const { version } = await symbols.push(await registry.enabled());
      return { symbol, enabled, changed, version };
    };
    const setCrawlerEnabled = (enabled: boolean) => crawler.setEnabled(enabled);
    const api = createApi({ tw, registry, symbols, setEnabled, crawler, setCrawlerEnabled });
    const listeners: Listening[] = [];
    return {
      tw,
      db,
      registry,
      crawler,
      setCrawlerEnabled,
      symbols,
      api,
      setEnabled,
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
  } catch (error) {
    await host.close().catch(() => {});
    throw error;
  }
}


