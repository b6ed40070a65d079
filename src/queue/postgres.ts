import type { PgExecutor } from "../db/pg-executor.js";
import { FlowSql } from "./flow-sql.js";
import { QueueAnnouncer } from "./announcer.js";
import { KeyedSql } from "./keyed-sql.js";
import { FlowControlledStore } from "./flow-store.js";
import { HISTORY_KEPT, LEASE_EXPIRED_ERROR, claimedColumns, byClaimOrder, foldCounts, newJob, setStarted, toChildResult, toJob, type ChildRow, type JobRow } from "./rows.js";
import { endedChild, propagate, type EndedChild, type FlowEffects } from "./flow-tree.js";
import { retryEachGroup, retryGroups, retryInFlow, type RetryStatement } from "./flow-retry.js";
import { runBody, sqlTx } from "../db/sql-db.js";
import { PostgresSlotOffers } from "./postgres-offers.js";
import type { HandedJobs, InsertClaim, InsertResult, ListParams, NewJobRow, JobOutcome, QueueStore, RescuedJob, SettleResult, SlotOffers } from "./store.js";
import type { Job, JobStatus } from "./job.js";

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

/** Sends a statement on the connection that LISTENs for this process (see PostgresQueueStore.announceOn). */
export type ListenerQuery = (sql: string, params: unknown[]) => Promise<unknown>;

/** A row an insert answers: a job (with the worker it was handed to, if any), or a slot it took (id null). */
type Answered = { id: string | null; key: string | null; handedTo?: string | null; leaseUntil?: string | null; maxAttempts?: number; slot?: string | null };

/** A job an insert wrote claimed by another process's worker. */
type Handed = { workerId: string; id: string; row: NewJobRow; leaseUntil: number; maxAttempts: number };

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

/** A notification's payload is at most 8,000 bytes: ids go in chunks well within it. */
const IDS_PER_NOTIFY = 500;

const LIVE = "status IN ('pending', 'running')";
const KEY_FREE = `(j.key IS NULL OR NOT EXISTS (SELECT 1 FROM tickwork_jobs live
  WHERE live.queue = j.queue AND live.key = j.key AND live.${LIVE}))`;

// One statement per batch. The payloads travel as one binary parameter, cut back into rows by byte
// offset and length (see packPayloads); the other columns as arrays of numbers and short strings.
// As an array of texts (`json[]`), every quote of every payload was escaped into the array literal
// by the driver, and parsed back by the server: for payloads of a few KB that cost more than the rest
// of the enqueue. Groups ($11) travel as an empty array when no row has one: unnest pads a shorter
// array with NULLs; so do the waited flags ($12). Claimed rows (a hand-off to this process's idle
// worker) are written running under $13's lease until $14. Traced rows (an engine with a tracer) add
// their trace contexts as one more array, the last parameter; untraced ones keep the statement as it was.
const insertRows = (claimed: boolean, traced: boolean) => `
    INSERT INTO tickwork_jobs (queue, payload, key, status, priority, run_at, max_attempts, max_attempts_from_queue, group_key, waited, created_at${claimed ? ", attempts, worker_id, lease_until, started_at" : ""}${traced ? ", trace_context" : ""})
    SELECT $1, convert_from(substring($2::bytea FROM t.at FOR t.len), 'UTF8')::json, t.key, ${claimed ? "'running'" : "'pending'"},
           t.priority, t.run_at, t.max_attempts, t.from_queue, t.group_key, coalesce(t.waited, false), $3::bigint${claimed ? ", 1, $13, $14::bigint, $3::bigint" : ""}${traced ? ", t.trace_context" : ""}
    FROM unnest($4::int[], $5::int[], $6::text[], $7::int[], $8::bigint[], $9::int[], $10::boolean[], $11::text[], $12::boolean[]${traced ? `, $${claimed ? 15 : 13}::text[]` : ""})
         WITH ORDINALITY AS t(at, len, key, priority, run_at, max_attempts, from_queue, group_key, waited, ${traced ? "trace_context, " : ""}ord)
    ORDER BY t.ord
    ON CONFLICT DO NOTHING
    RETURNING id, key`;

/** The insert statement for a batch: notifying in it, quiet, or claimed (see insertRows); each with and without trace contexts. */
function insertStatement(kind: "notify" | "quiet" | "claimed", traced: boolean): string {
  const rows = insertRows(kind === "claimed", traced);
  // With the notify riding in the same statement, it fires exactly when (and if) the insert commits.
  // Nobody else is to run a claimed job, so nobody is notified.
  return kind === "notify"
    ? `
  WITH ins AS (${rows})
  SELECT ins.id::text AS id, ins.key FROM ins, (SELECT pg_notify('${JOBS_CHANNEL}', ${SCOPED("$1")})) AS notify`
    : `WITH ins AS (${rows}) SELECT ins.id::text AS id, ins.key FROM ins`;
}

/**
 * The insert of due rows outside a caller's transaction: each row takes a free slot an idle worker of
 * some process offers (tickwork_offers), while there are any, and is written running under that
 * worker's lease; the rest are written pending. A slot another enqueue is taking is passed over (SKIP
 * LOCKED), never waited for. A slot taken is marked so (until 0) rather than deleted: the table sees
 * thousands of takes a second and may never be vacuumed, and an update of a column no index holds
 * leaves nothing behind that the next read of the page does not clear. The inserted rows come first,
 * in order; then one row per slot taken (id null), whose numbers the worker is sent with the ids.
 * A handed row's lease runs from the offer's end, which the worker wrote on its own clock (its now
 * plus OFFER_MS at the last renewal), never from this process's clock: a producer whose clock is
 * behind would otherwise write leases that lapse at once, and the rescuer would run the jobs twice.
 * A handed row is written not started (started_at null): its worker marks it when its handler is about
 * to run, so a job handed to a worker that died before hearing of it gets its attempt back.
 * $13 is the number of rows, $14 a worker passed over ('' for none); traced rows add their contexts
 * as $15.
 */
