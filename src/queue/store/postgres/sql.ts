import { HISTORY_KEPT, LEASE_EXPIRED_ERROR, claimedColumns } from "../rows.js";
import type { RetryStatement } from "../flow-retry.js";
import { JOBS_CHANNEL, SCOPED } from "./notify.js";
import { named } from "../../../db/named.js";

/*
 * The queue's statements on PostgreSQL, as SQL text: inserts, the plain claim, settles, leases and
 * rescues, the next wake-up, retention and flows. PostgresQueueStore (queue/store/postgres/store.ts) runs them.
 */

export const LIVE = "status IN ('pending', 'running')";

export const KEY_FREE = `(j.key IS NULL OR NOT EXISTS (SELECT 1 FROM tickwork_jobs live
  WHERE live.queue = j.queue AND live.key = j.key AND live.${LIVE}))`;

/** The parameters of the insert statements (see insertRows and insertOffered). */
export type InsertParam =
  | "queue" | "payloads" | "now" | "offsets" | "lengths" | "keys" | "priorities" | "runAts" | "maxAttempts" | "fromQueue" | "groups" | "waited"
  | "workerId" | "leaseUntil" | "rows" | "passOver" | "traces";

type P = (name: InsertParam) => string;

/** The rows of a batch, cut back out of its parameters, in order (`ord`). */
const batchRows = (p: P, traced: boolean) => `
    unnest(${p("offsets")}::int[], ${p("lengths")}::int[], ${p("keys")}::text[], ${p("priorities")}::int[], ${p("runAts")}::bigint[], ${p("maxAttempts")}::int[],
           ${p("fromQueue")}::boolean[], ${p("groups")}::text[], ${p("waited")}::boolean[]${traced ? `, ${p("traces")}::text[]` : ""})
      WITH ORDINALITY AS t(at, len, key, priority, run_at, max_attempts, from_queue, group_key, waited, ${traced ? "trace_context, " : ""}ord)`;

// One statement per batch. The payloads travel as one binary parameter, cut back into rows by byte
// offset and length (see packPayloads in queue/store/postgres/params.ts); the other columns as arrays of numbers and short strings.
// As an array of texts (`json[]`), every quote of every payload was escaped into the array literal
// by the driver, and parsed back by the server: for payloads of a few KB that cost more than the rest
// of the enqueue. Groups travel as an empty array when no row has one: unnest pads a shorter array
// with NULLs; so do the waited flags. Claimed rows (a hand-off to this process's idle worker) are
// written running under workerId's lease until leaseUntil. Traced rows (an engine with a tracer) add
// their trace contexts as one more array; untraced ones keep the statement as it was.
const insertRows = (p: P, claimed: boolean, traced: boolean) => `
    INSERT INTO tickwork_jobs (queue, payload, key, status, priority, run_at, max_attempts, max_attempts_from_queue, group_key, waited, created_at${claimed ? ", attempts, worker_id, lease_until, started_at" : ""}${traced ? ", trace_context" : ""})
    SELECT ${p("queue")}, convert_from(substring(${p("payloads")}::bytea FROM t.at FOR t.len), 'UTF8')::json, t.key, ${claimed ? "'running'" : "'pending'"},
           t.priority, t.run_at, t.max_attempts, t.from_queue, t.group_key, coalesce(t.waited, false), ${p("now")}::bigint${claimed ? `, 1, ${p("workerId")}, ${p("leaseUntil")}::bigint, ${p("now")}::bigint` : ""}${traced ? ", t.trace_context" : ""}
    FROM ${batchRows(p, traced)}
    ORDER BY t.ord
    ON CONFLICT DO NOTHING
    RETURNING id, key`;

