import type { PgExecutor } from "../db/pg-executor.js";
import { FlowSql } from "./flow-sql.js";
import { FlowControlledStore } from "./flow-store.js";
import { LEASE_EXPIRED_ERROR, byClaimOrder, foldCounts, newJob, toJob, type JobRow } from "./rows.js";
import type { InsertClaim, InsertResult, ListParams, NewJobRow, JobOutcome, QueueStore, RescuedJob } from "./store.js";
import type { Job, JobStatus } from "./job.js";

/** The channel enqueues notify on; its payload is the queue name. */
export const JOBS_CHANNEL = "tickwork_jobs";

const LIVE = "status IN ('pending', 'running')";
const KEY_FREE = `(j.key IS NULL OR NOT EXISTS (SELECT 1 FROM tickwork_jobs live
  WHERE live.queue = j.queue AND live.key = j.key AND live.${LIVE}))`;

// One statement per batch. The payloads travel as one binary parameter, cut back into rows by byte
// offset and length (see packPayloads); the other columns as arrays of numbers and short strings.
// As an array of texts (`json[]`), every quote of every payload was escaped into the array literal
// by the driver, and parsed back by the server: for payloads of a few KB that cost more than the rest
// of the enqueue. Groups ($11) travel as an empty array when no row has one: unnest pads a shorter
// array with NULLs. Claimed rows (a hand-off to this process's idle worker) are written running under
// $12's lease until $13.
const insertRows = (claimed: boolean) => `
    INSERT INTO tickwork_jobs (queue, payload, key, status, priority, run_at, max_attempts, max_attempts_from_queue, group_key, created_at${claimed ? ", attempts, worker_id, lease_until, started_at" : ""})
    SELECT $1, convert_from(substring($2::bytea FROM t.at FOR t.len), 'UTF8')::json, t.key, ${claimed ? "'running'" : "'pending'"},
           t.priority, t.run_at, t.max_attempts, t.from_queue, t.group_key, $3::bigint${claimed ? ", 1, $12, $13::bigint, $3::bigint" : ""}
    FROM unnest($4::int[], $5::int[], $6::text[], $7::int[], $8::bigint[], $9::int[], $10::boolean[], $11::text[])
         WITH ORDINALITY AS t(at, len, key, priority, run_at, max_attempts, from_queue, group_key, ord)
    ORDER BY t.ord
    ON CONFLICT DO NOTHING
    RETURNING id, key`;
const INSERT_ROWS = insertRows(false);

// With the notify riding in the same statement, it fires exactly when (and if) the insert commits.
const INSERT_MANY = `
  WITH ins AS (${INSERT_ROWS})
  SELECT ins.id::text AS id, ins.key FROM ins, (SELECT pg_notify('${JOBS_CHANNEL}', $1)) AS notify`;

const INSERT_MANY_QUIET = `WITH ins AS (${INSERT_ROWS}) SELECT ins.id::text AS id, ins.key FROM ins`;

// Nobody else is to run a claimed job, so nobody is notified.
const INSERT_CLAIMED = `WITH ins AS (${insertRows(true)}) SELECT ins.id::text AS id, ins.key FROM ins`;

/**
 * NOTIFY serialises commits (PostgreSQL takes a global lock to queue notifications), which more than
 * halves the rate of single enqueues here (about 5,100 plain inserts/s against 2,000 with a notify).
 * So enqueues of one queue notify at most once per window: the first inline, and the others are
 * covered by one trailing notify sent after they committed. Workers in other processes learn of a
 * job at most this much later; workers in this process are woken in memory at once.
 */
const NOTIFY_WINDOW_MS = 5;

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

/**
 * Payload text per statement of a sliced insert (see insertSliced): small enough that a batch of
 * 2 KB payloads goes in several slices, each serialised while the last is written, and large enough
 * that a batch of small payloads goes as one statement (a statement's fixed cost is about 0.1 ms).
 */
const SLICE_CHARS = 128 * 1024;