const insertOffered = (traced: boolean) => `
  WITH picked AS (
    SELECT s.worker_id, s.slot, s.until, row_number() OVER () AS n FROM (
      SELECT worker_id, slot, until FROM tickwork_offers
      WHERE queue = $1 AND until >= $3 AND worker_id <> $14 AND NOT EXISTS (SELECT 1 FROM tickwork_queue_pauses WHERE queue = $1 AND group_key = '')
      LIMIT $13
      FOR UPDATE SKIP LOCKED
    ) s
  ), taken AS (
    UPDATE tickwork_offers o SET until = 0 FROM picked p WHERE o.queue = $1 AND o.worker_id = p.worker_id AND o.slot = p.slot
    RETURNING o.worker_id, o.slot, o.lease_ms, o.max_attempts, p.until AS offered_until, p.n
  ), ins AS (
    INSERT INTO tickwork_jobs (queue, payload, key, status, priority, run_at, max_attempts, max_attempts_from_queue, group_key, waited, created_at, attempts, worker_id, lease_until${traced ? ", trace_context" : ""})
    SELECT $1, convert_from(substring($2::bytea FROM t.at FOR t.len), 'UTF8')::json, t.key, CASE WHEN o.worker_id IS NULL THEN 'pending' ELSE 'running' END,
           t.priority, t.run_at, CASE WHEN o.worker_id IS NOT NULL AND t.from_queue THEN COALESCE(o.max_attempts, t.max_attempts) ELSE t.max_attempts END,
           t.from_queue, t.group_key, coalesce(t.waited, false), $3::bigint,
           CASE WHEN o.worker_id IS NULL THEN 0 ELSE 1 END, o.worker_id, o.offered_until + o.lease_ms${traced ? ", t.trace_context" : ""}
    FROM unnest($4::int[], $5::int[], $6::text[], $7::int[], $8::bigint[], $9::int[], $10::boolean[], $11::text[], $12::boolean[]${traced ? ", $15::text[]" : ""})
         WITH ORDINALITY AS t(at, len, key, priority, run_at, max_attempts, from_queue, group_key, waited, ${traced ? "trace_context, " : ""}ord)
         LEFT JOIN taken o ON o.n = t.ord
    ORDER BY t.ord
    ON CONFLICT DO NOTHING
    RETURNING id, key, worker_id, lease_until, max_attempts
  )
  SELECT ins.id::text AS id, ins.key, ins.worker_id AS "handedTo", ins.lease_until::text AS "leaseUntil", ins.max_attempts AS "maxAttempts", NULL::text AS slot FROM ins
  UNION ALL
  SELECT NULL, NULL, t.worker_id, NULL, NULL, t.slot::text FROM taken t`;

const INSERTS = {
  untraced: { notify: insertStatement("notify", false), quiet: insertStatement("quiet", false), claimed: insertStatement("claimed", false), offered: insertOffered(false) },
  traced: { notify: insertStatement("notify", true), quiet: insertStatement("quiet", true), claimed: insertStatement("claimed", true), offered: insertOffered(true) },
};

/**
 * A notification on its own, committed without waiting for the WAL flush. A notifying transaction
 * holds a cluster-wide lock from the start of its commit to the end, so one that waits for the flush
 * holds up every other notifier (and every enqueue that notified in its insert) for as long; and a
 * notification writes nothing worth the wait: lost in a crash, it costs the listeners one poll.
 * `set_config(..., true)` sets it for this statement's own transaction, commit included.
 */
export const NOTIFY = `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, ${SCOPED("$2")})`;

/**
 * The statements that reach a batch of rows by id are planned on every call (`replan`), and hand the
 * planner their ids as an array it cannot see into (an InitPlan), so it prices the lookup as a few
 * probes of the primary key whatever the batch's size. Both guards come from the side-by-side
 * benchmark, each a plan that read the whole table on every call:
 * - prepared once, such a statement ran on the generic plan PostgreSQL built on a table still small
 *   (a sequential scan is cheapest there) for the rest of a 60 s run while the table grew to 120,000
 *   rows: claims and settles of 200 ms, and the queue fell behind a producer of 2,000 jobs/s;
 * - handed 500 ids it can see, on a table of 20,000 to 100,000 rows not yet analyzed, the planner
 *   priced 500 random reads above a scan of the table.
 * Joined to a CTE or a FROM list instead, the planner hash-joins the batch with a scan of the whole
 * table once it holds a few thousand rows.
 */
const REPLAN = { replan: true };

type Run = <T>(sql: string, params: unknown[]) => Promise<T[]>;

/** A settled job, as the settle statements return it: its new status, and whether someone awaits it. */
type Settled = { id: string; waited: boolean; status: JobStatus };

/**
 * Payload text per statement of a sliced insert (see insertSliced): small enough that a batch of
 * 2 KB payloads goes in several slices, each serialised while the last is written, and large enough
 * that a batch of small payloads goes as one statement (a statement's fixed cost is about 0.1 ms).
 */
const SLICE_CHARS = 128 * 1024;

/**
 * The plain claim: the first $3 due jobs in claim order, the first $7 of them started now and the
 * rest held for the worker, not started (started_at null) until it marks them. The ids are picked
 * once, as an array in claim order; each lookup of it is an InitPlan, so the rows are found by
 * primary key (see REPLAN) and the started ones are a slice of the same array.
 * Exported (with the other statements) for the query-plan tests.
 */
export const CLAIM_DUE = `
  WITH picked AS MATERIALIZED (SELECT ARRAY(
    SELECT id FROM tickwork_jobs
    WHERE queue = $1 AND status = 'pending' AND run_at <= $2
      AND NOT EXISTS (SELECT 1 FROM tickwork_queue_pauses WHERE queue = $1 AND group_key = '')
    ORDER BY priority, run_at, id
    LIMIT $3
    FOR UPDATE SKIP LOCKED
  ) AS ids)
  UPDATE tickwork_jobs j
  SET status = 'running', attempts = j.attempts + 1, worker_id = $4, lease_until = $5::bigint,
      started_at = CASE WHEN j.id = ANY((SELECT ids[1:$7::int] FROM picked)::bigint[]) THEN $2::bigint END,
      max_attempts = CASE WHEN j.max_attempts_from_queue THEN COALESCE($6::int, j.max_attempts) ELSE j.max_attempts END
  WHERE j.id = ANY((SELECT ids FROM picked)::bigint[])
  RETURNING ${claimedColumns("postgres", "j.")}`;

/**
 * The job's history with the attempt its row records now appended, ended at `finishedAt` as
 * `outcome` (SQL expressions), the oldest dropped past HISTORY_KEPT. In an UPDATE's SET every column
 * reads the row as it was, so `attempts` and `started_at` are the attempt's own.
 */
const pushHistory = (finishedAt: string, outcome: string, error: string) =>
  `(CASE WHEN jsonb_array_length(coalesce(j.history, '[]'::jsonb)) >= ${HISTORY_KEPT} THEN j.history - 0 ELSE coalesce(j.history, '[]'::jsonb) END)
     || jsonb_build_array(jsonb_build_object('attempt', j.attempts, 'startedAt', j.started_at, 'finishedAt', ${finishedAt}, 'outcome', ${outcome}, 'error', ${error}))`;

/** A finished job's last attempt, moved to its history when a retry gives it a fresh set. */
const KEEP_LAST_ATTEMPT = `history = CASE WHEN j.started_at IS NULL THEN j.history ELSE ${pushHistory(
  "j.finished_at",
  `CASE WHEN j.status = 'cancelled' THEN 'cancelled' WHEN j.last_error = '${LEASE_EXPIRED_ERROR}' THEN 'lease_expired' ELSE 'failed' END`,
  "CASE WHEN j.status = 'failed' THEN j.last_error END",
)} END`;

/** What a retry sets: pending with a fresh set of attempts from $2 (now), the last attempt kept. */
const RETRY_SET = `status = 'pending', attempts = 0, run_at = $2, started_at = NULL, finished_at = NULL, ${KEEP_LAST_ATTEMPT}`;