/** The insert statement for a batch: notifying in it, quiet, or claimed (see insertRows); each with and without trace contexts. */
function insertStatement(kind: "notify" | "quiet" | "claimed", traced: boolean) {
  return named<InsertParam>((p) => {
    const rows = insertRows(p, kind === "claimed", traced);
    // With the notify riding in the same statement, it fires exactly when (and if) the insert commits.
    // Nobody else is to run a claimed job, so nobody is notified.
    return kind === "notify"
      ? `
  WITH ins AS (${rows})
  SELECT ins.id::text AS id, ins.key FROM ins, (SELECT pg_notify('${JOBS_CHANNEL}', ${SCOPED(p("queue"))})) AS notify`
      : `WITH ins AS (${rows}) SELECT ins.id::text AS id, ins.key FROM ins`;
  });
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
 * A handed row is written not started (started_at null): its worker records the start when its handler
 * starts, so a job handed to a worker that died before hearing of it gets its attempt back.
 * `rows` is the number of rows, `passOver` a worker whose offers are passed over ('' for none).
 */
const insertOffered = (traced: boolean) =>
  named<InsertParam>(
    (p) => `
  WITH picked AS (
    SELECT s.worker_id, s.slot, s.until, row_number() OVER () AS n FROM (
      SELECT worker_id, slot, until FROM tickwork_offers
      WHERE queue = ${p("queue")} AND until >= ${p("now")} AND worker_id <> ${p("passOver")} AND NOT EXISTS (SELECT 1 FROM tickwork_queue_pauses WHERE queue = ${p("queue")} AND group_key = '')
      LIMIT ${p("rows")}
      FOR UPDATE SKIP LOCKED
    ) s
  ), taken AS (
    UPDATE tickwork_offers o SET until = 0 FROM picked p WHERE o.queue = ${p("queue")} AND o.worker_id = p.worker_id AND o.slot = p.slot
    RETURNING o.worker_id, o.slot, o.lease_ms, o.max_attempts, p.until AS offered_until, p.n
  ), ins AS (
    INSERT INTO tickwork_jobs (queue, payload, key, status, priority, run_at, max_attempts, max_attempts_from_queue, group_key, waited, created_at, attempts, worker_id, lease_until${traced ? ", trace_context" : ""})
    SELECT ${p("queue")}, convert_from(substring(${p("payloads")}::bytea FROM t.at FOR t.len), 'UTF8')::json, t.key, CASE WHEN o.worker_id IS NULL THEN 'pending' ELSE 'running' END,
           t.priority, t.run_at, CASE WHEN o.worker_id IS NOT NULL AND t.from_queue THEN COALESCE(o.max_attempts, t.max_attempts) ELSE t.max_attempts END,
           t.from_queue, t.group_key, coalesce(t.waited, false), ${p("now")}::bigint,
           CASE WHEN o.worker_id IS NULL THEN 0 ELSE 1 END, o.worker_id, o.offered_until + o.lease_ms${traced ? ", t.trace_context" : ""}
    FROM ${batchRows(p, traced)}
         LEFT JOIN taken o ON o.n = t.ord
    ORDER BY t.ord
    ON CONFLICT DO NOTHING
    RETURNING id, key, worker_id, lease_until, max_attempts
  )
  SELECT ins.id::text AS id, ins.key, ins.worker_id AS "handedTo", ins.lease_until::text AS "leaseUntil", ins.max_attempts AS "maxAttempts", NULL::text AS slot FROM ins
  UNION ALL
  SELECT NULL, NULL, t.worker_id, NULL, NULL, t.slot::text FROM taken t`,
  );

export const INSERTS = {
  untraced: { notify: insertStatement("notify", false), quiet: insertStatement("quiet", false), claimed: insertStatement("claimed", false), offered: insertOffered(false) },
  traced: { notify: insertStatement("notify", true), quiet: insertStatement("quiet", true), claimed: insertStatement("claimed", true), offered: insertOffered(true) },
};

/**
 * The plain claim: the first $3 due jobs in claim order, the first $7 of them started now and the
 * rest held for the worker, not started (started_at null) until it marks them. The ids are picked
 * once, as an array in claim order; each lookup of it is an InitPlan, so the rows are found by
 * primary key (see REPLAN in queue/store/postgres/settle.ts) and the started ones are a slice of the same array.
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
const pushHistory = (finishedAt: string, outcome: string, error: string, startedAt = "j.started_at") =>
  `(CASE WHEN jsonb_array_length(coalesce(j.history, '[]'::jsonb)) >= ${HISTORY_KEPT} THEN j.history - 0 ELSE coalesce(j.history, '[]'::jsonb) END)
     || jsonb_build_array(jsonb_build_object('attempt', j.attempts, 'startedAt', ${startedAt}, 'finishedAt', ${finishedAt}, 'outcome', ${outcome}, 'error', ${error}))`;

/** A finished job's last attempt, moved to its history when a retry gives it a fresh set. */
const KEEP_LAST_ATTEMPT = `history = CASE WHEN j.started_at IS NULL THEN j.history ELSE ${pushHistory(
  "j.finished_at",
  `CASE WHEN j.status = 'cancelled' THEN 'cancelled' WHEN j.last_error = '${LEASE_EXPIRED_ERROR}' THEN 'lease_expired' ELSE 'failed' END`,
  "CASE WHEN j.status = 'failed' THEN j.last_error END",
)} END`;

/** What a retry sets: pending with a fresh set of attempts from $2 (now), the last attempt kept. */
export const RETRY_SET = `status = 'pending', attempts = 0, run_at = $2, started_at = NULL, finished_at = NULL, ${KEEP_LAST_ATTEMPT}`;

/** Failed or cancelled jobs ($1, their ids) back to pending at $2, unless a live job holds their key. */
export const RETRY: RetryStatement = {
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
 * while the job still runs the attempt it reports on under the lease of worker $9 (an attempt given
 * back is claimed again under the same number). $10: when a job held unstarted started, if its mark
 * may not be written yet (see markStarted). The fence compares status with a value from the input
 * rows rather than the literal 'running' on purpose: with the literal, a plan built on idle-time
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
                    THEN ${pushHistory("$7::bigint", "CASE WHEN o.kind = 'retried' THEN 'failed' ELSE 'snoozed' END", "o.error", "COALESCE(j.started_at, o.started)")}
                    ELSE j.history END,
    started_at  = CASE WHEN o.kind IN ('succeeded', 'failed') THEN COALESCE(j.started_at, o.started) END,
    finished_at = CASE WHEN o.kind IN ('succeeded', 'failed') THEN $7::bigint END,
    worker_id   = NULL,
    lease_until = NULL
  FROM unnest($1::bigint[], $2::int[], $3::text[], $4::bigint[], $5::text[], $6::text[], $8::text[], $10::bigint[])
       AS o(id, attempt, kind, run_at, error, result, held, started)
  WHERE j.id = ANY(ARRAY(SELECT unnest($1::bigint[]))) AND j.id = o.id AND j.status = o.held AND j.attempts = o.attempt
    AND j.worker_id = $9
  RETURNING j.id::text AS id, j.waited, j.status`;

/**
 * SETTLE_MANY for the common batch, every outcome a success: two arrays instead of seven, so the
 * server parses (and the client writes) a third as much per job. Same fence, same primary-key lookup.
 * Results ($5) and starts ($6) travel as empty arrays when no outcome has one (unnest pads with nulls).
 */
export const SETTLE_SUCCEEDED = `
  UPDATE tickwork_jobs j SET status = 'succeeded', finished_at = $3::bigint, result = o.result::json, worker_id = NULL, lease_until = NULL,
    started_at = COALESCE(j.started_at, o.started)
  FROM unnest($1::bigint[], $2::int[], $4::text[], $5::text[], $6::bigint[]) AS o(id, attempt, held, result, started)
  WHERE j.id = ANY(ARRAY(SELECT unnest($1::bigint[]))) AND j.id = o.id AND j.status = o.held AND j.attempts = o.attempt
    AND j.worker_id = $7
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
 * Marks held jobs started (each at its $3) while worker $4 holds the attempt each names and has not
 * started it. The status is a parameter ($5, 'running') for the reason SETTLE_MANY gives: the primary
 * key is the only index the planner can use.
 */
export const MARK_STARTED = `
  UPDATE tickwork_jobs j SET started_at = o.at
  FROM unnest($1::bigint[], $2::int[], $3::bigint[]) AS o(id, attempt, at)
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
 * one by one (see REPLAN in queue/store/postgres/settle.ts).
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

export const INSERT_FLOW_NODES = insertFlowNodes(false);

export const INSERT_FLOW_NODES_TRACED = insertFlowNodes(true);

/** The live jobs holding some keys of a queue: the answer an enqueue gets for a duplicate key. */
export const FIND_KEY_HOLDERS = `SELECT * FROM tickwork_jobs WHERE queue = $1 AND key = ANY($2) AND ${LIVE}`;
