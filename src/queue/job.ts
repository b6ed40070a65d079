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
}

export type JobHandler<P = unknown> = (job: Job<P>, ctx: JobContext) => unknown | Promise<unknown>;