/** Failed or cancelled jobs ($1, their ids) back to pending at $2, unless a live job holds their key. */
const RETRY: RetryStatement = {
  sql: `UPDATE tickwork_jobs j SET ${RETRY_SET}
        WHERE j.id = ANY($1::bigint[]) AND j.status IN ('failed', 'cancelled') AND ${KEY_FREE}
        RETURNING j.id::text AS id, j.queue, j.parent_id::text AS parent_id, j.children_total, j.child_failure`,
  ids: (ids) => ids,
  lock: true,
};

/**
 * Outcomes of every kind, by `o.kind`: succeeded, failed (for good), retried (a failure with a retry at
 * o.run_at), released (a shutdown's, a pause's or a lapsed lease's: the attempt not counted, its place
 * kept), snoozed (the attempt not counted, back at o.run_at). A retried or snoozed attempt moves to the
 * job's history.
 *
 * Every outcome of a batch in one statement; the WHERE clause is the fence: an outcome applies only
 * while the job still runs the attempt it reports on (and a release, $9, only while its worker holds it). The fence compares status with a value from the
 * input rows rather than the literal 'running' on purpose: with the literal, a plan built on idle-time
 * statistics (about one running row) may drive the join from the running-only partial indexes and
 * compare every running row with every outcome, quadratic in a backlog. This way the primary key is
 * the only index the planner can use, and `j.id = ANY(ARRAY(...))` hands it the batch's ids to look up.
 */
export const SETTLE_MANY = `
  UPDATE tickwork_jobs j SET
    status      = CASE WHEN o.kind IN ('succeeded', 'failed') THEN o.kind ELSE 'pending' END,
    attempts    = CASE WHEN o.kind IN ('released', 'snoozed') THEN j.attempts - 1 ELSE j.attempts END,
    snoozes     = j.snoozes + CASE WHEN o.kind = 'snoozed' THEN 1 ELSE 0 END,
    run_at      = CASE WHEN o.kind = 'released' THEN LEAST(j.run_at, $7::bigint) ELSE COALESCE(o.run_at, j.run_at) END,
    last_error  = COALESCE(o.error, j.last_error),
    result      = o.result::json,
    history     = CASE WHEN o.kind IN ('retried', 'snoozed')
                    THEN ${pushHistory("$7::bigint", "CASE WHEN o.kind = 'retried' THEN 'failed' ELSE 'snoozed' END", "o.error")}
                    ELSE j.history END,
    started_at  = CASE WHEN o.kind IN ('succeeded', 'failed') THEN j.started_at END,
    finished_at = CASE WHEN o.kind IN ('succeeded', 'failed') THEN $7::bigint END,
    worker_id   = NULL,
    lease_until = NULL
  FROM unnest($1::bigint[], $2::int[], $3::text[], $4::bigint[], $5::text[], $6::text[], $8::text[], $9::text[])
       AS o(id, attempt, kind, run_at, error, result, held, worker)
  WHERE j.id = ANY(ARRAY(SELECT unnest($1::bigint[]))) AND j.id = o.id AND j.status = o.held AND j.attempts = o.attempt
    AND (o.worker IS NULL OR j.worker_id = o.worker)
  RETURNING j.id::text AS id, j.waited, j.status`;

/**
 * SETTLE_MANY for the common batch, every outcome a success: two arrays instead of seven, so the
 * server parses (and the client writes) a third as much per job. Same fence, same primary-key lookup.
 */
export const SETTLE_SUCCEEDED = `
  UPDATE tickwork_jobs j SET status = 'succeeded', finished_at = $3::bigint, result = o.result::json, worker_id = NULL, lease_until = NULL
  FROM unnest($1::bigint[], $2::int[], $4::text[], $5::text[]) AS o(id, attempt, held, result)
  WHERE j.id = ANY(ARRAY(SELECT unnest($1::bigint[]))) AND j.id = o.id AND j.status = o.held AND j.attempts = o.attempt
  RETURNING j.id::text AS id, j.waited, j.status`;

/**
 * Renews the leases of a worker's jobs, skipping the rows another transaction holds: its own settle,
 * which locks the same rows in its own order (waiting on it deadlocked the two), or a rescue or a
 * cancel. A skipped row still this worker's in the statement's snapshot counts as held, and the next
 * heartbeat judges it again, so a job is never taken for lost while its outcome is being written.
 */
export const HEARTBEAT = `
  WITH mine AS (
    SELECT id FROM tickwork_jobs WHERE id = ANY(ARRAY(SELECT unnest($3::bigint[]))) AND worker_id = $1 AND status = 'running'
    FOR UPDATE SKIP LOCKED
  ), renewed AS (
    UPDATE tickwork_jobs t SET lease_until = $2 FROM mine WHERE t.id = mine.id RETURNING t.id
  )
  SELECT id::text AS id FROM renewed
  UNION ALL
  SELECT id::text AS id FROM tickwork_jobs
  WHERE id = ANY(ARRAY(SELECT unnest($3::bigint[]))) AND worker_id = $1 AND status = 'running' AND id NOT IN (SELECT id FROM mine)`;

/**
 * Marks held jobs started ($3) while worker $4 holds the attempt each names and has not started it.
 * The status is a parameter ($5, 'running') for the reason SETTLE_MANY gives: the primary key is the
 * only index the planner can use.
 */
export const MARK_STARTED = `
  UPDATE tickwork_jobs j SET started_at = $3::bigint
  FROM unnest($1::bigint[], $2::int[]) AS o(id, attempt)
  WHERE j.id = ANY(ARRAY(SELECT unnest($1::bigint[]))) AND j.id = o.id AND j.attempts = o.attempt
    AND j.worker_id = $4 AND j.status = $5 AND j.started_at IS NULL
  RETURNING j.id::text AS id`;

/**
 * Running jobs whose lease lapsed: a started attempt is counted (the job fails when it was the last,
 * else goes back pending with the attempt in its history); a job claimed but never started (started_at
 * null: its worker died holding it) goes back pending with the attempt given back and nothing else
 * changed, as a release would.
 */
export const RESCUE_EXPIRED = `
  UPDATE tickwork_jobs j SET
    status      = CASE WHEN j.started_at IS NOT NULL AND j.attempts >= j.max_attempts THEN 'failed' ELSE 'pending' END,
    attempts    = CASE WHEN j.started_at IS NULL THEN j.attempts - 1 ELSE j.attempts END,
    finished_at = CASE WHEN j.started_at IS NOT NULL AND j.attempts >= j.max_attempts THEN $1::bigint END,
    history     = CASE WHEN j.started_at IS NULL OR j.attempts >= j.max_attempts THEN j.history ELSE ${pushHistory("$1::bigint", "'lease_expired'::text", "$4::text")} END,
    started_at  = CASE WHEN j.attempts >= j.max_attempts THEN j.started_at END,
    last_error  = CASE WHEN j.started_at IS NULL THEN j.last_error ELSE $4 END,
    run_at = LEAST(j.run_at, $1::bigint), worker_id = NULL, lease_until = NULL
  WHERE j.id = ANY(ARRAY(
    SELECT id FROM tickwork_jobs
    WHERE status = 'running' AND lease_until < $1 AND queue = ANY($2)
    ORDER BY lease_until LIMIT $3
    FOR UPDATE SKIP LOCKED
  ))
  RETURNING j.id::text AS id, j.queue, j.attempts, j.max_attempts AS "maxAttempts", j.status, j.waited, j.parent_id::text AS parent`;

