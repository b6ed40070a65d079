import type { Duration } from "../core/duration.js";
import type { Logger } from "../core/logger.js";

export type JobStatus = "pending" | "running" | "succeeded" | "failed" | "cancelled";

export const JOB_STATUSES: readonly JobStatus[] = ["pending", "running", "succeeded", "failed", "cancelled"];

/** A job as users see it. Times are epoch milliseconds. */
export interface Job<P = unknown> {
  id: string;
  queue: string;
  payload: P;
  key: string | null;
  /** The job's group (a tenant, an account): its queue's group limits and fair share apply per group. */
  group: string | null;
  status: JobStatus;
  /** Lower runs first; default 0. */
  priority: number;
  runAt: number;
  /** Attempts started so far, including the one running now. */
  attempts: number;
  /**
   * Attempts the job gets: its own `maxAttempts` if it set one at enqueue; otherwise the queue's
   * `retry.maxAttempts` as declared by the worker that claims it (written at the claim: until a
   * worker has claimed it, this shows the enqueuing process's declaration).
   */
  maxAttempts: number;
  lastError: string | null;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  /** What the handler returned (JSON), once the job succeeded; null before, or if it returned nothing. */
  result: unknown;
  /** The last value the handler reported with `ctx.progress` (JSON); null if it never did. */
  progress: unknown;
  /** Times the job was put back for later without spending an attempt (`SnoozeError`, `ctx.snooze`). */
  snoozes: number;
  /**
   * Every attempt, oldest first: the last HISTORY_KEPT before the current one, and the current one
   * (running, or how the job ended). A snoozed attempt is listed, though it did not count.
   */
  history: JobAttempt[];
  /** The flow's parent this job is a child of (`enqueueFlow`, `tw.batch`); null if none. */
  parentId: string | null;
  /**
   * A flow parent's children: how many it has, how many have not ended yet (it runs once none is
   * left), and how many failed for good; null for a job without children.
   */
  children: { total: number; pending: number; failed: number } | null;
  /** While it runs: the worker holding it (`<instanceId>/<queue>`) and until when, unless renewed; null otherwise. */
  lease: { workerId: string; until: number } | null;
}

/** A child as its parent reads it (`ctx.childResults()`). */
export interface ChildResult {
  id: string;
  queue: string;
  status: JobStatus;
  /** Its handler's result once it succeeded; null otherwise. */
  result: unknown;
  /** Its last error once it failed for good or was cancelled; null otherwise. */
  error: string | null;
}

/** One attempt of a job, as its history keeps it. */
export interface JobAttempt {
  /** The attempt's number (a snoozed attempt shares its number with the one that ran after it). */
  attempt: number;
  startedAt: number;
  /** Null while it runs. */
  finishedAt: number | null;
  outcome: "running" | "succeeded" | "failed" | "snoozed" | "lease_expired" | "cancelled";
  error: string | null;
}

/** What `enqueue` returns: the job, and whether it already existed under the same key. */
export type EnqueuedJob<P = unknown> = Job<P> & { duplicate: boolean };

export interface JobContext {
  /** This attempt's number, from 1. */
  attempt: number;
  /**
   * Aborted when this worker no longer owns the job: its lease was lost, it was cancelled, or a
   * graceful shutdown ran out of time. A handler doing long work should pass it to `fetch` and the like.
   */
  signal: AbortSignal;
  logger: Logger;
  /**
   * Records how far the attempt got (any JSON value; the last one wins). Writes are throttled (one
   * per second per job at most, the last value always written before the job settles); callers
   * waiting on the job (`tw.jobs.wait(id, { onProgress })`) see each one written. Never throws: a
   * value that is not JSON, or too large, is refused and logged (`job.progress_refused`).
   */
  progress(value: unknown): void;
  /**
   * Return its value (`return ctx.snooze("2m")`) to put the job back for later without spending an
   * attempt; the same as throwing `new SnoozeError("2m")`.
   */
  snooze(delay: Duration): Snooze;
  /** A flow parent's children, in the order they were given, with their results (for a job without children: none). */
  childResults(): Promise<ChildResult[]>;
}

/**
 * A batch handler (a queue with `batch`): gets up to `batch.size` jobs at once and returns one entry
 * per job, in order: its result, an Error for a job that failed (the others succeed), or a `Snooze`;
 * nothing for all succeeded with no result. A throw fails every job of the batch.
 */
export type BatchHandler<P = unknown> = (jobs: Job<P>[], ctx: BatchContext) => unknown | Promise<unknown>;

export interface BatchContext {
  /** Aborted when any job of the batch is no longer this worker's, or the batch times out. */
  signal: AbortSignal;
  logger: Logger;
}

/** A job put back for later without spending an attempt (what `ctx.snooze` returns). */
export class Snooze {
  constructor(readonly delayMs: number) {}
}

export type JobHandler<P = unknown> = (job: Job<P>, ctx: JobContext) => unknown | Promise<unknown>;