// Exported (with the other statements) for the query-plan tests.
export const CLAIM_DUE = `
  UPDATE tickwork_jobs j
  SET status = 'running', attempts = j.attempts + 1, worker_id = $4, lease_until = $5::bigint, started_at = $2::bigint,
      max_attempts = CASE WHEN j.max_attempts_from_queue THEN COALESCE($6::int, j.max_attempts) ELSE j.max_attempts END
  WHERE j.id = ANY(ARRAY(
    SELECT id FROM tickwork_jobs
    WHERE queue = $1 AND status = 'pending' AND run_at <= $2
      AND NOT EXISTS (SELECT 1 FROM tickwork_queue_pauses WHERE queue = $1 AND group_key = '')
    ORDER BY priority, run_at, id
    LIMIT $3
    FOR UPDATE SKIP LOCKED
  ))
  RETURNING j.*`;

// Every outcome of a batch in one statement; the WHERE clause is the fence: an outcome applies only
// while the job still runs the attempt it reports on. The fence compares status with a value from the
// input rows rather than the literal 'running' on purpose: with the literal, a plan built on idle-time
// statistics (about one running row) may drive the join from the running-only partial indexes and
// compare every running row with every outcome, quadratic in a backlog. This way the primary key is
// the only index the planner can use, and `j.id = ANY(ARRAY(...))` hands it the batch's ids to look up.
export const SETTLE_MANY = `
  UPDATE tickwork_jobs j SET
    status      = o.status,
    attempts    = j.attempts - o.refund,
    run_at      = CASE WHEN o.refund = 1 THEN LEAST(j.run_at, $7::bigint) ELSE COALESCE(o.run_at, j.run_at) END,
    last_error  = COALESCE(o.error, j.last_error),
    started_at  = CASE WHEN o.refund = 1 THEN NULL ELSE j.started_at END,
    finished_at = CASE WHEN o.status = 'pending' THEN NULL ELSE $7::bigint END,
    worker_id   = NULL,
    lease_until = NULL
  FROM unnest($1::bigint[], $2::int[], $3::text[], $4::bigint[], $5::text[], $6::int[], $8::text[])
       AS o(id, attempt, status, run_at, error, refund, held)
  WHERE j.id = ANY(ARRAY(SELECT unnest($1::bigint[]))) AND j.id = o.id AND j.status = o.held AND j.attempts = o.attempt
  RETURNING j.id::text AS id`;

/**
 * SETTLE_MANY for the common batch, every outcome a success: two arrays instead of seven, so the
 * server parses (and the client writes) a third as much per job. Same fence, same primary-key lookup.
 */
export const SETTLE_SUCCEEDED = `
  UPDATE tickwork_jobs j SET status = 'succeeded', finished_at = $3::bigint, worker_id = NULL, lease_until = NULL
  FROM unnest($1::bigint[], $2::int[], $4::text[]) AS o(id, attempt, held)
  WHERE j.id = ANY(ARRAY(SELECT unnest($1::bigint[]))) AND j.id = o.id AND j.status = o.held AND j.attempts = o.attempt
  RETURNING j.id::text AS id`;

export const HEARTBEAT = `
  UPDATE tickwork_jobs SET lease_until = $2
  WHERE id = ANY(ARRAY(SELECT unnest($3::bigint[]))) AND worker_id = $1 AND status = 'running'
  RETURNING id::text AS id`;

export const RESCUE_EXPIRED = `
  UPDATE tickwork_jobs j SET
    status      = CASE WHEN j.attempts >= j.max_attempts THEN 'failed' ELSE 'pending' END,
    finished_at = CASE WHEN j.attempts >= j.max_attempts THEN $1::bigint ELSE NULL END,
    run_at = LEAST(j.run_at, $1::bigint), last_error = $4, worker_id = NULL, lease_until = NULL
  WHERE j.id = ANY(ARRAY(
    SELECT id FROM tickwork_jobs
    WHERE status = 'running' AND lease_until < $1 AND queue = ANY($2)
    ORDER BY lease_until LIMIT $3
    FOR UPDATE SKIP LOCKED
  ))
  RETURNING j.id::text AS id, j.queue, j.attempts, j.max_attempts AS "maxAttempts", j.status`;