/** Each queue of $1 with each priority its pending jobs have, stepped to one index probe at a time. */
const PENDING_PRIORITIES = `
  WITH RECURSIVE p(queue, priority) AS (
    SELECT q.name, (SELECT priority FROM tickwork_jobs WHERE queue = q.name AND status = 'pending' ORDER BY priority LIMIT 1)
    FROM unnest($1::text[]) AS q(name)
    UNION ALL
    SELECT p.queue, (SELECT t.priority FROM tickwork_jobs t WHERE t.queue = p.queue AND t.status = 'pending' AND t.priority > p.priority ORDER BY t.priority LIMIT 1)
    FROM p WHERE p.priority IS NOT NULL
  )`;

/**
 * The earliest pending run_at (and, with $2, the earliest lease to lapse) of some queues. The claim
 * index orders a queue's pending jobs by priority first, so the earliest run_at is the first entry of
 * one of its priorities: the recursive part steps from priority to priority (one index probe each,
 * however many jobs wait) and each priority's first entry is read by one more probe.
 */
export const NEXT_WAKE = `
  ${PENDING_PRIORITIES}
  SELECT min(w.at)::text AS at FROM (
    SELECT (SELECT t.run_at FROM tickwork_jobs t WHERE t.queue = p.queue AND t.status = 'pending' AND t.priority = p.priority ORDER BY t.run_at LIMIT 1) AS at
    FROM p WHERE p.priority IS NOT NULL
    UNION ALL
    SELECT (SELECT lease_until + 1 FROM tickwork_jobs WHERE $2::boolean AND queue = q.name AND status = 'running' ORDER BY lease_until LIMIT 1)
    FROM unnest($1::text[]) AS q(name)
  ) AS w`;

/**
 * Each queue's pending jobs due after $2: per priority (stepped to as NEXT_WAKE does), one range of
 * the claim index past $2, counted in the index. The cost is the priorities and the scheduled jobs,
 * never the due backlog.
 */
export const COUNT_SCHEDULED = `
  ${PENDING_PRIORITIES}
  SELECT p.queue, sum((SELECT count(*) FROM tickwork_jobs t WHERE t.queue = p.queue AND t.status = 'pending' AND t.priority = p.priority AND t.run_at > $2))::text AS n
  FROM p WHERE p.priority IS NOT NULL GROUP BY p.queue`;

/**
 * A batch of finished jobs older than their retention. The IN term repeats the finished-rows index's
 * predicate: a generic plan knows nothing of $1, so without it the index is out of reach and every
 * prune scans and sorts the whole table. The ids go back as an array, which the primary key looks up
 * one by one (see REPLAN).
 */
export const PRUNE_FINISHED = `
  DELETE FROM tickwork_jobs WHERE id = ANY(ARRAY(
    SELECT id FROM tickwork_jobs
    WHERE status = $1 AND status IN ('succeeded', 'failed', 'cancelled') AND finished_at < $2
    ORDER BY finished_at LIMIT $3
  )) RETURNING id`;

/**
 * One parent's children of a flow (or the root, $2 null), in the order given ($3...: one array per
 * column); a traced flow adds its trace contexts ($14).
 */
const insertFlowNodes = (traced: boolean) => `
  INSERT INTO tickwork_jobs (queue, payload, key, status, priority, run_at, max_attempts, max_attempts_from_queue, group_key, waited, created_at,
                             parent_id, children_total, children_waiting, child_failure${traced ? ", trace_context" : ""})
  SELECT t.queue, t.payload::json, t.key, 'pending', t.priority, t.run_at, t.max_attempts, t.from_queue, t.group_key, t.waited, $1::bigint,
         $2::bigint, t.children, t.children, t.child_failure${traced ? ", t.trace_context" : ""}
  FROM unnest($3::text[], $4::text[], $5::text[], $6::int[], $7::bigint[], $8::int[], $9::boolean[], $10::text[], $11::boolean[], $12::int[], $13::text[]${traced ? ", $14::text[]" : ""})
       WITH ORDINALITY AS t(queue, payload, key, priority, run_at, max_attempts, from_queue, group_key, waited, children, child_failure, ${traced ? "trace_context, " : ""}ord)
  ORDER BY t.ord
  RETURNING id::text AS id`;
const INSERT_FLOW_NODES = insertFlowNodes(false);
const INSERT_FLOW_NODES_TRACED = insertFlowNodes(true);

/** Counts ended flow children in their parents (see propagate) on the caller's transaction; nothing to do costs nothing. */
function countInParents(query: PgExecutor["query"], ended: EndedChild[], now: number): Promise<FlowEffects> {
  if (ended.length === 0) return Promise.resolve({ woke: [], failedWaited: [] });
  return runBody(propagate(sqlTx(MAX_FLOW_PARAMS), ended, now, true), (statement) => query(statement.sql, statement.params));
}

/** Rounds of an insert whose key's holder keeps ending before it is read: a race lost this often is no race. */
const MAX_INSERT_TRIES = 5;

/** The flow statements bind a handful of values each. */
const MAX_FLOW_PARAMS = 65_535;

/** The live jobs holding some keys of a queue: the answer an enqueue gets for a duplicate key. */
export const FIND_KEY_HOLDERS = `SELECT * FROM tickwork_jobs WHERE queue = $1 AND key = ANY($2) AND ${LIVE}`;

/** The queue on PostgreSQL: one round trip per batch, `FOR UPDATE SKIP LOCKED` so workers never wait on each other. */
export class PostgresQueueStore extends FlowControlledStore implements QueueStore {
  /** Wakes other processes' workers after an enqueue outside a caller's transaction committed. */
  private readonly announcer = new QueueAnnouncer((queue) => this.sendAnnouncement(queue));
  private listener: ListenerQuery | null = null;
  readonly offers: SlotOffers;

  constructor(private readonly db: PgExecutor) {
    const dialect = { postgres: true, payloadIsText: false };
    super(new FlowSql(db, dialect), new KeyedSql(db, dialect));
    this.offers = new PostgresSlotOffers(db);
  }

  insertMany({ queue, rows, now, tx, claim, passOver }: Parameters<QueueStore["insertMany"]>[0]): Promise<InsertResult[]> {
    // Inside a caller's transaction the notify must be part of it (it fires at their commit).
    if (tx) return this.insert(async (sql, params) => (await tx.query(sql, params)).rows as never[], { queue, rows, now, notify: "inline" });
    // A hand-off is running here already: nobody else is to be woken.
    if (claim) return this.insert(this.db.query.bind(this.db), { queue, rows, now, claim, notify: "none" });
    // Notified after the commit rather than in the insert: see NOTIFY.
    return this.insert(this.db.query.bind(this.db), { queue, rows, now, notify: "after-commit", passOver });
  }

