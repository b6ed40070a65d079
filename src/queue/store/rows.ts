import type { ChildResult, Job, JobAttempt, JobStatus } from "../job.js";
import type { JobFields } from "./store.js";
import { payloadExpression } from "./payloads.js";

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
  /** Absent in rows read by statements that name their columns. */
  result?: unknown;
  progress?: unknown;
  snoozes?: number;
  history?: unknown;
  waited?: boolean | number;
  /** The enqueue's W3C Trace Context (see core/tracing.ts); null when it was not traced. */
  trace_context?: string | null;
  /** SQLite: the payload kept out of the row (see queue/store/payloads.ts), null or absent when the row holds it. */
  stored_payload?: string | null;
  /** A claim's snoozes, history, parent_id, children_total, children_waiting, children_failed and trace_context (see claimedColumns). */
  extra?: unknown;
  parent_id?: number | string | null;
  worker_id?: string | null;
  lease_until?: number | string | null;
  children_total?: number;
  children_waiting?: number;
  children_failed?: number;
}

/**
 * The columns a claim returns: what a handler's job shows, without what a claimed job cannot have yet
 * (a result, waiters, the lease the claim itself set) or does not need (the progress of an earlier
 * attempt). The columns most jobs hold at their defaults (snoozes, history, flow links) come folded
 * into one, `extra`, null for such jobs: every column a claim returns is an object property per job,
 * and at tens of thousands of jobs a second six more cost SQLite a tenth of its throughput. The trace
 * context is folded there too: only an engine with a tracer writes one, so untraced jobs pay nothing.
 */
export function claimedColumns(dialect: "sqlite" | "postgres", prefix = ""): string {
  const c = (name: string) => `${prefix}${name}`;
  // On SQLite the payload column itself brings a payload kept out of the row: no column more per job.
  const payload = dialect === "sqlite" ? `${payloadExpression(prefix ? prefix.slice(0, -1) : "tickwork_jobs", c("payload"))} AS payload` : c("payload");
  const plain = ["id", "queue", "key", "group_key", "status", "priority", "run_at", "attempts", "max_attempts", "last_error", "created_at", "started_at", "finished_at"];
  const array = dialect === "sqlite" ? `json_array(${c("snoozes")}, json(${c("history")}), ${c("parent_id")}, ${c("children_total")}, ${c("children_waiting")}, ${c("children_failed")}, ${c("trace_context")})`
    : `json_build_array(${c("snoozes")}, ${c("history")}, ${c("parent_id")}, ${c("children_total")}, ${c("children_waiting")}, ${c("children_failed")}, ${c("trace_context")})`;
  return `${plain.map(c).join(", ")}, ${payload},
    CASE WHEN ${c("snoozes")} = 0 AND ${c("history")} IS NULL AND ${c("parent_id")} IS NULL AND ${c("children_total")} = 0 AND ${c("trace_context")} IS NULL THEN NULL ELSE ${array} END AS extra`;
}

/** Attempts a job's history keeps before its current one: enough to read a pattern, bounded so a job that snoozes all day stays small. */
export const HISTORY_KEPT = 20;

/** Maps a row to a Job; `payloadIsText` for SQLite, where the payload column is JSON text. */
export function toJob(row: JobRow, payloadIsText: boolean): Job {
  if (row.extra !== undefined) unfold(row);
  const history = row.history == null ? [] : typeof row.history === "string" ? (JSON.parse(row.history) as JobAttempt[]) : (row.history as JobAttempt[]);
  const job: Job = {
    id: String(row.id),
    queue: row.queue,
    payload: payloadIsText ? JSON.parse(row.stored_payload ?? (row.payload as string)) : row.payload,
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
    // Both absent from a claimed row (see CLAIMED_COLUMNS) and null for most others.
    result: row.result == null ? null : payloadIsText ? JSON.parse(row.result as string) : row.result,
    progress: row.progress == null ? null : payloadIsText ? JSON.parse(row.progress as string) : row.progress,
    snoozes: row.snoozes ?? 0,
    history,
    parentId: row.parent_id == null ? null : String(row.parent_id),
    children: row.children_total ? { total: row.children_total, pending: row.children_waiting ?? 0, failed: row.children_failed ?? 0 } : null,
    lease: row.status === "running" && row.worker_id != null && row.lease_until != null ? { workerId: row.worker_id, until: Number(row.lease_until) } : null,
  };
  const current = currentAttempt(job);
  if (current) history.push(current);
  if (row.trace_context) enqueueContexts.set(job, row.trace_context);
  return job;
}

