import * as z from "zod";
import { exponential, type BackoffPolicy } from "../core/backoff.js";
import { DEFAULT_PAYLOAD_BYTES, INT32_MAX, MAX_PAYLOAD_BYTES, checkInstant, checkInt, checkText, preview } from "../core/bounds.js";
import { toMs, type Duration } from "../core/duration.js";
import { InvalidInputError, PayloadTooLargeError, describe } from "../core/errors.js";
import { durationMs, fn, parseOptions } from "../core/options.js";
import type { BatchHandler, Job, JobHandler } from "./job.js";
import type { ClaimLimits, JobFields, NewJobRow, SqlClient } from "./store/store.js";
import type { KeyMode } from "./store/store.js";
import { Limiter, bucketOf, burstWithinMax, rateFields, rateSchema } from "./flow-control/limiter.js";
import { checkJson, stringifyChecked, utf8Length } from "../core/json.js";
import { instantOf } from "../core/time.js";

const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
const MAX_KEY_LENGTH = 255;
const ENQUEUE_KEYS = new Set(["payload", "key", "group", "runAt", "delay", "priority", "maxAttempts", "tx", "dedupe", "debounce", "throttle", "unique"]);
/** A group key's longest length, as a job key's: both are indexed with the queue name. */
export const MAX_GROUP_LENGTH = 255;
/**
 * A timer's delay is a signed 32-bit count of milliseconds (about 24.8 days): a longer attempt
 * timeout could not be timed, and would fire early.
 */
const MAX_TIMEOUT_MS = INT32_MAX;

/** maxResultBytes' ceiling: a Durable Object's row holds at most 2 MB, the job's other columns included. */
export const MAX_RESULT_BYTES = 1024 * 1024;

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
    /**
     * At most `max` job starts per `per`. `scope: "process"` (the default) counts in each process, in
     * fixed windows, at no cost per claim; `scope: "global"` keeps one budget in the store for every
     * process, as a smooth limiter (see `burst`).
     */
    rateLimit: burstWithinMax(
      rateFields
        .extend({ scope: z.enum(["process", "global"]).default("process") })
        .strict()
        .refine((r) => r.burst === undefined || r.scope === "global", { message: 'burst needs scope: "global"', path: ["burst"] }),
    ).optional(),
    /** At most this many jobs of the queue running at once, across every process. */
    globalConcurrency: z.number().int().min(1).max(1_000_000).optional(),
    /**
     * The group of each job (a tenant, an account): a function of the payload, or `true` when every
     * enqueue names its `group`. Setting it, `groupConcurrency` or `groupRateLimit` makes the queue
     * grouped: every job has a group, and claims take the groups round-robin.
     */
    group: z.union([z.literal(true), fn<(payload: unknown) => string>("a function (payload) => group key")]).optional(),
    /** At most this many jobs of one group running at once, across every process (1: one at a time per group). */
    groupConcurrency: z.number().int().min(1).max(1_000_000).optional(),
    /** Each group's own shared budget of starts, like a global `rateLimit` per group. */
    groupRateLimit: rateSchema.optional(),
    /**
     * Groups' shares of each round-robin round, `{ [group]: weight }` (integers from 1 to 100; every
     * group not named weighs 1). Plain data, because the claim that reads it runs in the store.
     */
    groupWeights: z
      .record(z.string().min(1).max(255), z.number().int().min(1).max(100))
      .refine((w) => Object.keys(w).length <= 10_000, "at most 10,000 weighted groups")
      .optional(),
    /** A shared budget (`tw.limiter(...)`) that every job start of this queue takes a token of. */
    limiter: z.custom<Limiter>((v) => v instanceof Limiter, "expected a limiter from tw.limiter(name, { max, per })").optional(),
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
    /**
     * The largest result a handler may return, and the largest `ctx.progress` value, as UTF-8 JSON
     * (default 64 KiB, at most 1 MiB: a Durable Object's row holds 2 MB). A larger result fails the
     * attempt (ResultTooLargeError); a larger progress value is not written.
     */
    maxResultBytes: z.number().int().min(1).max(MAX_RESULT_BYTES).default(64 * 1024),
    /**
     * The largest payload a job of this queue may carry, as UTF-8 JSON (default 1 MiB; at most 64 MiB,
     * and 1.5 MiB on a Durable Object, whose rows hold 2 MB). A larger one is refused before anything
     * is written (PayloadTooLargeError, naming the payload and its size): keep large data elsewhere and
     * enqueue a reference.
     */
    maxPayloadBytes: z.number().int().min(1).max(MAX_PAYLOAD_BYTES).default(DEFAULT_PAYLOAD_BYTES),
    /**
     * Times a job may snooze (SnoozeError, ctx.snooze, an HTTP 429) before a further snooze fails its
     * attempt instead (SnoozeLimitError); 0 turns snoozing into plain failed attempts. Default 100.
     */
    maxSnoozes: z.number().int().min(0).max(1_000_000).default(100),
    /**
     * Hands the handler up to `size` jobs at once (one call for many items), waiting at most `wait`
     * (default 0: what is at hand) to fill a batch; `concurrency` then counts batches. The handler is
     * a BatchHandler: it returns one outcome per job, so one bad item does not retry the others.
     */
    batch: z.object({ size: z.number().int().min(1).max(1_000), wait: durationMs.refine((ms) => ms <= 3_600_000, "the wait must be at most an hour").default(0) }).strict().optional(),
  })
  .strict();