/**
 * The earliest pending run_at (and, with $2, the earliest lease to lapse) of some queues. The claim
 * index orders a queue's pending jobs by priority first, so the earliest run_at is the first entry of
 * one of its priorities: the recursive part steps from priority to priority (one index probe each,
 * however many jobs wait) and each priority's first entry is read by one more probe.
 */
export const NEXT_WAKE = `
  WITH RECURSIVE p(queue, priority) AS (
    SELECT q.name, (SELECT priority FROM tickwork_jobs WHERE queue = q.name AND status = 'pending' ORDER BY priority LIMIT 1)
    FROM unnest($1::text[]) AS q(name)
    UNION ALL
    SELECT p.queue, (SELECT t.priority FROM tickwork_jobs t WHERE t.queue = p.queue AND t.status = 'pending' AND t.priority > p.priority ORDER BY t.priority LIMIT 1)
    FROM p WHERE p.priority IS NOT NULL
  )
  SELECT min(w.at)::text AS at FROM (
    SELECT (SELECT t.run_at FROM tickwork_jobs t WHERE t.queue = p.queue AND t.status = 'pending' AND t.priority = p.priority ORDER BY t.run_at LIMIT 1) AS at
    FROM p WHERE p.priority IS NOT NULL
    UNION ALL
    SELECT (SELECT lease_until + 1 FROM tickwork_jobs WHERE $2::boolean AND queue = q.name AND status = 'running' ORDER BY lease_until LIMIT 1)
    FROM unnest($1::text[]) AS q(name)
  ) AS w`;

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

/** The live jobs holding some keys of a queue: the answer an enqueue gets for a duplicate key. */
export const FIND_KEY_HOLDERS = `SELECT * FROM tickwork_jobs WHERE queue = $1 AND key = ANY($2) AND ${LIVE}`;

/** The queue on PostgreSQL: one round trip per batch, `FOR UPDATE SKIP LOCKED` so workers never wait on each other. */
export class PostgresQueueStore extends FlowControlledStore implements QueueStore {
  private readonly lastNotified = new Map<string, number>();
  private readonly trailing = new Set<string>();

  constructor(private readonly db: PgExecutor) {
    super(new FlowSql(db, { postgres: true, payloadIsText: false }));
  }

