import { InvalidInputError } from "../../core/errors.js";
import { runBodySync, sqlTx, sqliteDollarRunner, type SqlDb, type SqlTx } from "../../db/sql-db.js";
import type { SqliteExecutor } from "../../db/sqlite-executor.js";
import { SQLITE_DIALECT } from "./dialect.js";
import { SharedQueueStore } from "./shared-store.js";
import { HISTORY_KEPT, LEASE_EXPIRED_ERROR, claimedColumns, byClaimOrder, foldCounts, toJob, type JobRow } from "./rows.js";
import { endedChild, propagate, type EndedChild } from "./flow-tree.js";
import { retryEachGroup, retryGroups, retryInFlow, type RetryStatement } from "./flow-retry.js";
import type { InsertResult, JobOutcome, QueueStore, RescuedJob } from "./store.js";
import { JOB_STATUSES, type Job, type JobStatus } from "../job.js";
import { inlinePayload, jobColumns, payloadWrite } from "./payloads.js";

const LIVE = "status IN ('pending', 'running')";
const CLAIMED = claimedColumns("sqlite");
/** A whole job row, its payload wherever it is kept (see queue/store/payloads.ts). */
const JOB = jobColumns(false);

const insertRow = (traced: boolean) =>
  `INSERT INTO tickwork_jobs (queue, payload, key, status, priority, run_at, max_attempts, max_attempts_from_queue, group_key, created_at, attempts, worker_id, lease_until, started_at, waited${traced ? ", trace_context" : ""})
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?${traced ? ", ?" : ""}) ON CONFLICT DO NOTHING RETURNING id`;
const INSERT = insertRow(false);
const INSERT_TRACED = insertRow(true);
/**
 * The predicate of the finished-rows index, verbatim. SQLite uses a partial index only when the query
 * repeats its WHERE term: `status = ?` (or even `status = 'failed'`) does not count, and the query
 * would scan every row of the table instead.
 */
const FINISHED = "status IN ('succeeded', 'failed', 'cancelled')";
/** A finished job can go back to pending only if no live job has taken its key meanwhile. */
const KEY_FREE = `(key IS NULL OR NOT EXISTS (SELECT 1 FROM tickwork_jobs live
  WHERE live.queue = tickwork_jobs.queue AND live.key = tickwork_jobs.key AND live.${LIVE}))`;

/**
 * The job's history with the attempt its row records now appended, ended at `finishedAt` as
 * `outcome` (SQL expressions), the oldest dropped past HISTORY_KEPT. In an UPDATE's SET every column
 * reads the row as it was, so `attempts` and `started_at` are the attempt's own.
 */
const pushHistory = (finishedAt: string, outcome: string, error: string, startedAt = "started_at") =>
  `json_insert(CASE WHEN json_array_length(coalesce(history, '[]')) >= ${HISTORY_KEPT} THEN json_remove(history, '$[0]') ELSE coalesce(history, '[]') END,
     '$[#]', json_object('attempt', attempts, 'startedAt', ${startedAt}, 'finishedAt', ${finishedAt}, 'outcome', ${outcome}, 'error', ${error}))`;

/** A finished job's last attempt, moved to its history when a retry gives it a fresh set. */
const KEEP_LAST_ATTEMPT = `history = CASE WHEN started_at IS NULL THEN history ELSE ${pushHistory(
  "finished_at",
  `CASE WHEN status = 'cancelled' THEN 'cancelled' WHEN last_error = '${LEASE_EXPIRED_ERROR}' THEN 'lease_expired' ELSE 'failed' END`,
  "CASE WHEN status = 'failed' THEN last_error END",
)} END`;

/** What a retry sets: pending with a fresh set of attempts from ? (now), the last attempt kept. */
const RETRY_SET = `status = 'pending', attempts = 0, run_at = ?, started_at = NULL, finished_at = NULL, ${KEEP_LAST_ATTEMPT}`;

/** Failed or cancelled jobs ($1, a JSON array of ids) back to pending at $2, unless a live job holds their key. */
const RETRY: RetryStatement = {
  sql: `UPDATE tickwork_jobs SET ${RETRY_SET.replace("?", "$2")}
        WHERE id IN (SELECT value FROM json_each($1)) AND status IN ('failed', 'cancelled') AND ${KEY_FREE}
        RETURNING id, queue, parent_id, children_total, child_failure`,
  ids: (ids) => JSON.stringify(ids.map(Number)),
  lock: false,
};

