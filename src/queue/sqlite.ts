import { InvalidInputError } from "../core/errors.js";
import type { SqlDb } from "../db/sql-db.js";
import type { SqliteExecutor } from "../db/sqlite-executor.js";
import { FlowSql } from "./flow-sql.js";
import { FlowControlledStore } from "./flow-store.js";
import { LEASE_EXPIRED_ERROR, byClaimOrder, foldCounts, toJob, type JobRow } from "./rows.js";
import type { InsertResult, ListParams, JobOutcome, QueueStore, RescuedJob } from "./store.js";
import type { Job, JobStatus } from "./job.js";

const LIVE = "status IN ('pending', 'running')";
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
 * The earliest pending run_at and the earliest lease to lapse of one queue. The claim index orders
 * pending jobs by priority first, so the earliest run_at is the first entry of one of its priorities:
 * the recursive part steps from priority to priority (one index probe each, however many jobs wait)
 * and each priority's first entry is read by one more probe.
 */
const NEXT_WAKE = `
  WITH RECURSIVE p(priority) AS (
    SELECT (SELECT priority FROM tickwork_jobs WHERE queue = ? AND status = 'pending' ORDER BY priority LIMIT 1)
    UNION ALL
    SELECT (SELECT t.priority FROM tickwork_jobs t WHERE t.queue = ? AND t.status = 'pending' AND t.priority > p.priority ORDER BY t.priority LIMIT 1)
    FROM p WHERE p.priority IS NOT NULL
  )
  SELECT (SELECT min((SELECT t.run_at FROM tickwork_jobs t WHERE t.queue = ? AND t.status = 'pending' AND t.priority = p.priority ORDER BY t.run_at LIMIT 1))
          FROM p WHERE p.priority IS NOT NULL) AS due,
         (SELECT min(lease_until) + 1 FROM tickwork_jobs WHERE queue = ? AND status = 'running') AS lease`;

/**
 * The queue on SQLite. Every operation is one synchronous transaction, so a batch of claims or
 * outcomes costs one commit: that is what lets SQLite run many more jobs per second than it can
 * commit single-row transactions.
 */
export class SqliteQueueStore extends FlowControlledStore implements QueueStore {
  /** `sql`: the same connection through the shared SQL seam, for the flow-control statements. */
  constructor(
    private readonly db: SqliteExecutor,
    sql: SqlDb,
  ) {
    super(new FlowSql(sql, { postgres: false, payloadIsText: true }));
  }