export type FailedHook<P = unknown> = (job: Job<P>, error: string) => unknown;

export type QueueOptions<P = unknown> = Omit<z.input<typeof queueOptionsSchema>, "handler" | "onFailed" | "group" | "batch"> & {
  handler?: JobHandler<P>;
  onFailed?: FailedHook<P>;
  group?: true | ((payload: P) => string);
  batch?: undefined;
};

/** A queue whose handler takes its jobs in batches (`batch: { size, wait }`). */
export type BatchQueueOptions<P = unknown> = Omit<QueueOptions<P>, "handler" | "batch"> & {
  batch: { size: number; wait?: Duration };
  handler: BatchHandler<P>;
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
  /** The per-process rate limit (`scope: "process"`); a global one is among `limits.buckets`. */
  rateLimit: { max: number; perMs: number } | undefined;
  /** Limits held in the store for every process; undefined: none, and claims stay the plain ones. */
  limits: ClaimLimits | undefined;
  /** Derives a job's group from its payload, for a grouped queue declared with `group: (payload) => key`. */
  groupOf: ((payload: unknown) => string) | undefined;
  /** Jobs claimed per round trip (the starting size when adaptive). */
  batchSize: number;
  /** No batchSize was given: the worker grows its batch while it starves for jobs (see QueueWorker). */
  adaptiveBatch: boolean;
  maxResultBytes: number;
  maxPayloadBytes: number;
  maxSnoozes: number;
  /** Jobs handed to the handler at once, and how long to wait to fill a batch; undefined: one job per call. */
  batch: { size: number; waitMs: number } | undefined;
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
    rateLimit: o.rateLimit?.scope === "process" ? { max: o.rateLimit.max, perMs: o.rateLimit.per } : undefined,
    limits: sharedLimits(name, o),
    groupOf: typeof o.group === "function" ? o.group : undefined,
    batchSize: o.batchSize ?? 2 * o.concurrency * (o.batch?.size ?? 1),
    adaptiveBatch: o.batchSize === undefined,
    maxResultBytes: o.maxResultBytes,
    maxPayloadBytes: o.maxPayloadBytes,
    maxSnoozes: o.maxSnoozes,
    batch: o.batch ? { size: o.batch.size, waitMs: o.batch.wait } : undefined,
  };
}

/** The limits a queue's options put in the store, or undefined when it has none (the plain claim). */
function sharedLimits(name: string, o: z.output<typeof queueOptionsSchema>): ClaimLimits | undefined {
  const grouped = o.group !== undefined || o.groupConcurrency !== undefined || o.groupRateLimit !== undefined;
  if (o.groupWeights && !grouped) throw new InvalidInputError(`queue "${name}": groupWeights needs a grouped queue (group, groupConcurrency or groupRateLimit)`);
  const buckets = [];
  if (o.rateLimit?.scope === "global") buckets.push(bucketOf(`queue:${name}`, o.rateLimit));
  if (o.limiter) buckets.push(o.limiter.spec);
  if (!grouped && buckets.length === 0 && o.globalConcurrency === undefined) return undefined;
  return {
    globalConcurrency: o.globalConcurrency,
    groupConcurrency: o.groupConcurrency,
    buckets,
    groupRate: o.groupRateLimit ? { intervalMs: o.groupRateLimit.per / o.groupRateLimit.max, burst: o.groupRateLimit.burst ?? 1 } : undefined,
    grouped,
    groupWeights: o.groupWeights,
  };
}

export interface EnqueueOptions {
  /** Dedupe key: while a pending or running job of this queue holds it, enqueue returns that job. */
  key?: string;
  /**
   * The job's group (a tenant, an account; 1-255 characters) on a grouped queue: its group limits and
   * fair share apply per group. Default: the queue's `group(payload)`.
   */
  group?: string;
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
  /**
   * What an enqueue does when its `key` is held by a live job: `"skip"` (the default) returns that job;
   * `"replace"` gives a pending holder this payload, run time and priority (a running one is returned
   * as it is).
   */
  dedupe?: "skip" | "replace";
  /** With `key`: the job runs once, this long after the last enqueue of the key (a pending holder takes the latest payload; a write that lands late never moves it back). Sets the run time: not with `runAt` or `delay`. */
  debounce?: Duration;
  /** With `key`: at most one job per key per this long; an enqueue within it gets that job back, whatever its status. */
  throttle?: Duration;
  /** With `key`: the key is held this long from the enqueue that took it, after the job finished too (`{ for: "1h" }`). */
  unique?: { for: Duration };
}

/** Longest period a key can be held for (debounce, throttle, unique): a year. */
const MAX_KEY_PERIOD_MS = 365 * 86_400_000;

/**
 * The mode of a keyed enqueue (see KeyMode), or null for a plain one. At most one of dedupe
 * "replace", debounce, throttle and unique; each needs a key.
 */