/** Each priority a queue's pending jobs have (the queue bound twice), stepped to one index probe at a time. */
const PENDING_PRIORITIES = `
  WITH RECURSIVE p(priority) AS (
    SELECT (SELECT priority FROM tickwork_jobs WHERE queue = ? AND status = 'pending' ORDER BY priority LIMIT 1)
    UNION ALL
    SELECT (SELECT t.priority FROM tickwork_jobs t WHERE t.queue = ? AND t.status = 'pending' AND t.priority > p.priority ORDER BY t.priority LIMIT 1)
    FROM p WHERE p.priority IS NOT NULL
  )`;

/**
 * The earliest pending run_at and the earliest lease to lapse of one queue. The claim index orders
 * pending jobs by priority first, so the earliest run_at is the first entry of one of its priorities:
 * the recursive part steps from priority to priority (one index probe each, however many jobs wait)
 * and each priority's first entry is read by one more probe.
 */
const NEXT_WAKE = `
  ${PENDING_PRIORITIES}
  SELECT (SELECT min((SELECT t.run_at FROM tickwork_jobs t WHERE t.queue = ? AND t.status = 'pending' AND t.priority = p.priority ORDER BY t.run_at LIMIT 1))
          FROM p WHERE p.priority IS NOT NULL) AS due,
         (SELECT min(lease_until) + 1 FROM tickwork_jobs WHERE queue = ? AND status = 'running') AS lease`;

/**
 * A queue's pending jobs due after `now`: the claim index orders them by priority first, so each
 * priority (stepped to as NEXT_WAKE does, one probe each) gives one range of run times past `now`,
 * counted in the index. The cost is the priorities and the scheduled jobs, never the due backlog.
 */
const COUNT_SCHEDULED = `
  ${PENDING_PRIORITIES}
  SELECT sum((SELECT count(*) FROM tickwork_jobs t WHERE t.queue = ? AND t.status = 'pending' AND t.priority = p.priority AND t.run_at > ?)) AS n
  FROM p WHERE p.priority IS NOT NULL`;

/**
 * The queue on SQLite. Every operation is one synchronous transaction, so a batch of claims or
 * outcomes costs one commit: that is what lets SQLite run many more jobs per second than it can
 * commit single-row transactions.
 */
export class SqliteQueueStore extends SharedQueueStore implements QueueStore {
  /** `sql`: the same connection through the shared SQL seam, for the flow-control statements. */
  private readonly dollar: <T>(sql: string, params: readonly unknown[]) => T[];
  private readonly tx: SqlTx;

  constructor(
    private readonly db: SqliteExecutor,
    sql: SqlDb,
    readonly maxPayloadBytes?: number,
  ) {
    super(sql, SQLITE_DIALECT, RETRY);
    this.dollar = sqliteDollarRunner(db);
    this.tx = sqlTx(sql.maxParams);
  }

  async insertFlow({ nodes, now }: Parameters<QueueStore["insertFlow"]>[0]): Promise<string[]> {
    return this.db.transaction(() => {
      const ids: number[] = [];
      for (const node of nodes) {
        const traced = node.traceContext !== undefined;
        const [row] = this.db.all<{ id: number }>(
          `INSERT INTO tickwork_jobs (queue, payload, key, status, priority, run_at, max_attempts, max_attempts_from_queue, group_key, created_at, waited,
             parent_id, children_total, children_waiting, child_failure${traced ? ", trace_context" : ""})
           VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?${traced ? ", ?" : ""}) RETURNING id`,
          [node.queue, inlinePayload(node.payload), node.key, node.priority, node.runAt, node.maxAttempts, node.maxAttemptsFromQueue ? 1 : 0, node.group ?? null, now, node.waited ? 1 : 0,
           node.parent < 0 ? null : ids[node.parent]!, node.children, node.children, node.childFailure, ...(traced ? [node.traceContext!] : [])],
        );
        ids.push(row!.id);
        this.storePayload(row!.id, node.payload);
      }
      return ids.map(String);
    });
  }

  /** Puts a long payload of the job row just inserted beside it (inside the caller's transaction). */
  private storePayload(id: number, payload: string): void {
    const write = payloadWrite(id, payload);
    if (write) this.dollar(write.sql, write.params);
  }

