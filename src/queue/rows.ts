import type { Job, JobStatus } from "./job.js";
import type { JobFields } from "./store.js";

/** A `tickwork_jobs` row as either dialect returns it (PostgreSQL bigints arrive as strings). */
export interface JobRow {
  id: number | string;
  queue: string;
  payload: unknown;
  key: string | null;
  /** Absent in rows read by statements that name their columns. */
  group_key?: string | null;
  status: JobStatus;
  priority: number;
  run_at: number | string;
  attempts: number;
  max_attempts: number;
  last_error: string | null;
  created_at: number | string;
  started_at: number | string | null;
  finished_at: number | string | null;
}

/** Maps a row to a Job; `payloadIsText` for SQLite, where the payload column is JSON text. */
export function toJob(row: JobRow, payloadIsText: boolean): Job {
  return {
    id: String(row.id),
    queue: row.queue,
    payload: payloadIsText ? JSON.parse(row.payload as string) : row.payload,
    key: row.key,
    group: row.group_key ?? null,
    status: row.status,
    priority: row.priority,
    runAt: Number(row.run_at),
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    lastError: row.last_error,
    createdAt: Number(row.created_at),
    startedAt: row.started_at == null ? null : Number(row.started_at),
    finishedAt: row.finished_at == null ? null : Number(row.finished_at),
  };
}

/**
 * The job a row just written is, built from what was written rather than read back: pending, or
 * running its first attempt when it was written claimed (a hand-off).
 */
export function newJob<P>(id: string, queue: string, row: JobFields, now: number, claimed: boolean, payload: P): Job<P> {
  return {
    id, queue, payload, key: row.key, group: row.group ?? null, status: claimed ? "running" : "pending", priority: row.priority, runAt: row.runAt,
    attempts: claimed ? 1 : 0, maxAttempts: row.maxAttempts, lastError: null, createdAt: now, startedAt: claimed ? now : null, finishedAt: null,
  };
}

/** Claim order, applied in memory because UPDATE ... RETURNING does not promise one. */
export function byClaimOrder(a: Job, b: Job): number {
  return a.priority - b.priority || a.runAt - b.runAt || Number(a.id) - Number(b.id);
}

/** The message a rescued job keeps as its last error. */
export const LEASE_EXPIRED_ERROR = "lease expired: the worker running this attempt stopped renewing its lease (crashed or hung)";

/** Folds (queue, status, count) rows into one record per queue with every status present. */
export function foldCounts(rows: { queue: string; status: JobStatus; n: number | string }[]) {
  const byQueue = new Map<string, Record<JobStatus, number>>();
  for (const row of rows) {
    let counts = byQueue.get(row.queue);
    if (!counts) byQueue.set(row.queue, (counts = { pending: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 }));
    counts[row.status] = Number(row.n);
  }
  return [...byQueue].map(([queue, counts]) => ({ queue, counts }));
}
