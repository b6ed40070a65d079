import { z } from "zod";
import { exponential, type BackoffPolicy } from "../core/backoff.js";
import { INT32_MAX, checkInstant, checkInt, checkText, preview } from "../core/bounds.js";
import { toMs, type Duration } from "../core/duration.js";
import { InvalidInputError } from "../core/errors.js";
import { durationMs, fn, parseOptions } from "../core/options.js";
import type { Job, JobHandler } from "./job.js";
import type { NewJobRow, SqlClient } from "./store.js";
import { serialiseJson } from "../core/json.js";
import { instantOf } from "../core/time.js";

const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
const MAX_KEY_LENGTH = 255;
const ENQUEUE_KEYS = new Set(["payload", "key", "runAt", "delay", "priority", "maxAttempts", "tx"]);
/**
 * A timer's delay is a signed 32-bit count of milliseconds (about 24.8 days): a longer attempt
 * timeout could not be timed, and would fire early.
 */
const MAX_TIMEOUT_MS = INT32_MAX;

const queueOptionsSchema = z
  .object({
    handler: fn<JobHandler>("a handler (job, ctx) => result").optional(),
    /** Jobs this process runs at once for this queue. */
    concurrency: z.number().int().min(1).max(10_000).default(1),
    /**
     * How long a claimed job stays owned without a heartbeat. Heartbeats renew it every quarter of
     * it, so a job whose worker died returns to pending within about this long (plus one rescue pass).
     */
    lease: durationMs.default(20_000).refine((ms) => ms >= 1_000, "the lease must be at least 1s"),
    /** An attempt running longer than this fails (and its signal is aborted). At most 2147483647 ms (about 24.8 days). */
    timeout: durationMs.refine((ms) => ms <= MAX_TIMEOUT_MS, `the timeout must be at most ${MAX_TIMEOUT_MS} ms (about 24.8 days), the longest a timer can wait`).optional(),
    retry: z
      .object({
        /**
         * Attempts a job gets, its first included. The declaration of the process whose worker runs
         * the job is the one that applies (it is written to the job when that worker claims it),
         * unless the job set its own `maxAttempts` at enqueue, which then always wins.
         */
        maxAttempts: z.number().int().min(1).max(1_000_000).default(5),
        backoff: fn<BackoffPolicy>("exponential(...), schedule([...]) or a function (failures) => ms").optional(),
      })
      .strict()
      .default({ maxAttempts: 5 }),
    /** At most `max` job starts per `per`, in each process. */
    rateLimit: z
      .object({ max: z.number().int().min(1).max(INT32_MAX), per: durationMs.refine((ms) => ms >= 1, "the window must be at least 1 ms") })
      .strict()
      .optional(),
    /**
     * Called once a job is recorded `failed` (last attempt, PermanentJobError, or a lapsed lease on
     * the last attempt found by this engine's rescue). Best effort: a crash between the write and the
     * call skips it, so work that must happen should read failed jobs (`tw.jobs.list`) instead.
     */
    onFailed: fn<FailedHook>("a function (job, error) => void").optional(),
    /**
     * Jobs claimed per round trip. Default: adaptive, starting at twice the concurrency (the extra
     * half is prefetch) and doubling, up to 16 times the concurrency (at least 500, at most 1,000),
     * while workers sit idle waiting for a claim (fast jobs), which also keep a second batch on its
     * way while one runs; slow jobs keep it small, so prefetch never hoards work other processes
     * could run.
     */
    batchSize: z.number().int().min(1).max(10_000).optional(),
  })
  .strict();

export type FailedHook<P = unknown> = (job: Job<P>, error: string) => unknown;

export type QueueOptions<P = unknown> = Omit<z.input<typeof queueOptionsSchema>, "handler" | "onFailed"> & {
  handler?: JobHandler<P>;
  onFailed?: FailedHook<P>;
};

export interface QueueConfig {
  name: string;
  handler: JobHandler | undefined;
  onFailed: FailedHook | undefined;
  concurrency: number;
  leaseMs: number;
  timeoutMs: number | undefined;
  maxAttempts: number;
  backoff: BackoffPolicy;
  rateLimit: { max: number; perMs: number } | undefined;
  /** Jobs claimed per round trip (the starting size when adaptive). */
  batchSize: number;
  /** No batchSize was given: the worker grows its batch while it starves for jobs (see QueueWorker). */
  adaptiveBatch: boolean;
}