  async insertMany({ queue, rows, now, tx, claim }: Parameters<QueueStore["insertMany"]>[0]): Promise<InsertResult[]> {
    if (tx) throw new InvalidInputError("transactional enqueue (the tx option) needs the PostgreSQL store");
    return this.db.transaction(() =>
      rows.map((row): InsertResult => {
        // A claimed row (a hand-off to this process's idle worker) is written running its first attempt.
        // A traced row adds its trace context; an untraced one runs the statement it always did.
        const traced = row.traceContext !== undefined;
        const inserted = this.db.all<{ id: number }>(
          traced ? INSERT_TRACED : INSERT,
          [queue, inlinePayload(row.payload), row.key, claim ? "running" : "pending", row.priority, row.runAt, row.maxAttempts, row.maxAttemptsFromQueue ? 1 : 0, row.group ?? null, now,
           claim ? 1 : 0, claim?.workerId ?? null, claim?.leaseUntil ?? null, claim ? now : null, row.waited ? 1 : 0, ...(traced ? [row.traceContext!] : [])],
        )[0];
        if (inserted) {
          this.storePayload(inserted.id, row.payload);
          return { id: String(inserted.id), duplicate: false };
        }
        const holder = this.db.all<JobRow>(`SELECT ${JOB} FROM tickwork_jobs WHERE queue = ? AND key = ? AND ${LIVE}`, [queue, row.key])[0];
        if (!holder) throw new Error(`tickwork: insert of key ${row.key} conflicted but no live job holds it`);
        return { id: String(holder.id), duplicate: true, existing: toJob(holder, true) };
      }),
    );
  }

  async claimDue({ queue, limit, now, leaseUntil, workerId, queueMaxAttempts, start = limit }: Parameters<QueueStore["claimDue"]>[0]): Promise<Job[]> {
    // `+run_at` keeps run_at out of the index search, so the claim walks tickwork_jobs_claim in its
    // order and stops at LIMIT. Given statistics (ANALYZE, PRAGMA optimize), SQLite otherwise searches
    // run_at <= now across priorities (a skip-scan) and sorts every due job to take the first few, on
    // every claim: quadratic in a backlog.
    const due = `SELECT id FROM tickwork_jobs WHERE queue = ? AND status = 'pending' AND +run_at <= ?
                   AND NOT EXISTS (SELECT 1 FROM tickwork_queue_pauses WHERE queue = ? AND group_key = '')
                 ORDER BY priority, run_at, id LIMIT ?`;
    const set = `UPDATE tickwork_jobs SET status = 'running', attempts = attempts + 1, worker_id = ?, lease_until = ?,
                   max_attempts = CASE WHEN max_attempts_from_queue = 1 THEN coalesce(?, max_attempts) ELSE max_attempts END`;
    // All started, or all held (a worker whose slots are full claims ahead): one statement, as both
    // are common at full speed (about half of a busy worker's claims start none).
    if (start >= limit || start <= 0) {
      const rows = this.db.all<JobRow>(`${set}, started_at = ? WHERE id IN (${due}) RETURNING ${CLAIMED}`, [workerId, leaseUntil, queueMaxAttempts ?? null, start > 0 ? now : null, queue, now, queue, limit]);
      return rows.map((row) => toJob(row, true)).sort(byClaimOrder);
    }
    // The first `start` in claim order start now, the rest are held unstarted: the ids are read in
    // that order first, so each row is written once (SQLite rewrites a whole row per UPDATE).
    return this.db.transaction(() => {
      const ids = this.db.all<{ id: number }>(due, [queue, now, queue, limit]).map((r) => r.id);
      if (ids.length === 0) return [];
      const rows = this.db.all<JobRow>(
        `${set}, started_at = CASE WHEN id IN (SELECT value FROM json_each(?)) THEN ? END WHERE id IN (SELECT value FROM json_each(?)) RETURNING ${CLAIMED}`,
        [workerId, leaseUntil, queueMaxAttempts ?? null, `[${ids.slice(0, Math.max(0, start)).join(",")}]`, now, `[${ids.join(",")}]`],
      );
      return rows.map((row) => toJob(row, true)).sort(byClaimOrder);
    });
  }