  async insertSliced({ queue, rows, now }: Parameters<NonNullable<QueueStore["insertSliced"]>>[0]): Promise<InsertResult[]> {
    const first = rows.next(SLICE_CHARS);
    // Rows that fit one slice go as one statement, with no transaction around it.
    if (first.length === rows.count) return this.insertMany({ queue, rows: first, now });
    return this.db.overlapped(async (query) => {
      const results: InsertResult[] = [];
      // The first slice's notify fires at the commit, for all of them.
      const sent = [this.insert(query, { queue, rows: first, now, notify: "inline" })];
      try {
        for (let slice = rows.next(SLICE_CHARS); slice.length; slice = rows.next(SLICE_CHARS)) {
          // Serialised while the slice before it was being written, and queued on the connection
          // behind it: the driver sends it the moment the server is done with the one before.
          sent.push(this.insert(query, { queue, rows: slice, now, notify: "none" }));
          results.push(...(await sent[sent.length - 2]!));
        }
        results.push(...(await sent[sent.length - 1]!));
        return results;
      } catch (error) {
        // Once one failed, those after it fail too (the transaction is aborted): nobody awaits them.
        for (const statement of sent) statement.catch(() => {});
        throw error;
      }
    });
  }

  /**
   * One insert statement. `notify`: in the statement (it fires when it commits, for a caller's
   * transaction), none, or once it committed (see QueueAnnouncer).
   */
  private async insert(
    run: Run,
    { queue, rows, now, claim, notify, passOver = "", tries = 1 }: { queue: string; rows: NewJobRow[]; now: number; claim?: InsertClaim; notify: "inline" | "none" | "after-commit"; passOver?: string; tries?: number },
  ): Promise<InsertResult[]> {
    const payloads = packPayloads(rows);
    const params: unknown[] = [
      queue,
      payloads.bytes,
      now,
      payloads.offsets,
      payloads.lengths,
      rows.map((r) => r.key),
      rows.map((r) => r.priority),
      rows.map((r) => r.runAt),
      rows.map((r) => r.maxAttempts),
      rows.map((r) => r.maxAttemptsFromQueue ?? false),
      rows.some((r) => r.group) ? rows.map((r) => r.group ?? null) : [],
      rows.some((r) => r.waited) ? rows.map((r) => r.waited ?? false) : [],
    ];
    // Due rows of no group may go to other processes' idle workers (see insertOffered); a row of a
    // group stays pending, for the claims that know which groups are paused or full.
    const offered = !claim && notify === "after-commit" && rows.every((r) => r.runAt <= now && !r.group);
    if (claim) params.push(claim.workerId, claim.leaseUntil);
    else if (offered) params.push(rows.length, passOver);
    const traced = rows.some((r) => r.traceContext !== undefined);
    if (traced) params.push(rows.map((r) => r.traceContext ?? null));
    const statements = traced ? INSERTS.traced : INSERTS.untraced;
    const statement = claim ? statements.claimed : offered ? statements.offered : notify === "inline" ? statements.notify : statements.quiet;
    const answered = await run<Answered>(statement, params);
    const inserted = offered ? answered.filter((r): r is Answered & { id: string } => r.id !== null) : (answered as (Answered & { id: string })[]);
    const handed: Handed[] = [];
    // RETURNING yields inserted rows in insertion order (the ORDER BY ord above). A keyed row that
    // is missing lost to a live job, or to an earlier row of this same batch.
    const results: (InsertResult | undefined)[] = new Array(rows.length);
    const byKey = new Map<string, string>();
    let next = 0;
    const missing: string[] = [];
    rows.forEach((row, i) => {
      const candidate = inserted[next];
      if (candidate && candidate.key === row.key && (row.key === null || !byKey.has(row.key))) {
        next++;
        if (row.key !== null) byKey.set(row.key, candidate.id);
        if (candidate.handedTo) {
          const handedTo = { workerId: candidate.handedTo, leaseUntil: Number(candidate.leaseUntil), maxAttempts: candidate.maxAttempts! };
          results[i] = { id: candidate.id, duplicate: false, handedTo };
          handed.push({ id: candidate.id, row, ...handedTo });
        } else {
          results[i] = { id: candidate.id, duplicate: false };
        }
      } else if (row.key !== null && !byKey.has(row.key)) {
        missing.push(row.key);
      }
    });
    if (notify === "after-commit" && answered.length) this.announce(queue, now, handed, answered);
    const holders = new Map<string, Job>();
    if (missing.length) {
      const live = await run<JobRow>(FIND_KEY_HOLDERS, [queue, missing]);
      for (const row of live) holders.set(row.key!, toJob(row, false));
    }
    // A row whose key was held at the insert by a job that ended before the read of the holders: the
    // key is free now, so the row is inserted again (or finds the next holder). Each round needs a
    // holder to end between two statements a few milliseconds apart.
    const orphans = rows.flatMap((row, i) => (results[i] || holders.has(row.key!) || byKey.has(row.key!) ? [] : [i]));
    if (orphans.length) {
      if (tries >= MAX_INSERT_TRIES) throw new Error(`tickwork: insert of key ${rows[orphans[0]!]!.key} conflicted ${tries} times with jobs that ended before they could be read`);
      const again = await this.insert(run, { queue, rows: orphans.map((i) => rows[i]!), now, claim, notify, passOver, tries: tries + 1 });
      orphans.forEach((i, n) => (results[i] = again[n]));
    }
    return rows.map((row, i) => {
      if (results[i]) return results[i];
      const holder = holders.get(row.key!);
      if (holder) return { id: holder.id, duplicate: true, existing: holder };
      const sameBatch = byKey.get(row.key!)!;
      const first = rows[firstIndexOfKey(rows, row.key!)]!;
      return { id: sameBatch, duplicate: true, existing: newJob(sameBatch, queue, first, now, false, JSON.parse(first.payload)) };
    });
  }

  /**
   * Once an insert committed: each worker handed some of its rows is sent them (see handoffPayload),
   * and the workers of every process are woken for the rest (see QueueAnnouncer). A hand-off's
   * notification, like the announcement, goes without waiting for the WAL flush; lost, its jobs wait
   * for their worker's next renewal of its offer, which finds them.
   */
  private announce(queue: string, now: number, handed: Handed[], answered: Answered[]): void {
    const byWorker = new Map<string, { jobs: Handed[]; slots: string[] }>();
    const of = (workerId: string) => byWorker.get(workerId) ?? byWorker.set(workerId, { jobs: [], slots: [] }).get(workerId)!;
    for (const job of handed) of(job.workerId).jobs.push(job);
    for (const row of answered) if (row.id === null && row.handedTo) of(row.handedTo).slots.push(row.slot!);
    for (const [workerId, { jobs, slots }] of byWorker) {
      this.db.query(NOTIFY, [HANDOFFS_CHANNEL, handoffPayload(queue, workerId, now, jobs, slots)]).catch(() => {});
    }
    if (answered.some((row) => row.id !== null && !row.handedTo)) this.announcer.announce(queue);
  }