/** The library's default retry delays: 1s, 2s, 4s... up to 1h, with equal jitter. */
const defaultBackoff = exponential({ base: "1s", factor: 2, max: "1h", jitter: "equal" });

export function parseQueueOptions(name: string, options: unknown): QueueConfig {
  if (typeof name !== "string" || !QUEUE_NAME.test(name)) {
    throw new InvalidInputError(`queue name ${preview(name, 130)} is invalid: use 1-128 letters, digits, "_", ".", ":" or "-", starting with a letter or digit`);
  }
  const o = parseOptions(queueOptionsSchema, options, `queue "${name}"`);
  return {
    name,
    handler: o.handler,
    onFailed: o.onFailed,
    concurrency: o.concurrency,
    leaseMs: o.lease,
    timeoutMs: o.timeout,
    maxAttempts: o.retry.maxAttempts,
    backoff: o.retry.backoff ?? defaultBackoff,
    rateLimit: o.rateLimit ? { max: o.rateLimit.max, perMs: o.rateLimit.per } : undefined,
    batchSize: o.batchSize ?? 2 * o.concurrency,
    adaptiveBatch: o.batchSize === undefined,
  };
}

export interface EnqueueOptions {
  /** Dedupe key: while a pending or running job of this queue holds it, enqueue returns that job. */
  key?: string;
  /** When the job becomes due (Date or epoch ms); default now. Past times run at once. */
  runAt?: Date | number;
  /** Alternative to `runAt`: due after this long. */
  delay?: Duration;
  /** Lower runs first; default 0. */
  priority?: number;
  /**
   * This job's own number of attempts (1 to 2147483647), kept whichever process runs it. Without it
   * the job follows the queue's `retry.maxAttempts` as declared by the worker that runs it.
   */
  maxAttempts?: number;
  /** Your `pg` client inside a transaction: the job exists only if your transaction commits. */
  tx?: SqlClient;
}

export interface EnqueueItem<P = unknown> extends Omit<EnqueueOptions, "tx"> {
  payload: P;
}

/**
 * Validates one job by hand rather than through zod: this runs once per enqueued job, on the
 * hot path of bulk enqueue. Every value is held to what both stores can keep (see core/bounds.ts),
 * so a bad one is refused here, naming the field and the bound, before any row is written.
 */
export function toNewJobRow(queue: QueueConfig, payload: unknown, options: EnqueueOptions, now: number, where: string): NewJobRow {
  const fail = (message: string): never => {
    throw new InvalidInputError(`${where}: ${message}`);
  };
  const field = (name: string) => `${where}: ${name}`;
  for (const name of Object.keys(options)) if (!ENQUEUE_KEYS.has(name)) fail(`unknown option "${name}" (expected ${[...ENQUEUE_KEYS].join(", ")})`);
  const { key = null, runAt, delay, priority = 0, maxAttempts } = options;
  if (key !== null) checkText(key, field("key"), { max: MAX_KEY_LENGTH });
  checkInt(priority, field("priority"), { min: -INT32_MAX, max: INT32_MAX });
  if (maxAttempts !== undefined) checkInt(maxAttempts, field("maxAttempts"), { min: 1, max: INT32_MAX });
  let at = now;
  if (runAt !== undefined && delay !== undefined) fail("give runAt or delay, not both");
  if (runAt !== undefined) {
    at = checkInstant(instantOf(runAt) ?? fail(`runAt must be a Date or epoch milliseconds, got ${preview(runAt)}`), field("runAt"));
  } else if (delay !== undefined) {
    if (typeof delay === "number" && delay < 0) fail(`delay must not be negative, got ${delay}`);
    let ms = 0;
    try {
      ms = toMs(delay);
    } catch (error) {
      fail(`delay: ${(error as Error).message}`);
    }
    at = checkInstant(now + ms, field("runAt (now + delay)"));
  }
  return {
    payload: serialiseJson(payload, { where }),
    key,
    priority,
    runAt: Math.round(at),
    maxAttempts: maxAttempts ?? queue.maxAttempts,
    maxAttemptsFromQueue: maxAttempts === undefined,
  };
}