  async insertMany({ queue, rows, now, tx, claim }: Parameters<QueueStore["insertMany"]>[0]): Promise<InsertResult[]> {
    if (tx) throw new InvalidInputError("transactional enqueue (the tx option) needs the PostgreSQL store");
    return this.db.transaction(() =>
      rows.map((row): InsertResult => {
        // A claimed row (a hand-off to this process's idle worker) is written running its first attempt.
        const inserted = this.db.all<{ id: number }>(
          `INSERT INTO tickwork_jobs (queue, payload, key, status, priority, run_at, max_attempts, max_attempts_from_queue, group_key, created_at, attempts, worker_id, lease_until, started_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
          [queue, row.payload, row.key, claim ? "running" : "pending", row.priority, row.runAt, row.maxAttempts, row.maxAttemptsFromQueue ? 1 : 0, row.group ?? null, now,
           claim ? 1 : 0, claim?.workerId ?? null, claim?.leaseUntil ?? null, claim ? now : null],
        )[0];
        if (inserted) return { id: String(inserted.id), duplicate: false };
        const holder = this.db.all<JobRow>(`SELECT * FROM tickwork_jobs WHERE queue = ? AND key = ? AND ${LIVE}`, [queue, row.key])[0];
        if (!holder) throw new Error(`tickwork: insert of key ${row.key} conflicted but no live job holds it`);
        return { id: String(holder.id), duplicate: true, existing: toJob(holder, true) };
      }),
    );
  }

  async claimDue({ queue, limit, now, leaseUntil, workerId, queueMaxAttempts }: Parameters<QueueStore["claimDue"]>[0]): Promise<Job[]> {
    // `+run_at` keeps run_at out of the index search, so the claim walks tickwork_jobs_claim in its
    // order and stops at LIMIT. Given statistics (ANALYZE, PRAGMA optimize), SQLite otherwise searches
    // run_at <= now across priorities (a skip-scan) and sorts every due job to take the first few, on
    // every claim: quadratic in a backlog.
    const rows = this.db.all<JobRow>(
      `UPDATE tickwork_jobs SET status = 'running', attempts = attempts + 1, worker_id = ?, lease_until = ?, started_at = ?,
         max_attempts = CASE WHEN max_attempts_from_queue = 1 THEN coalesce(?, max_attempts) ELSE max_attempts END
       WHERE id IN (SELECT id FROM tickwork_jobs WHERE queue = ? AND status = 'pending' AND +run_at <= ?
                      AND NOT EXISTS (SELECT 1 FROM tickwork_queue_pauses WHERE queue = ? AND group_key = '')
                    ORDER BY priority, run_at, id LIMIT ?)
       RETURNING *`,
      [workerId, leaseUntil, now, queueMaxAttempts ?? null, queue, now, queue, limit],
    );
    return rows.map((row) => toJob(row, true)).sort(byClaimOrder);
  }

  async settleMany({ outcomes, now }: { outcomes: JobOutcome[]; now: number }) {
    const refused: string[] = [];
    this.db.transaction(() => {
      for (const outcome of outcomes) {
        if (this.settleOne(outcome, now) === 0) refused.push(outcome.id);
      }
    });
    return { refused };
  }

  private settleOne(outcome: JobOutcome, now: number): number {
    const fence = "WHERE id = ? AND status = 'running' AND attempts = ?";
    const id = Number(outcome.id);
    switch (outcome.kind) {
      case "succeeded":
        return this.db.run(
          `UPDATE tickwork_jobs SET status = 'succeeded', finished_at = ?, worker_id = NULL, lease_until = NULL ${fence}`,
          [now, id, outcome.attempt],
        );
      case "failed":
        return outcome.retryAt === null
          ? this.db.run(
              `UPDATE tickwork_jobs SET status = 'failed', finished_at = ?, last_error = ?, worker_id = NULL, lease_until = NULL ${fence}`,
              [now, outcome.error, id, outcome.attempt],
            )
          : this.db.run(
              `UPDATE tickwork_jobs SET status = 'pending', run_at = ?, last_error = ?, worker_id = NULL, lease_until = NULL ${fence}`,
              [outcome.retryAt, outcome.error, id, outcome.attempt],
            );
      case "released":
        return this.db.run(
          `UPDATE tickwork_jobs SET status = 'pending', attempts = attempts - 1, run_at = min(run_at, ?), started_at = NULL, worker_id = NULL, lease_until = NULL ${fence}`,
          [now, id, outcome.attempt],
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

  async rescueExpired({ queues, now, limit }: { queues: string[]; now: number; limit: number }): Promise<RescuedJob[]> {
    if (queues.length === 0) return [];
    return this.db.all<RescuedJob>(
      `UPDATE tickwork_jobs SET
         status = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'pending' END,
         finished_at = CASE WHEN attempts >= max_attempts THEN ? ELSE NULL END,
         run_at = min(run_at, ?), last_error = ?, worker_id = NULL, lease_until = NULL
       WHERE id IN (SELECT id FROM tickwork_jobs WHERE status = 'running' AND lease_until < ?
                    AND queue IN (${queues.map(() => "?").join(", ")}) ORDER BY lease_until LIMIT ?)
       RETURNING CAST(id AS TEXT) AS id, queue, attempts, max_attempts AS maxAttempts, status`,
      [now, now, LEASE_EXPIRED_ERROR, now, ...queues, limit],
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

  async get({ id }: { id: string }): Promise<Job | null> {
    const row = this.db.all<JobRow>(`SELECT * FROM tickwork_jobs WHERE id = ?`, [Number(id)])[0];
    return row ? toJob(row, true) : null;
  }

  async list({ queue, status, key, before, limit }: ListParams): Promise<Job[]> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    const add = (clause: string, value: string | number) => {
      where.push(clause);
      params.push(value);
    };
    if (queue !== undefined) add("queue = ?", queue);
    if (status !== undefined) add("status = ?", status);
    if (key !== undefined) add("key = ?", key);
    if (before !== undefined) add("id < ?", Number(before));
    const rows = this.db.all<JobRow>(
      `SELECT * FROM tickwork_jobs ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT ?`,
      [...params, limit],
    );
    return rows.map((row) => toJob(row, true));
  }

  async countByStatus({ queues }: { queues?: string[] }) {
    const filter = queues ? `WHERE queue IN (${queues.map(() => "?").join(", ")})` : "";
    return foldCounts(
      this.db.all<{ queue: string; status: JobStatus; n: number }>(
        `SELECT queue, status, count(*) AS n FROM tickwork_jobs ${filter} GROUP BY queue, status`,
        queues ?? [],
      ),
    );
  }

  async retry({ id, now }: { id: string; now: number }): Promise<Job | null> {
    const row = this.db.all<JobRow>(
      `UPDATE tickwork_jobs SET status = 'pending', attempts = 0, run_at = ?, started_at = NULL, finished_at = NULL
       WHERE id = ? AND status IN ('failed', 'cancelled') AND ${KEY_FREE} RETURNING *`,
      [now, Number(id)],
    )[0];
    return row ? toJob(row, true) : null;
  }

  async retryFailed({ queue, now }: { queue: string; now: number }): Promise<number> {
    return this.db.run(
      `UPDATE tickwork_jobs SET status = 'pending', attempts = 0, run_at = ?, started_at = NULL, finished_at = NULL
       WHERE queue = ? AND status = 'failed' AND ${FINISHED} AND ${KEY_FREE}`,
      [now, queue],
    );
  }

  async cancel({ id, now }: { id: string; now: number }): Promise<Job | null> {
    const row = this.db.all<JobRow>(
      `UPDATE tickwork_jobs SET status = 'cancelled', finished_at = ?, worker_id = NULL, lease_until = NULL
       WHERE id = ? AND ${LIVE} RETURNING *`,
      [now, Number(id)],
    )[0];
    return row ? toJob(row, true) : null;
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