  async claimDue({ queue, limit, now, leaseUntil, workerId, queueMaxAttempts, start = limit }: Parameters<QueueStore["claimDue"]>[0]): Promise<Job[]> {
    const rows = await this.db.query<JobRow>(CLAIM_DUE, [queue, now, limit, workerId, leaseUntil, queueMaxAttempts ?? null, start], REPLAN);
    return rows.map((row) => toJob(row, false)).sort(byClaimOrder);
  }

  override async setPaused(params: Parameters<QueueStore["setPaused"]>[0]) {
    const changed = await this.flow.setPaused(params);
    // Every process's idle workers look again: a resumed queue's jobs wait for no poll. A pause is
    // heard by every process's worker, which hands back the jobs it prefetched and starts none until
    // a resume (see QueueWorker.pausedHere), instead of running its prefetched batch out first.
    if (changed && !params.paused) await this.notify([params.queue]);
    if (changed && params.paused) await this.db.query(NOTIFY, [JOBS_CHANNEL, pausePayload(params.queue, params.group)]);
    return changed;
  }

  async settleMany({ outcomes, now }: { outcomes: JobOutcome[]; now: number }) {
    const ids = outcomes.map((o) => o.id);
    const ended = outcomes.map(endedChild).filter((c) => c !== null);
    if (ended.length) return this.settleWithParents(outcomes, ended, now);
    const applied = outcomes.every((o) => o.kind === "succeeded")
      ? await this.db.query<Settled>(SETTLE_SUCCEEDED, [
          arrayLiteral(ids),
          arrayLiteral(outcomes.map((o) => o.attempt)),
          now,
          arrayLiteral(ids.map(() => "running")),
          // Results are JSON text, quoted by the driver; a batch of jobs that returned nothing sends none.
          outcomes.some((o) => o.result !== undefined) ? outcomes.map((o) => o.result ?? null) : [],
        ], REPLAN)
      : await this.settleMixed(outcomes, now);
    await this.notifyJobs(applied.filter((r) => r.waited && (r.status === "succeeded" || r.status === "failed")).map((r) => r.id));
    const done = new Set(applied.map((r) => r.id));
    return { refused: ids.filter((id) => !done.has(id)) };
  }

  /**
   * Outcomes of which some end flow children: settled and counted in their parents in one
   * transaction, so a crash never leaves a child ended and its parent waiting for it.
   */
  private async settleWithParents(outcomes: JobOutcome[], ended: EndedChild[], now: number): Promise<SettleResult> {
    const params = this.mixedParams(outcomes, now);
    const { applied, effects } = await this.db.overlapped(async (query) => {
      const applied = await query<Settled>(SETTLE_MANY, params, REPLAN);
      const done = new Set(applied.map((r) => r.id));
      const effects = await countInParents(query, ended.filter((e) => done.has(e.child)), now);
      return { applied, effects };
    });
    await this.notify(effects.woke);
    await this.notifyJobs([...applied.filter((r) => r.waited && (r.status === "succeeded" || r.status === "failed")).map((r) => r.id), ...effects.failedWaited]);
    const done = new Set(applied.map((r) => r.id));
    return { refused: outcomes.map((o) => o.id).filter((id) => !done.has(id)), woke: effects.woke };
  }

  private settleMixed(outcomes: JobOutcome[], now: number): Promise<Settled[]> {
    return this.db.query<Settled>(SETTLE_MANY, this.mixedParams(outcomes, now), REPLAN);
  }

  private mixedParams(outcomes: JobOutcome[], now: number): unknown[] {
    const ids: string[] = [];
    const attempts: number[] = [];
    const kinds: string[] = [];
    const runAts: (number | null)[] = [];
    const errors: (string | null)[] = [];
    const results: (string | null)[] = [];
    for (const o of outcomes) {
      ids.push(o.id);
      attempts.push(o.attempt);
      kinds.push(o.kind === "failed" && o.retryAt !== null ? "retried" : o.kind);
      runAts.push(o.kind === "failed" ? o.retryAt : o.kind === "snoozed" ? o.runAt : null);
      errors.push(o.kind === "failed" ? o.error : null);
      results.push(o.kind === "succeeded" ? (o.result ?? null) : null);
    }
    const held = ids.map(() => "running");
    const workers = outcomes.map((o) => (o.kind === "released" ? o.workerId : null));
    return [ids, attempts, kinds, runAts, errors, results, now, held, workers];
  }

  /** Signals the waiters of some awaited jobs, in every process (see subscribeJobs). */
  private async notifyJobs(ids: string[]): Promise<void> {
    for (let at = 0; at < ids.length; at += IDS_PER_NOTIFY) {
      await this.db.query(NOTIFY, [JOB_EVENTS_CHANNEL, ids.slice(at, at + IDS_PER_NOTIFY).join(",")]);
    }
  }

  async heartbeat({ workerId, ids, leaseUntil }: Parameters<QueueStore["heartbeat"]>[0]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query<{ id: string }>(HEARTBEAT, [workerId, leaseUntil, arrayLiteral(ids)], REPLAN);
    return rows.map((r) => r.id);
  }

  async markStarted({ workerId, jobs, now }: Parameters<QueueStore["markStarted"]>[0]): Promise<string[]> {
    if (jobs.length === 0) return [];
    const ids = arrayLiteral(jobs.map((j) => j.id));
    const rows = await this.db.query<{ id: string }>(MARK_STARTED, [ids, arrayLiteral(jobs.map((j) => j.attempt)), now, workerId, "running"], REPLAN);
    return rows.map((r) => r.id);
  }

  async rescueExpired({ queues, now, limit }: { queues: string[]; now: number; limit: number }): Promise<RescuedJob[]> {
    if (queues.length === 0) return [];
    // One transaction, so a child failed for good by its lapsed lease is counted by its parent or not failed at all.
    const { rescued, effects } = await this.db.overlapped(async (query) => {
      const rescued = await query<RescuedJob & { waited: boolean; parent: string | null }>(RESCUE_EXPIRED, [now, queues, limit, LEASE_EXPIRED_ERROR], REPLAN);
      const ended = rescued.filter((j) => j.status === "failed" && j.parent !== null).map((j) => ({ parent: j.parent!, child: j.id, failed: true, error: LEASE_EXPIRED_ERROR }));
      return { rescued, effects: await countInParents(query, ended, now) };
    });
    await this.notify([...rescued.filter((j) => j.status === "pending").map((j) => j.queue), ...effects.woke]);
    await this.notifyJobs([...rescued.filter((j) => j.waited && j.status === "failed").map((j) => j.id), ...effects.failedWaited]);
    return rescued.map(({ waited: _, parent: __, ...job }) => job);
  }