  insertMany({ queue, rows, now, tx, claim }: Parameters<QueueStore["insertMany"]>[0]): Promise<InsertResult[]> {
    // Inside a caller's transaction the notify must be part of it (it fires at their commit).
    if (tx) return this.insert(async (sql, params) => (await tx.query(sql, params)).rows as never[], { queue, rows, now, notify: "inline" });
    // A hand-off is running here already: nobody else is to be woken.
    if (claim) return this.insert(this.db.query.bind(this.db), { queue, rows, now, claim, notify: "none" });
    const inline = performance.now() - (this.lastNotified.get(queue) ?? -Infinity) >= NOTIFY_WINDOW_MS;
    if (inline) this.lastNotified.set(queue, performance.now());
    return this.insert(this.db.query.bind(this.db), { queue, rows, now, notify: inline ? "inline" : "after-window" });
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
   * One insert statement. `notify`: in the statement (it fires when it commits), none, or once the
   * queue's notify window is over (see NOTIFY_WINDOW_MS).
   */
  private async insert(run: Run, { queue, rows, now, claim, notify }: { queue: string; rows: NewJobRow[]; now: number; claim?: InsertClaim; notify: "inline" | "none" | "after-window" }): Promise<InsertResult[]> {
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
    ];
    if (claim) params.push(claim.workerId, claim.leaseUntil);
    const inserted = await run<{ id: string; key: string | null }>(claim ? INSERT_CLAIMED : notify === "inline" ? INSERT_MANY : INSERT_MANY_QUIET, params);
    if (notify === "after-window" && inserted.length) this.notifyAfterWindow(queue);
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
        results[i] = { id: candidate.id, duplicate: false };
      } else if (row.key !== null && !byKey.has(row.key)) {
        missing.push(row.key);
      }
    });
    const holders = new Map<string, Job>();
    if (missing.length) {
      const live = await run<JobRow>(FIND_KEY_HOLDERS, [queue, missing]);
      for (const row of live) holders.set(row.key!, toJob(row, false));
    }
    return rows.map((row, i) => {
      if (results[i]) return results[i];
      const holder = holders.get(row.key!);
      if (holder) return { id: holder.id, duplicate: true, existing: holder };
      const sameBatch = byKey.get(row.key!);
      if (sameBatch) {
        const first = rows[firstIndexOfKey(rows, row.key!)]!;
        return { id: sameBatch, duplicate: true, existing: newJob(sameBatch, queue, first, now, false, JSON.parse(first.payload)) };
      }
      throw new Error(`tickwork: insert of key ${row.key} conflicted but no live job holds it`);
    });
  }

  async claimDue({ queue, limit, now, leaseUntil, workerId, queueMaxAttempts }: Parameters<QueueStore["claimDue"]>[0]): Promise<Job[]> {
    const rows = await this.db.query<JobRow>(CLAIM_DUE, [queue, now, limit, workerId, leaseUntil, queueMaxAttempts ?? null], REPLAN);
    return rows.map((row) => toJob(row, false)).sort(byClaimOrder);
  }

  override async setPaused(params: Parameters<QueueStore["setPaused"]>[0]) {
    const changed = await this.flow.setPaused(params);
    // Every process's idle workers look again: a resumed queue's jobs wait for no poll.
    if (changed && !params.paused) await this.notify([params.queue]);
    return changed;
  }

  async settleMany({ outcomes, now }: { outcomes: JobOutcome[]; now: number }) {
    const ids = outcomes.map((o) => o.id);
    const applied = outcomes.every((o) => o.kind === "succeeded")
      ? await this.db.query<{ id: string }>(SETTLE_SUCCEEDED, [
          arrayLiteral(ids),
          arrayLiteral(outcomes.map((o) => o.attempt)),
          now,
          arrayLiteral(ids.map(() => "running")),
        ], REPLAN)
      : await this.settleMixed(outcomes, now);
    const done = new Set(applied.map((r) => r.id));
    return { refused: ids.filter((id) => !done.has(id)) };
  }

  private settleMixed(outcomes: JobOutcome[], now: number): Promise<{ id: string }[]> {
    const ids: string[] = [];
    const attempts: number[] = [];
    const statuses: string[] = [];
    const runAts: (number | null)[] = [];
    const errors: (string | null)[] = [];
    const refunds: number[] = [];
    for (const o of outcomes) {
      ids.push(o.id);
      attempts.push(o.attempt);
      statuses.push(o.kind === "failed" ? (o.retryAt === null ? "failed" : "pending") : o.kind === "released" ? "pending" : "succeeded");
      runAts.push(o.kind === "failed" ? o.retryAt : null);
      errors.push(o.kind === "failed" ? o.error : null);
      refunds.push(o.kind === "released" ? 1 : 0);
    }
    const held = ids.map(() => "running");
    return this.db.query<{ id: string }>(SETTLE_MANY, [ids, attempts, statuses, runAts, errors, refunds, now, held], REPLAN);
  }

  async heartbeat({ workerId, ids, leaseUntil }: Parameters<QueueStore["heartbeat"]>[0]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query<{ id: string }>(HEARTBEAT, [workerId, leaseUntil, arrayLiteral(ids)], REPLAN);
    return rows.map((r) => r.id);
  }

  async rescueExpired({ queues, now, limit }: { queues: string[]; now: number; limit: number }): Promise<RescuedJob[]> {
    if (queues.length === 0) return [];
    const rescued = await this.db.query<RescuedJob>(RESCUE_EXPIRED, [now, queues, limit, LEASE_EXPIRED_ERROR], REPLAN);
    await this.notify(rescued.filter((j) => j.status === "pending").map((j) => j.queue));
    return rescued;
  }

  /** The trailing notify for quiet inserts; scheduled once they committed, so it never comes before them. */
  private notifyAfterWindow(queue: string): void {
    if (this.trailing.has(queue)) return;
    this.trailing.add(queue);
    const wait = Math.max(0, (this.lastNotified.get(queue) ?? 0) + NOTIFY_WINDOW_MS - performance.now());
    setTimeout(() => {
      this.trailing.delete(queue);
      this.lastNotified.set(queue, performance.now());
      // A lost trailing notify delays other processes until their poll; it is never worth an error.
      this.notify([queue]).catch(() => {});
    }, wait);
  }

  /**
   * Wakes idle workers in every process for jobs that became pending outside an enqueue (rescue,
   * manual retry). Rare paths, so one extra statement is fine.
   */
  private async notify(queues: string[]): Promise<void> {
    for (const queue of new Set(queues)) await this.db.query(`SELECT pg_notify('${JOBS_CHANNEL}', $1)`, [queue]);
  }

  async nextWakeAt({ queues, leases = true }: { queues: string[]; leases?: boolean }): Promise<number | null> {
    if (queues.length === 0) return null;
    const [row] = await this.db.query<{ at: string | null }>(NEXT_WAKE, [queues, leases]);
    return row?.at == null ? null : Number(row.at);
  }

  async get({ id }: { id: string }): Promise<Job | null> {
    const [row] = await this.db.query<JobRow>(`SELECT * FROM tickwork_jobs WHERE id = $1`, [id]);
    return row ? toJob(row, false) : null;
  }

  async list({ queue, status, key, before, limit }: ListParams): Promise<Job[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (clause: string, value: unknown) => {
      params.push(value);
      where.push(clause.replace("?", `$${params.length}`));
    };
    if (queue !== undefined) add("queue = ?", queue);
    if (status !== undefined) add("status = ?", status);
    if (key !== undefined) add("key = ?", key);
    if (before !== undefined) add("id < ?", before);
    params.push(limit);
    const rows = await this.db.query<JobRow>(
      `SELECT * FROM tickwork_jobs ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT $${params.length}`,
      params,
    );
    return rows.map((row) => toJob(row, false));
  }

  async countByStatus({ queues }: { queues?: string[] }) {
    const rows = await this.db.query<{ queue: string; status: JobStatus; n: string }>(
      `SELECT queue, status, count(*) AS n FROM tickwork_jobs ${queues ? "WHERE queue = ANY($1)" : ""} GROUP BY queue, status`,
      queues ? [queues] : [],
    );
    return foldCounts(rows);
  }

  async retry({ id, now }: { id: string; now: number }): Promise<Job | null> {
    const [row] = await this.db.query<JobRow>(
      `UPDATE tickwork_jobs j SET status = 'pending', attempts = 0, run_at = $2, started_at = NULL, finished_at = NULL
       WHERE j.id = $1 AND j.status IN ('failed', 'cancelled') AND ${KEY_FREE} RETURNING j.*`,
      [id, now],
    );
    if (row) await this.notify([row.queue]);
    return row ? toJob(row, false) : null;
  }

  async retryFailed({ queue, now }: { queue: string; now: number }): Promise<number> {
    const rows = await this.db.query<{ id: string }>(
      `UPDATE tickwork_jobs j SET status = 'pending', attempts = 0, run_at = $2, started_at = NULL, finished_at = NULL
       WHERE j.queue = $1 AND j.status = 'failed' AND ${KEY_FREE} RETURNING j.id`,
      [queue, now],
    );
    if (rows.length) await this.notify([queue]);
    return rows.length;
  }

  async cancel({ id, now }: { id: string; now: number }): Promise<Job | null> {
    const [row] = await this.db.query<JobRow>(
      `UPDATE tickwork_jobs SET status = 'cancelled', finished_at = $2, worker_id = NULL, lease_until = NULL
       WHERE id = $1 AND ${LIVE} RETURNING *`,
      [id, now],
    );
    return row ? toJob(row, false) : null;
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