  async settleMany({ workerId, outcomes, now }: Parameters<QueueStore["settleMany"]>[0]) {
    const refused: string[] = [];
    const woke = this.db.transaction(() => {
      const ended: EndedChild[] = [];
      const accept = (outcome: JobOutcome, settled: boolean) => {
        if (!settled) refused.push(outcome.id);
        else {
          const child = endedChild(outcome);
          if (child) ended.push(child);
        }
      };
      const successes = outcomes.filter((o) => o.kind === "succeeded");
      if (successes.length > 1) {
        const settled = this.settleSuccesses(workerId, successes, now);
        for (const outcome of successes) accept(outcome, settled.has(Number(outcome.id)));
      }
      for (const outcome of outcomes) if (successes.length <= 1 || outcome.kind !== "succeeded") accept(outcome, this.settleOne(workerId, outcome, now) > 0);
      return ended.length ? this.propagate(ended, now).woke : [];
    });
    return { refused, woke };
  }

  /**
   * Successes, the bulk of any batch, in one statement: a statement per row costs about twice as
   * much per job in the drivers' per-call overhead as the row's own update. The outcomes travel as
   * one JSON array of [id, attempt, startedAt, result] (one binding however many: a Durable Object
   * allows 100) and the ids the fence let through come back. Each field is read from its row's JSON
   * text once per row, so the statement reads the start or the result only when some outcome of the
   * batch carries one.
   */
  private settleSuccesses(workerId: string, successes: Extract<JobOutcome, { kind: "succeeded" }>[], now: number): Set<number> {
    const starts = successes.some((o) => o.startedAt !== undefined);
    const results = successes.some((o) => o.result !== undefined);
    const rows = successes.map((o) => (results ? [Number(o.id), o.attempt, o.startedAt ?? null, o.result ?? null] : starts ? [Number(o.id), o.attempt, o.startedAt ?? null] : [Number(o.id), o.attempt]));
    // `+status` keeps the running-jobs indexes out of reach, so each row is found by its rowid.
    const settled = this.db.all<{ id: number }>(
      `UPDATE tickwork_jobs SET status = 'succeeded', finished_at = ?, worker_id = NULL, lease_until = NULL
         ${starts ? ", started_at = coalesce(started_at, json_extract(o.value, '$[2]'))" : ""}${results ? ", result = coalesce(json_extract(o.value, '$[3]'), result)" : ""}
       FROM json_each(?) AS o
       WHERE tickwork_jobs.id = json_extract(o.value, '$[0]') AND +status = 'running' AND attempts = json_extract(o.value, '$[1]') AND worker_id = ?
       RETURNING tickwork_jobs.id`,
      [now, JSON.stringify(rows), workerId],
    );
    return new Set(settled.map((r) => r.id));
  }

  /** Counts ended flow children in their parents, inside the caller's transaction. */
  private propagate(ended: EndedChild[], now: number) {
    return runBodySync(propagate(this.tx, ended, now), (s) => this.dollar(s.sql, s.params));
  }

  private settleOne(workerId: string, outcome: JobOutcome, now: number): number {
    const fence = "WHERE id = ? AND status = 'running' AND attempts = ? AND worker_id = ?";
    const id = Number(outcome.id);
    // A job held unstarted whose start's mark may not be written yet: its start comes with its outcome.
    const started = outcome.kind === "released" ? null : (outcome.startedAt ?? null);
    switch (outcome.kind) {
      case "succeeded":
        return this.db.run(
          `UPDATE tickwork_jobs SET status = 'succeeded', finished_at = ?, result = coalesce(?, result), started_at = coalesce(started_at, ?),
             worker_id = NULL, lease_until = NULL ${fence}`,
          [now, outcome.result ?? null, started, id, outcome.attempt, workerId],
        );
      case "failed":
        return outcome.retryAt === null
          ? this.db.run(
              `UPDATE tickwork_jobs SET status = 'failed', finished_at = ?, last_error = ?, started_at = coalesce(started_at, ?), worker_id = NULL, lease_until = NULL ${fence}`,
              [now, outcome.error, started, id, outcome.attempt, workerId],
            )
          : this.db.run(
              `UPDATE tickwork_jobs SET status = 'pending', run_at = ?, last_error = ?, worker_id = NULL, lease_until = NULL, started_at = NULL,
                 history = ${pushHistory("?", "'failed'", "?", "coalesce(started_at, ?)")} ${fence}`,
              [outcome.retryAt, outcome.error, started, now, outcome.error, id, outcome.attempt, workerId],
            );
      case "snoozed":
        return this.db.run(
          `UPDATE tickwork_jobs SET status = 'pending', run_at = ?, attempts = attempts - 1, snoozes = snoozes + 1, worker_id = NULL, lease_until = NULL,
             started_at = NULL, history = ${pushHistory("?", "'snoozed'", "NULL", "coalesce(started_at, ?)")} ${fence}`,
          [outcome.runAt, started, now, id, outcome.attempt, workerId],
        );
      case "released":
        return this.db.run(
          `UPDATE tickwork_jobs SET status = 'pending', attempts = attempts - 1, run_at = min(run_at, ?), started_at = NULL, worker_id = NULL, lease_until = NULL
           ${fence}`,
          [now, id, outcome.attempt, workerId],
        );
    }
  }