/**
 * The trace context each job read or written here was enqueued under, for its run's span to link to.
 * Kept beside the job rather than on it: it is the engine's plumbing, not part of the job users see
 * (nor of the admin API's JSON). Only traced jobs have an entry.
 */
const enqueueContexts = new WeakMap<Job, string>();

/** The W3C Trace Context of the enqueue that created `job`, if that enqueue was traced. */
export function enqueueTraceContext(job: Job): string | undefined {
  return enqueueContexts.get(job);
}

/** A claimed row's folded columns, back where toJob reads them (all at their defaults when null). */
function unfold(row: JobRow): void {
  if (row.extra === null) return;
  const [snoozes, history, parent, total, waiting, failed, traceContext] = (typeof row.extra === "string" ? JSON.parse(row.extra) : row.extra) as [number, unknown, number | string | null, number, number, number, string | null];
  row.snoozes = snoozes;
  row.history = history;
  row.parent_id = parent;
  row.children_total = total;
  row.children_waiting = waiting;
  row.children_failed = failed;
  row.trace_context = traceContext;
}

/**
 * The attempt a row records in its own columns (the last one started), if it is not over and put
 * back: running, or how the job ended. A pending row has none (its last attempt, if any, is in the
 * stored history).
 */
function currentAttempt(job: Job): JobAttempt | null {
  if (job.startedAt === null || job.status === "pending") return null;
  const outcome = job.status === "failed" && job.lastError === LEASE_EXPIRED_ERROR ? "lease_expired" : job.status;
  return { attempt: job.attempts, startedAt: job.startedAt, finishedAt: job.finishedAt, outcome, error: job.status === "failed" ? job.lastError : null };
}

/**
 * Sets when a held job's current attempt started (null: held, not started yet), as its row now says:
 * a running job's history ends with its current attempt once started.
 */
export function setStarted(job: Job, at: number | null): void {
  const last = job.history.at(-1);
  if (last && last.outcome === "running" && last.attempt === job.attempts) job.history.pop();
  job.startedAt = at;
  const current = currentAttempt(job);
  if (current) job.history.push(current);
}

/**
 * The job a row just written is, built from what was written rather than read back: pending, or
 * running its first attempt when it was written claimed (a hand-off).
 */
export function newJob<P>(id: string, queue: string, row: JobFields, now: number, claimed: boolean, payload: P): Job<P> {
  const job: Job<P> = {
    id, queue, payload, key: row.key, group: row.group ?? null, status: claimed ? "running" : "pending", priority: row.priority, runAt: row.runAt,
    attempts: claimed ? 1 : 0, maxAttempts: row.maxAttempts, lastError: null, createdAt: now, startedAt: claimed ? now : null, finishedAt: null,
    result: null, progress: null, snoozes: 0, history: claimed ? [{ attempt: 1, startedAt: now, finishedAt: null, outcome: "running", error: null }] : [],
    parentId: null, children: null, lease: null,
  };
  if (row.traceContext) enqueueContexts.set(job, row.traceContext);
  return job;
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
    // A counter row at zero stays behind once its jobs are gone; a queue with no job is not listed.
    if (Number(row.n) === 0) continue;
    let counts = byQueue.get(row.queue);
    if (!counts) byQueue.set(row.queue, (counts = { pending: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 }));
    counts[row.status] = Number(row.n);
  }
  // By queue name, whatever order the store's statement gave them in.
  return [...byQueue].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([queue, counts]) => ({ queue, counts }));
}

/** A child's row as `childResults` reads it. */
export interface ChildRow {
  id: number | string;
  queue: string;
  status: JobStatus;
  result: unknown;
  last_error: string | null;
}

export function toChildResult(row: ChildRow, payloadIsText: boolean): ChildResult {
  const result = row.result == null ? null : payloadIsText ? JSON.parse(row.result as string) : row.result;
  const ended = row.status === "failed" || row.status === "cancelled";
  return { id: String(row.id), queue: row.queue, status: row.status, result, error: ended ? (row.last_error ?? row.status) : null };
}