  /**
   * Sends this process's announcements on its own listening connection (null: on the pool again).
   * A session hears its own notifications with its own backend pid, so the listener can drop them:
   * the enqueue already woke this process's worker, and a second wake-up would only send it a claim
   * that finds nothing (or is in flight when the next enqueue could have handed it a job).
   */
  announceOn(listener: ListenerQuery | null): void {
    this.listener = listener;
  }

  private async sendAnnouncement(queue: string): Promise<void> {
    const listener = this.listener;
    // A listener dropping as it sends: the pool's connection carries it instead.
    if (listener) await listener(NOTIFY, [JOBS_CHANNEL, queue]).catch(() => this.notify([queue]));
    else await this.notify([queue]);
  }

  /**
   * Wakes idle workers in every process for jobs that became pending: after an enqueue (see
   * QueueAnnouncer), a rescue, a retry or a parent whose children ended.
   */
  private async notify(queues: string[]): Promise<void> {
    for (const queue of new Set(queues)) await this.db.query(NOTIFY, [JOBS_CHANNEL, queue]);
  }

  async nextWakeAt({ queues, leases = true }: { queues: string[]; leases?: boolean }): Promise<number | null> {
    if (queues.length === 0) return null;
    const [row] = await this.db.query<{ at: string | null }>(NEXT_WAKE, [queues, leases]);
    return row?.at == null ? null : Number(row.at);
  }

  async setProgress({ id, attempt, progress }: Parameters<QueueStore["setProgress"]>[0]): Promise<boolean> {
    const [row] = await this.db.query<{ waited: boolean }>(
      `UPDATE tickwork_jobs SET progress = $3::json WHERE id = $1 AND status = 'running' AND attempts = $2 RETURNING waited`,
      [id, attempt, progress],
    );
    if (row?.waited) await this.notifyJobs([id]);
    return row !== undefined;
  }

  async watch({ id }: { id: string }): Promise<Job | null> {
    const [row] = await this.db.query<JobRow>(`UPDATE tickwork_jobs SET waited = true WHERE id = $1 RETURNING *`, [id]);
    return row ? toJob(row, false) : null;
  }

  async promote({ id, now }: { id: string; now: number }): Promise<Job | null> {
    const [row] = await this.db.query<JobRow>(
      `UPDATE tickwork_jobs SET run_at = LEAST(run_at, $2::bigint) WHERE id = $1 AND status = 'pending' AND children_waiting = 0 RETURNING *`,
      [id, now],
    );
    if (row) await this.notify([row.queue]);
    return row ? toJob(row, false) : null;
  }

  async get({ id }: { id: string }): Promise<Job | null> {
    const [row] = await this.db.query<JobRow>(`SELECT * FROM tickwork_jobs WHERE id = $1`, [id]);
    return row ? toJob(row, false) : null;
  }

  async list({ queue, status, key, due, now, minAttempts, parent, order = "newest", before, after, limit }: ListParams): Promise<Job[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (clause: string, value: unknown) => {
      params.push(value);
      where.push(clause.replace("?", `$${params.length}`));
    };
    if (queue !== undefined) add("queue = ?", queue);
    if (status !== undefined) add("status = ?", status);
    if (key !== undefined) add("key = ?", key);
    if (due !== undefined) {
      where.push("status = 'pending'");
      add(due ? "run_at <= ?" : "run_at > ?", now);
    }
    if (minAttempts !== undefined) add("attempts >= ?", minAttempts);
    if (parent !== undefined) add("parent_id = ?", parent);
    if (before !== undefined) add("id < ?", before);
    if (after !== undefined) add("id > ?", after);
    params.push(limit);
    const rows = await this.db.query<JobRow>(
      `SELECT * FROM tickwork_jobs ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id ${order === "oldest" ? "ASC" : "DESC"} LIMIT $${params.length}`,
      params,
    );
    return rows.map((row) => toJob(row, false));
  }

  async countByStatus({ queues }: { queues?: string[] }) {
    const rows = await this.db.query<{ queue: string; status: JobStatus; n: string }>(
      // Kept by the writes' triggers, a row per backend that wrote: a few rows, however many jobs there are.
      `SELECT queue, status, sum(n) AS n FROM tickwork_job_counts ${queues ? "WHERE queue = ANY($1)" : ""} GROUP BY queue, status`,
      queues ? [queues] : [],
    );
    return foldCounts(rows);
  }

  async retry({ id, now }: { id: string; now: number }): Promise<Job | null> {
    const row = await this.db.transaction(function* (tx) {
      if ((yield* retryInFlow(tx, RETRY, [id], now)).length === 0) return undefined;
      const [row] = yield* tx.query<JobRow>(`SELECT * FROM tickwork_jobs WHERE id = $1`, [id]);
      return row;
    });
    if (row) await this.notify([row.queue]);
    return row ? toJob(row, false) : null;
  }

  async retryFailed({ queue, now }: { queue: string; now: number }): Promise<number> {
    // Jobs outside any flow in one statement; a flow's, a parent's children at a time, each in its own
    // transaction: one refused (see retryInFlow) leaves the others retried.
    const [plain] = await this.db.query<{ n: number }>(
      `WITH r AS (UPDATE tickwork_jobs j SET ${RETRY_SET}
         WHERE j.queue = $1 AND j.status = 'failed' AND j.parent_id IS NULL AND j.children_total = 0 AND ${KEY_FREE} RETURNING 1)
       SELECT count(*)::int AS n FROM r`,
      [queue, now],
    );
    const inFlows = await this.db.query<{ id: string; parent_id: string | null }>(
      `SELECT id::text AS id, parent_id::text AS parent_id FROM tickwork_jobs WHERE queue = $1 AND status = 'failed' AND (parent_id IS NOT NULL OR children_total > 0)`,
      [queue],
    );
    const retried = (plain?.n ?? 0) + (await retryEachGroup(retryGroups(inFlows), async (ids) => (await this.db.transaction((tx) => retryInFlow(tx, RETRY, ids, now))).length));
    if (retried) await this.notify([queue]);
    return retried;
  }

  async cancel({ id, now }: { id: string; now: number }): Promise<Job | null> {
    const { row, effects } = await this.db.transaction(function* (tx) {
      const [row] = yield* tx.query<JobRow>(
        `UPDATE tickwork_jobs SET status = 'cancelled', finished_at = $2, worker_id = NULL, lease_until = NULL
         WHERE id = $1 AND ${LIVE} RETURNING *`,
        [id, now],
      );
      // A cancelled child is a child that will not succeed: its parent counts it as failed.
      const effects = row?.parent_id != null ? yield* propagate(tx, [{ parent: String(row.parent_id), child: id, failed: true, error: "cancelled" }], now, true) : { woke: [], failedWaited: [] };
      return { row, effects };
    });
    await this.notify(effects.woke);
    await this.notifyJobs([...(row?.waited ? [id] : []), ...effects.failedWaited]);
    return row ? toJob(row, false) : null;
  }