  async heartbeat({ workerId, ids, leaseUntil }: Parameters<QueueStore["heartbeat"]>[0]): Promise<string[]> {
    if (ids.length === 0) return [];
    // The ids travel as one JSON array: one binding however many (a Durable Object allows 100).
    // `+status` keeps the running-jobs indexes out of reach, so the rows are found by rowid rather
    // than by scanning every running job.
    return this.db
      .all<{ id: number }>(
        `UPDATE tickwork_jobs SET lease_until = ?
         WHERE id IN (SELECT value FROM json_each(?)) AND worker_id = ? AND +status = 'running' RETURNING id`,
        [leaseUntil, `[${ids.map(Number).join(",")}]`, workerId],
      )
      .map((r) => String(r.id));
  }

  async markStarted({ workerId, jobs }: Parameters<QueueStore["markStarted"]>[0]): Promise<string[]> {
    return this.db.transaction(() =>
      jobs
        .filter(({ id, attempt, at }) =>
          this.db.run(
            `UPDATE tickwork_jobs SET started_at = ? WHERE id = ? AND attempts = ? AND worker_id = ? AND status = 'running' AND started_at IS NULL`,
            [at, Number(id), attempt, workerId],
          ) > 0,
        )
        .map(({ id }) => id),
    );
  }

  async rescueExpired({ queues, now, limit }: { queues: string[]; now: number; limit: number }): Promise<RescuedJob[]> {
    if (queues.length === 0) return [];
    return this.db.transaction(() => {
      const rescued = this.rescueRows(queues, now, limit);
      const ended = rescued.filter((j) => j.status === "failed" && j.parent != null).map((j) => ({ parent: String(j.parent), child: j.id, failed: true, error: LEASE_EXPIRED_ERROR }));
      if (ended.length) this.propagate(ended, now);
      return rescued.map(({ parent: _, ...job }) => job);
    });
  }

  private rescueRows(queues: string[], now: number, limit: number) {
    return this.db.all<RescuedJob & { parent: number | null }>(
      // A job claimed but never started gets its attempt back (see RESCUE_EXPIRED in queue/store/postgres/sql.ts).
      `UPDATE tickwork_jobs SET
         status = CASE WHEN started_at IS NOT NULL AND attempts >= max_attempts THEN 'failed' ELSE 'pending' END,
         attempts = CASE WHEN started_at IS NULL THEN attempts - 1 ELSE attempts END,
         finished_at = CASE WHEN started_at IS NOT NULL AND attempts >= max_attempts THEN ? END,
         history = CASE WHEN started_at IS NULL OR attempts >= max_attempts THEN history ELSE ${pushHistory("?", "'lease_expired'", "?")} END,
         started_at = CASE WHEN attempts >= max_attempts THEN started_at END,
         last_error = CASE WHEN started_at IS NULL THEN last_error ELSE ? END,
         run_at = min(run_at, ?), worker_id = NULL, lease_until = NULL
       WHERE id IN (SELECT id FROM tickwork_jobs WHERE status = 'running' AND lease_until < ?
                    AND queue IN (${queues.map(() => "?").join(", ")}) ORDER BY lease_until LIMIT ?)
       RETURNING CAST(id AS TEXT) AS id, queue, attempts, max_attempts AS maxAttempts, status, parent_id AS parent`,
      [now, now, LEASE_EXPIRED_ERROR, LEASE_EXPIRED_ERROR, now, now, ...queues, limit],
    );
  }

  async nextWakeAt({ queues, leases = true }: { queues: string[]; leases?: boolean }): Promise<number | null> {
    let next: number | null = null;
    for (const queue of queues) {
      const row = this.db.all<{ due: number | null; lease: number | null }>(NEXT_WAKE, [queue, queue, queue, queue])[0];
      for (const at of [row?.due, leases ? row?.lease : null]) if (at != null && (next === null || at < next)) next = at;
    }
    return next;
  }