export function keyModeOf(options: EnqueueOptions, where: string): KeyMode | null {
  const { key, dedupe, debounce, throttle, unique } = options;
  const fail = (message: string): never => {
    throw new InvalidInputError(`${where}: ${message}`);
  };
  if (dedupe !== undefined && dedupe !== "skip" && dedupe !== "replace") fail(`dedupe must be "skip" or "replace", got ${preview(dedupe)}`);
  const given = [dedupe === "replace" && 'dedupe: "replace"', debounce !== undefined && "debounce", throttle !== undefined && "throttle", unique !== undefined && "unique"].filter((g): g is string => typeof g === "string");
  if (given.length === 0) return null;
  if (given.length > 1) fail(`${given.join(" and ")} do not go together: choose one way to treat a repeated key`);
  if (key === undefined || key === null) fail(`${given[0]} needs a key: it decides what a repeated enqueue of the same key does`);
  const period = (value: unknown, name: string): number => {
    let ms = 0;
    try {
      ms = toMs(value as Duration);
    } catch {
      fail(`${name} must be a duration ("30s", "5m", or ms), got ${preview(value)}`);
    }
    if (ms < 1 || ms > MAX_KEY_PERIOD_MS) fail(`${name} must be from 1 ms to a year, got ${ms} ms`);
    return Math.round(ms);
  };
  if (dedupe === "replace") return { kind: "replace" };
  if (debounce !== undefined) {
    // A debounced job runs `debounce` after the last enqueue of its key: a time of its own would be dropped.
    if (options.runAt !== undefined || options.delay !== undefined) fail(`debounce sets the run time (${options.runAt !== undefined ? "runAt" : "delay"} given too): the job runs debounce after the last enqueue of its key`);
    return { kind: "debounce", ms: period(debounce, "debounce") };
  }
  if (throttle !== undefined) return { kind: "window", ms: period(throttle, "throttle") };
  if (unique === null || typeof unique !== "object") return fail(`unique must be { for: duration }, got ${preview(unique)}`);
  return { kind: "window", ms: period(unique.for, "unique.for") };
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
  const fields = toJobFields(queue, payload, options, now, where);
  return { ...fields, payload: serialisePayload(queue, payload, () => where) };
}

/** A job's payload as the JSON text a store keeps, within its queue's maxPayloadBytes. */
export function serialisePayload(queue: QueueConfig, payload: unknown, where: () => string): string {
  const text = stringifyChecked(payload, () => ({ where: where() }));
  // No character is more than 3 bytes of UTF-8 (a pair of surrogates, 2 characters, is 4): most
  // payloads pass without being measured.
  if (text.length * 3 > queue.maxPayloadBytes) {
    const bytes = utf8Length(text);
    if (bytes > queue.maxPayloadBytes) throw new PayloadTooLargeError(`${where()}: payload`, bytes, queue.maxPayloadBytes, queue.name);
  }
  return text;
}

/** toNewJobRow without the serialisation, for rows serialised later, a slice at a time (see Queue). */
export function toJobFields(queue: QueueConfig, payload: unknown, options: EnqueueOptions, now: number, where: string): JobFields {
  const fail = (message: string): never => {
    throw new InvalidInputError(`${where}: ${message}`);
  };
  const field = (name: string) => `${where}: ${name}`;
  for (const name of Object.keys(options)) if (!ENQUEUE_KEYS.has(name)) fail(`unknown option "${name}" (expected ${[...ENQUEUE_KEYS].join(", ")})`);
  const { key = null, runAt, delay, priority = 0, maxAttempts } = options;
  if (key !== null) checkText(key, field("key"), { max: MAX_KEY_LENGTH });
  const group = groupOf(queue, payload, options.group, where);
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
  checkJson(payload, { where });
  return {
    key,
    group,
    priority,
    runAt: Math.round(at),
    maxAttempts: maxAttempts ?? queue.maxAttempts,
    maxAttemptsFromQueue: maxAttempts === undefined,
  };
}

/** A job's group: given at enqueue, or derived by the queue; required on a grouped queue, refused elsewhere. */
function groupOf(queue: QueueConfig, payload: unknown, given: unknown, where: string): string | null {
  const grouped = queue.limits?.grouped ?? false;
  if (given !== undefined) {
    if (!grouped) throw new InvalidInputError(`${where}: group needs a grouped queue: declare "${queue.name}" with group, groupConcurrency or groupRateLimit`);
    return checkText(given, `${where}: group`, { max: MAX_GROUP_LENGTH });
  }
  if (!grouped) return null;
  if (!queue.groupOf) throw new InvalidInputError(`${where}: group is required: queue "${queue.name}" is grouped and derives no group from the payload`);
  let derived: unknown;
  try {
    derived = queue.groupOf(payload);
  } catch (error) {
    throw new InvalidInputError(`${where}: the queue's group(payload) threw: ${(error as Error)?.message ?? describe(error)}`);
  }
  return checkText(derived, `${where}: group (from the queue's group(payload))`, { max: MAX_GROUP_LENGTH });
}