  async cancelPending({ queue, now }: { queue: string; now: number }): Promise<{ cancelled: number; waited: string[] }> {
    const { cancelled, waited, effects } = await this.db.transaction(function* (tx) {
      // One statement; only the jobs someone awaits or a parent counts come back, never the whole backlog.
      const [row] = yield* tx.query<{ cancelled: number; waited: string[]; children: string[]; parents: string[] }>(
        `WITH c AS (
           UPDATE tickwork_jobs SET status = 'cancelled', finished_at = $2, worker_id = NULL, lease_until = NULL
           WHERE queue = $1 AND status = 'pending' RETURNING id, parent_id, waited)
         SELECT count(*)::int AS cancelled,
                coalesce(array_agg(id::text) FILTER (WHERE waited), '{}') AS waited,
                coalesce(array_agg(id::text) FILTER (WHERE parent_id IS NOT NULL), '{}') AS children,
                coalesce(array_agg(parent_id::text) FILTER (WHERE parent_id IS NOT NULL), '{}') AS parents
         FROM c`,
        [queue, now],
      );
      const ended = row!.children.map((child, i) => ({ parent: row!.parents[i]!, child, failed: true, error: "cancelled" }));
      const effects: FlowEffects = ended.length ? yield* propagate(tx, ended, now, true) : { woke: [], failedWaited: [] };
      return { cancelled: row!.cancelled, waited: row!.waited, effects };
    });
    await this.notify(effects.woke);
    const told = [...waited, ...effects.failedWaited];
    await this.notifyJobs(told);
    return { cancelled, waited: told };
  }

  async insertFlow({ nodes, now }: Parameters<QueueStore["insertFlow"]>[0]): Promise<string[]> {
    const ids = await this.db.transaction(function* (tx) {
      const ids: string[] = new Array(nodes.length);
      // Nodes come parents first, each parent's children side by side: one statement per parent.
      for (let at = 0; at < nodes.length; ) {
        const parent = nodes[at]!.parent;
        let end = at + 1;
        while (end < nodes.length && nodes[end]!.parent === parent && parent >= 0) end++;
        const slice = nodes.slice(at, end);
        const traced = slice.some((n) => n.traceContext !== undefined);
        const rows = yield* tx.query<{ id: string }>(traced ? INSERT_FLOW_NODES_TRACED : INSERT_FLOW_NODES, [
          now, parent < 0 ? null : ids[parent],
          slice.map((n) => n.queue), slice.map((n) => n.payload), slice.map((n) => n.key), slice.map((n) => n.priority), slice.map((n) => n.runAt),
          slice.map((n) => n.maxAttempts), slice.map((n) => n.maxAttemptsFromQueue ?? false), slice.map((n) => n.group ?? null), slice.map((n) => n.waited ?? false),
          slice.map((n) => n.children), slice.map((n) => n.childFailure), ...(traced ? [slice.map((n) => n.traceContext ?? null)] : []),
        ]);
        rows.forEach((row, i) => (ids[at + i] = row.id));
        at = end;
      }
      return ids;
    });
    await this.notify(nodes.filter((n) => n.children === 0 && n.runAt <= now).map((n) => n.queue));
    return ids;
  }

  async childResults({ id }: { id: string }) {
    const rows = await this.db.query<ChildRow>(`SELECT id::text AS id, queue, status, result, last_error FROM tickwork_jobs WHERE parent_id = $1 ORDER BY tickwork_jobs.id`, [id]);
    return rows.map((row) => toChildResult(row, false));
  }

  async deleteFinished({ id }: { id: string }): Promise<Job | null> {
    const [row] = await this.db.query<JobRow>(`DELETE FROM tickwork_jobs WHERE id = $1 AND status IN ('succeeded', 'failed', 'cancelled') RETURNING *`, [id]);
    return row ? toJob(row, false) : null;
  }

  async countScheduled({ queues, now }: { queues: string[]; now: number }): Promise<Record<string, number>> {
    if (queues.length === 0) return {};
    const rows = await this.db.query<{ queue: string; n: string }>(COUNT_SCHEDULED, [queues, now]);
    return Object.fromEntries(rows.filter((r) => Number(r.n) > 0).map((r) => [r.queue, Number(r.n)]));
  }

  async compactCounts(): Promise<number> {
    // A backend that is gone never adds to its counters again: they are folded into shard 0. The
    // DELETE locks each row it folds, so two processes compacting at once fold every row once.
    const [{ n: folded }] = (await this.db.query<{ n: string }>(
      `WITH gone AS (
         DELETE FROM tickwork_job_counts WHERE shard <> 0 AND shard NOT IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL)
         RETURNING queue, status, n
       ), folded AS (
         INSERT INTO tickwork_job_counts AS c (queue, status, shard, n)
         SELECT queue, status, 0, sum(n) FROM gone GROUP BY queue, status ORDER BY queue, status
         ON CONFLICT (queue, status, shard) DO UPDATE SET n = c.n + excluded.n
       )
       SELECT count(*) AS n FROM gone`,
    )) as [{ n: string }];
    const emptied = await this.db.query(`DELETE FROM tickwork_job_counts WHERE shard = 0 AND n = 0 RETURNING 1`);
    return Number(folded) + emptied.length;
  }

  async pruneFinished({ status, before, limit }: Parameters<QueueStore["pruneFinished"]>[0]): Promise<number> {
    const rows = await this.db.query<{ id: string }>(PRUNE_FINISHED, [status, before, limit], REPLAN);
    return rows.length;
  }
}

/**
 * An array parameter of plain values (numbers, ids, words) as PostgreSQL's text form, `{1,2,3}`. The
 * driver would quote and escape every element; these need neither, and batches are hundreds long.
 */
function arrayLiteral(values: readonly (string | number)[]): string {
  return `{${values.join(",")}}`;
}

function firstIndexOfKey(rows: NewJobRow[], key: string): number {
  return rows.findIndex((r) => r.key === key);
}

const utf8 = new TextEncoder();

/**
 * A batch's payloads (already JSON text) encoded once into one byte array, with each one's 1-based
 * offset and length in bytes, as the insert cuts them out. The driver sends a byte array as a binary
 * parameter, as it is. The array starts at one byte per character, exact for ASCII, and doubles
 * whenever a payload's UTF-8 does not fit (encodeInto stops at the end and says how far it got).
 */
export function packPayloads(rows: readonly NewJobRow[]): { bytes: Uint8Array; offsets: number[]; lengths: number[] } {
  let chars = 0;
  for (const row of rows) chars += row.payload.length;
  let bytes = new Uint8Array(Math.max(chars, 16));
  const offsets: number[] = new Array(rows.length);
  const lengths: number[] = new Array(rows.length);
  let at = 0;
  rows.forEach((row, i) => {
    const start = at;
    let text = row.payload;
    for (;;) {
      const { read, written } = utf8.encodeInto(text, bytes.subarray(at));
      at += written;
      if (read === text.length) break;
      text = text.slice(read);
      const grown = new Uint8Array(Math.max(bytes.length * 2, at + text.length * 3));
      grown.set(bytes.subarray(0, at));
      bytes = grown;
    }
    offsets[i] = start + 1;
    lengths[i] = at - start;
  });
  return { bytes: bytes.subarray(0, at), offsets, lengths };
}