  async countByStatus({ queues }: { queues?: string[] }) {
    if (queues?.length === 0) return [];
    // Kept by the writes' triggers, one row per queue: what a count costs whatever the table holds.
    const rows = this.db.all<{ queue: string } & Record<JobStatus, number>>(
      `SELECT queue, pending, running, succeeded, failed, cancelled FROM tickwork_job_counts ${queues ? `WHERE queue IN (${queues.map(() => "?").join(", ")})` : ""}`,
      queues ?? [],
    );
    return foldCounts(rows.flatMap(({ queue, ...counts }) => JOB_STATUSES.map((status) => ({ queue, status, n: counts[status] }))));
  }

  async retryFailed({ queue, now }: { queue: string; now: number }): Promise<number> {
    // Jobs outside any flow in one statement; a flow's, a parent's children at a time, each in its own
    // transaction: one refused (see retryInFlow) leaves the others retried. FINISHED, implied by
    // 'failed', lets SQLite read the finished rows' partial index.
    const plain = this.db.run(
      `UPDATE tickwork_jobs SET ${RETRY_SET}
       WHERE queue = ? AND status = 'failed' AND ${FINISHED} AND parent_id IS NULL AND children_total = 0 AND ${KEY_FREE}`,
      [now, queue],
    );
    const inFlows = this.db.all<{ id: number; parent_id: number | null }>(
      `SELECT id, parent_id FROM tickwork_jobs WHERE queue = ? AND status = 'failed' AND ${FINISHED} AND (parent_id IS NOT NULL OR children_total > 0)`,
      [queue],
    );
    return plain + (await retryEachGroup(retryGroups(inFlows), async (ids) => this.db.transaction(() => this.retryInFlow(ids, now).length)));
  }

  private retryInFlow(ids: readonly string[], now: number): string[] {
    return runBodySync(retryInFlow(this.tx, RETRY, ids, now), (s) => this.dollar(s.sql, s.params));
  }

  async cancelPending({ queue, now }: { queue: string; now: number }): Promise<{ cancelled: number; waited: string[] }> {
    return this.db.transaction(() => {
      // Read first, then write: only the jobs someone awaits or a parent counts come back, never the
      // whole backlog, and nothing can move between the two inside this write transaction.
      const told = this.db.all<{ id: number; parent_id: number | null; waited: number }>(
        `SELECT id, parent_id, waited FROM tickwork_jobs WHERE queue = ? AND status = 'pending' AND (parent_id IS NOT NULL OR waited = 1)`,
        [queue],
      );
      const cancelled = this.db.run(
        `UPDATE tickwork_jobs SET status = 'cancelled', finished_at = ?, worker_id = NULL, lease_until = NULL WHERE queue = ? AND status = 'pending'`,
        [now, queue],
      );
      const ended = told.filter((r) => r.parent_id != null).map((r) => ({ parent: String(r.parent_id), child: String(r.id), failed: true, error: "cancelled" }));
      const effects = ended.length ? this.propagate(ended, now) : { failedWaited: [] };
      return { cancelled, waited: [...told.filter((r) => r.waited).map((r) => String(r.id)), ...effects.failedWaited] };
    });
  }

  async countScheduled({ queues, now }: { queues: string[]; now: number }): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const queue of queues) {
      const n = this.db.all<{ n: number | null }>(COUNT_SCHEDULED, [queue, queue, queue, now])[0]?.n ?? 0;
      if (n > 0) counts[queue] = n;
    }
    return counts;
  }

  /** Drops the counters of queues with no job left (a queue's row is made again by its next insert). */
  async compactCounts(): Promise<number> {
    return this.db.run(`DELETE FROM tickwork_job_counts WHERE pending = 0 AND running = 0 AND succeeded = 0 AND failed = 0 AND cancelled = 0`);
  }

  async pruneFinished({ status, before, limit }: Parameters<QueueStore["pruneFinished"]>[0]): Promise<number> {
    return this.db.run(
      `DELETE FROM tickwork_jobs WHERE id IN (
         SELECT id FROM tickwork_jobs WHERE status = ? AND ${FINISHED} AND finished_at < ? ORDER BY finished_at LIMIT ?
       )`,
      [status, before, limit],
    );
  }
}
