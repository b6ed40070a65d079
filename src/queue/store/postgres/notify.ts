import { newJob, setStarted } from "../rows.js";
import type { HandedJobs, NewJobRow } from "../store.js";

/**
 * Notifications go to every connection of the database that LISTENs, whatever its schema, while each
 * schema holds a tickwork of its own: every payload starts with the sender's schema and a slash
 * (SCOPED), and a listener takes only its own schema's (see the listener in store/postgres.ts).
 */
export const SCOPED = (payload: string) => `current_schema() || '/' || ${payload}`;

/** The channel enqueues notify on; its payload is the queue name. */
export const JOBS_CHANNEL = "tickwork_jobs";

/** The channel awaited jobs' ends and progress are signalled on; its payload is their ids, comma-separated. */
export const JOB_EVENTS_CHANNEL = "tickwork_job_events";

/** The channel a worker is sent the ids of jobs handed to it by another process's enqueue (see handoffPayload). */
export const HANDOFFS_CHANNEL = "tickwork_handoffs";

/** Sends a statement on the connection that LISTENs for this process (see PostgresQueueStore in queue/store/postgres/store.ts). */
export type ListenerQuery = (sql: string, params: unknown[]) => Promise<unknown>;

/** A job an insert wrote claimed by another process's worker. */
export type Handed = { workerId: string; id: string; row: NewJobRow; leaseUntil: number; maxAttempts: number };

/** A notification's payload: 8,000 bytes at most, with room to spare. */
const NOTIFY_BYTES = 7_900;

/**
 * A hand-off's notification, JSON: the queue, the worker's id, the numbers of the slots taken (one
 * per job, and one more per row that lost to a live job's key), and the jobs themselves (the payload
 * as the enqueue wrote it, then the fields a start needs), so the worker starts them without reading
 * them; when they do not fit in a notification, their ids, which the worker reads.
 */
export function handoffPayload(queue: string, workerId: string, now: number, jobs: Handed[], slots: string[]): string {
  const head = `{"q":${JSON.stringify(queue)},"w":${JSON.stringify(workerId)},"s":[${slots.join(",")}],`;
  const whole = `${head}"at":${now},"j":[${jobs
    .map(({ id, row, maxAttempts }) => `[${JSON.stringify([id, row.key, row.priority, row.runAt, maxAttempts, row.traceContext ?? null]).slice(1, -1)},${row.payload}]`)
    .join(",")}]}`;
  if (whole.length * 3 <= NOTIFY_BYTES || new TextEncoder().encode(whole).length <= NOTIFY_BYTES) return whole;
  return `${head}"i":${JSON.stringify(jobs.map((j) => j.id))}}`;
}

/** Reads a hand-off's notification; null if it is not one. */
export function parseHandoff(payload: string): HandedJobs | null {
  try {
    const message = JSON.parse(payload) as { q: string; w: string; s: number[]; at?: number; j?: [string, string | null, number, number, number, string | null, unknown][]; i?: string[] };
    if (!message.j) return { workerId: message.w, slots: message.s, ids: message.i ?? [] };
    const jobs = message.j.map(([id, key, priority, runAt, maxAttempts, traceContext, payload]) => {
      const job = newJob(id, message.q, { key, priority, runAt, maxAttempts, ...(traceContext ? { traceContext } : {}) }, message.at!, true, payload);
      // Written running under the worker's lease, not started: the worker marks it as it starts it.
      setStarted(job, null);
      return job;
    });
    return { workerId: message.w, slots: message.s, ids: jobs.map((job) => job.id), jobs };
  } catch {
    return null;
  }
}

/**
 * A pause's notification on the jobs channel: the queue, " paused", and the group if one was paused.
 * A queue name has no space (see QUEUE_NAME), so it never reads as a queue's wake-up; a group may
 * hold any character, so it is the rest of the payload.
 */
export function pausePayload(queue: string, group: string | null): string {
  return group === null ? `${queue} paused` : `${queue} paused ${group}`;
}

/** Reads a pause's notification; null if the payload is a queue's wake-up. */
export function parsePause(payload: string): { queue: string; group: string | null } | null {
  const at = payload.indexOf(" paused");
  if (at < 0) return null;
  const rest = payload.slice(at + " paused".length);
  if (rest !== "" && !rest.startsWith(" ")) return null;
  return { queue: payload.slice(0, at), group: rest === "" ? null : rest.slice(1) };
}

/**
 * A notification on its own, committed without waiting for the WAL flush. A notifying transaction
 * holds a cluster-wide lock from the start of its commit to the end, so one that waits for the flush
 * holds up every other notifier (and every enqueue that notified in its insert) for as long; and a
 * notification writes nothing worth the wait: lost in a crash, it costs the listeners one poll.
 * `set_config(..., true)` sets it for this statement's own transaction, commit included.
 */
export const NOTIFY = `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, ${SCOPED("$2")})`;
