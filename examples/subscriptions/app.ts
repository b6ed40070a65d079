import type { Hono } from "hono";
import { exponential, type Clock, type Duration, type LogLevel, type LoggerOption, type Queue, type Tickwork } from "../../src/index.js";
import { hostExample, type Hosting } from "../support/engine.js";
import { createAdminApi } from "./admin.js";
import type { AppDatabase } from "./database.js";
import { CREATE_TABLES } from "./sql.js";
import { paymentHandler, type PaymentEvent } from "./processor.js";
import { runSummaryHandler, type PaymentRun } from "./runs.js";
import { PAYMENTS_QUEUE, RUNS_QUEUE, scheduleDuePayments, type PaymentPayload, type RunPayload, type ScheduleResult, type ScheduledRun } from "./scheduler.js";

export { PAYMENTS_QUEUE, RUNS_QUEUE } from "./scheduler.js";
export const SCHEDULER_TASK = "schedule-payments";
/** The seed's first attempt plus its five retries. */
export const MAX_ATTEMPTS = 6;

export type SubscriptionsAppOptions = Hosting & {
  /** The payment provider's base URL. */
  paymentsUrl: string;
  clock?: Clock;
  logger?: LoggerOption;
  logLevel?: LogLevel;
  /**
   * Delay after the first failure, doubled after each next one. The default "1m" gives the seed's
   * schedule: 1, 2, 4, 8, 16 minutes between the six attempts.
   */
  retryBase?: Duration;
  concurrency?: number;
  onPaymentEvent?: (event: PaymentEvent) => void;
  handleSignals?: boolean;
  /**
   * When seed 004's scheduler runs: its production cron "0 0 * * *" (daily at midnight UTC) by
   * default; the demo uses `{ every: "2s" }`. Keys make a repeated or missed run harmless.
   */
  schedulerCadence?: { cron: string } | { every: Duration };
  /** Called with each scheduler run's counts and batch. */
  onScheduled?: (run: ScheduledRun) => void;
  /** Called when a run's summary job has recorded its totals. */
  onRunSummary?: (run: PaymentRun) => void;
  /** How long the admin's "charge now" waits for the charge before answering 504; default "30s". */
  chargeTimeout?: Duration;
};

export interface SubscriptionsApp {
  tw: Tickwork;
  db: AppDatabase;
  payments: Queue<PaymentPayload>;
  /** Each run's summary job: records the run's totals once every payment of its batch ended. */
  runs: Queue<RunPayload>;
  /** The scheduler, at the engine's current time. */
  scheduleDuePayments(): Promise<ScheduledRun>;
  /** The operators' HTTP API ("charge now"): serve it with `listen` from admin.ts, or mount it in your app. */
  admin: Hono;
  stop(): Promise<void>;
}

/** Seed 004's system on tickwork: the subscriptions tables, the payments queue and its handler. */
export async function createSubscriptionsApp(options: SubscriptionsAppOptions): Promise<SubscriptionsApp> {
  const host = await hostExample(options, CREATE_TABLES, { clock: options.clock, logger: options.logger, logLevel: options.logLevel, handleSignals: options.handleSignals ?? false });
  const { tw, db } = host;
  const payments = tw.queue<PaymentPayload>(PAYMENTS_QUEUE, {
    handler: paymentHandler({ db, paymentsUrl: options.paymentsUrl, now: () => tw.clock.now(), onEvent: options.onPaymentEvent }),
    concurrency: options.concurrency ?? 5,
    lease: "1m",
    // A charge that hangs is abandoned and retried; the idempotency key makes the retry safe.
    timeout: "30s",
    retry: { maxAttempts: MAX_ATTEMPTS, backoff: exponential({ base: options.retryBase ?? "1m", factor: 2 }) },
  });
  const runs = tw.queue<RunPayload>(RUNS_QUEUE, {
    handler: runSummaryHandler({ db, now: () => tw.clock.now(), onSummary: options.onRunSummary }),
    lease: "1m",
  });
  // Seed 004's scheduler as a periodic task: one process runs each slot, and the claims (one per
  // subscription and due date) make a missed, repeated or manual run queue nothing twice.
  tw.task(SCHEDULER_TASK, {
    ...(options.schedulerCadence ?? { cron: "0 0 * * *" }),
    run: async (ctx): Promise<ScheduleResult> => {
      const { batch, ...counts } = await scheduleDuePayments({ db, tw, now: tw.clock.now() });
      options.onScheduled?.({ ...counts, batch });
      if (ctx.missed > 0) ctx.logger.warn("subscriptions.scheduler_missed_runs", { missed: ctx.missed, note: "due subscriptions were caught up by this run" });
      // The task's last result stays small: the counts, not the batch's job ids.
      return counts;
    },
  });
  return {
    tw,
    db,
    payments,
    runs,
    scheduleDuePayments: () => scheduleDuePayments({ db, tw, now: tw.clock.now() }),
    admin: createAdminApi({ tw, db, payments, chargeTimeout: options.chargeTimeout ?? "30s" }),
    stop: () => host.close(),
  };
}
