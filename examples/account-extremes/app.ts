import { InvalidInputError, toMs, type Backoff, type Clock, type Duration, type LogLevel, type LoggerOption, type Tickwork } from "../../src/index.js";
import { type Delivery, type WebhookSenderOptions } from "../../src/delivery/index.js";
import { Callbacks, type DailyCallback, type DailyEmitResult, type HourlyCallback } from "./callbacks.js";
import type { AppDatabase, DatabaseTarget } from "./database.js";
import { CREATE_TABLES } from "./sql.js";
import { hostExample } from "../support/engine.js";
import { ExtremesTracker, type ProcessResult } from "./extremes.js";
import type { PriceTick, TrackedAccount } from "./market.js";

export { DAILY_DELIVERY, HOURLY_DELIVERY, callbackKey, type Callback, type DailyCallback, type HourlyCallback } from "./callbacks.js";

/** Prefixed, so this example can declare its task on an engine the other examples share. */
export const PIPELINE_TASK = "account-extremes.pipeline";

interface CommonOptions {
  /** The receiver's base URL: callbacks are POSTed to `/callbacks/hourly` and `/callbacks/daily` under it. */
  receiverUrl: string;
  /** The Standard Webhooks secret (`whsec_` + base64) the receiver verifies with. */
  secret: string;
  /** How often the pipeline runs; default "1m" (the seed's parent DO ran its alarm every minute or so). */
  cadence?: Duration;
  /** A callback not answered after this long fails and is retried; default "30s". */
  sendTimeout?: Duration;
  /** Delay before each retry; default seed 000's 1m, 5m, 15m, 1h, 2h, then dropped. */
  retry?: Backoff;
  /** Retries per tick, per delivery; default 50 (seed 000). */
  retryBatch?: number;
  /** The last tick before midnight counts as the price at midnight if it is at most this old; default "5m". */
  midnightTolerance?: Duration;
  /** The fetch the callbacks go through; default the platform's (the demo counts the calls in flight with its own). */
  fetch?: WebhookSenderOptions<unknown>["fetch"];
}

/** The app opens its own database and engine. */
export interface OwnEngineOptions extends CommonOptions {
  database: DatabaseTarget;
  clock?: Clock;
  logger?: LoggerOption;
  logLevel?: LogLevel;
  handleSignals?: boolean;
  /** Outbound calls per tick; default 500 (seed 000's cap). */
  tickBudget?: number;
}

/** The app declares itself on an engine and a database connection that the caller opened and will close. */
export interface SharedEngineOptions extends CommonOptions {
  tw: Tickwork;
  db: AppDatabase;
}

export type AccountExtremesAppOptions = OwnEngineOptions | SharedEngineOptions;

/** What one pipeline run did (kept as the task's `lastResult`). */
export interface PipelineResult {
  processed: ProcessResult;
  hourly: { emitted: number; skipped: number };
  daily: { ready: boolean; emitted: number; skipped: number; droppedSettled: number };
}

export interface AccountExtremesApp {
  tw: Tickwork;
  db: AppDatabase;
  daily: Delivery<DailyCallback>;
  hourly: Delivery<HourlyCallback>;
  tracker: ExtremesTracker;
  /** Adds accounts to track; one already tracked is left as it is. */
  track(accounts: readonly TrackedAccount[]): Promise<{ added: number }>;
  /** The price feed's write path (ticks in time order; late ones are refused and counted). */
  recordTicks(ticks: readonly PriceTick[]): Promise<{ recorded: number; late: number }>;
  /** With its own engine: stops it (in-flight sends finish) and closes the database. Otherwise nothing. */
  stop(): Promise<void>;
}

/**
 * Seed 000 on tickwork: price ticks drive hourly and daily extremes for many tracked accounts, and
 * the callbacks go to a receiver through tickwork's delivery module: at most 500 calls per tick, the
 * rest carried 100 ms later, failures retried on 1m 5m 15m 1h 2h, then dropped to the dead-letter
 * table. With `{ database }` it opens its own store and engine; with `{ tw, db }` it declares itself
 * on the caller's, so one process can run every example on one engine.
 */
export async function createAccountExtremesApp(options: AccountExtremesAppOptions): Promise<AccountExtremesApp> {
  const shared = !!options && "tw" in options;
  if (shared && "database" in options) throw new InvalidInputError("createAccountExtremesApp: give either { database } (its own engine) or { tw, db } (an engine you opened), not both");
  if (!shared && !(options && "database" in options)) throw new InvalidInputError("createAccountExtremesApp: give { database } (its own engine) or { tw, db } (an engine you opened)");
  checkUrl(options.receiverUrl);
  const sendTimeout = toMs(options.sendTimeout ?? "30s");
  const midnightTolerance = toMs(options.midnightTolerance ?? "5m");

  // Its own engine and database, or the caller's (examples/support/engine.ts).
  const host = shared
    ? await hostExample({ shared: { tw: (options as SharedEngineOptions).tw, db: (options as SharedEngineOptions).db } }, CREATE_TABLES, {})
    : await hostExample({ database: (options as OwnEngineOptions).database }, CREATE_TABLES, {
        clock: (options as OwnEngineOptions).clock,
        logger: (options as OwnEngineOptions).logger,
        logLevel: (options as OwnEngineOptions).logLevel,
        handleSignals: (options as OwnEngineOptions).handleSignals ?? false,
        ...((options as OwnEngineOptions).tickBudget !== undefined ? { tickBudget: (options as OwnEngineOptions).tickBudget } : {}),
      });
  const { tw, db } = host;
  try {
    const tracker = new ExtremesTracker(db, midnightTolerance);
    const callbacks = new Callbacks({
      tw,
      db,
      tracker,
      receiverUrl: options.receiverUrl.replace(/\/+$/, ""),
      secret: options.secret,
      sendTimeout,
      ...(options.retry ? { retry: options.retry } : {}),
      ...(options.retryBatch !== undefined ? { retryBatch: options.retryBatch } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    // The seed's alarm pipeline, minus what tickwork now does itself (resuming carried callbacks,
    // retrying failed ones): fold the feed, emit the closed hours, emit the closed day once every
    // tracking has caught up, clean up. Sending happens in the tick's delivery pass, right after.
    const runPipeline = async (): Promise<PipelineResult> => {
      const now = tw.clock.now();
      const processed = await tracker.process(now);
      const hourly = await callbacks.emitHourly(now);
      const daily: DailyEmitResult = await callbacks.emitDaily(now);
      await tracker.cleanup(now);
      return {
        processed,
        hourly: { emitted: hourly.emitted, skipped: hourly.skipped.length },
        daily: { ready: daily.ready, emitted: daily.emitted, skipped: daily.skipped.length, droppedSettled: daily.droppedSettled },
      };
    };
    tw.task(PIPELINE_TASK, { every: options.cadence ?? "1m", run: runPipeline });
    return {
      tw,
      db,
      daily: callbacks.daily,
      hourly: callbacks.hourly,
      tracker,
      track: (accounts) => tracker.track(accounts, tw.clock.now()),
      recordTicks: (ticks) => tracker.recordTicks(ticks),
      async stop() {
        await host.close();
      },
    };
  } catch (error) {
    await host.close().catch(() => {});
    throw error;
  }
}



function checkUrl(url: unknown): void {
  let ok = false;
  try {
    ok = typeof url === "string" && /^https?:$/.test(new URL(url).protocol);
  } catch {
    ok = false;
  }
  if (!ok) throw new InvalidInputError(`createAccountExtremesApp: receiverUrl must be an http(s) URL, got ${JSON.stringify(url)}`);
}

