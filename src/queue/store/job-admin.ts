import type { SqlDb } from "../../db/sql-db.js";
import type { QueueDialect } from "./dialect.js";
import { propagate, type FlowEffects } from "./flow-tree.js";
import { retryInFlow, type RetryStatement } from "./flow-retry.js";
import type { ChildResult, Job } from "../job.js";
import { toChildResult, toJob, type ChildRow, type JobRow } from "./rows.js";
import type { ListParams, QueueAdmin, QueueStore } from "./store.js";

/** What the admin operations tell other processes after a change (nothing on a store no other process listens to). */
export interface AdminNotices {
  /** Jobs of these queues became due: workers elsewhere look again. */
  queues(queues: string[]): Promise<void>;
  /** These awaited jobs ended or reported progress: their waiters elsewhere read them. */
  jobs(ids: string[]): Promise<void>;
}

export const NO_NOTICES: AdminNotices = { queues: async () => {}, jobs: async () => {} };

/**
 * A failed or cancelled list names its status as a literal, the condition of its partial index
 * (tickwork_jobs_failed, tickwork_jobs_cancelled): SQLite uses a partial index only for a query that
 * states its condition, and PostgreSQL's generic plan of a parameter cannot either.
 */
const LITERAL_STATUSES = new Set(["failed", "cancelled"]);

/** One job's reads and the operator's actions on it (get, list, retry, cancel, promote...), one SQL text for both dialects. */
export class JobAdmin implements QueueAdmin {
  constructor(
    private readonly db: SqlDb,
    private readonly d: QueueDialect,
    /** The dialect's retry of failed or cancelled jobs ($1 their ids, $2 now); see flow-retry.ts. */
    private readonly retryStatement: RetryStatement,
    private readonly notices: AdminNotices = NO_NOTICES,
  ) {}

  async countHeld({ queues }: { queues: string[] }): Promise<Record<string, number>> {
    if (queues.length === 0) return {};
    const list = this.d.inList(1, queues, "text");
    // `status = 'running'` as a literal: the running jobs' partial index (a few rows: what workers hold).
    const rows = await this.db.query<{ queue: string; n: number | string }>(
      `SELECT queue, count(*) AS n FROM tickwork_jobs WHERE status = 'running' AND started_at IS NULL AND queue ${list.sql} GROUP BY queue`,
      [list.value],
    );
    return Object.fromEntries(rows.map((r) => [r.queue, Number(r.n)]));
  }

  async get({ id }: { id: string }): Promise<Job | null> {
    const [row] = await this.db.query<JobRow>(`SELECT ${this.d.jobColumns()} FROM tickwork_jobs WHERE id = $1`, [this.d.id(id)]);
    return this.job(row);
  }

  /** Marks the job awaited, so its end is signalled to every process; null when there is no such job. */
  async watch({ id }: { id: string }): Promise<Job | null> {
    const [row] = await this.db.query<JobRow>(`UPDATE tickwork_jobs SET waited = TRUE WHERE id = $1 RETURNING ${this.d.returnedJob}`, [this.d.id(id)]);
    return this.job(row);
  }

  async promote({ id, now }: { id: string; now: number }): Promise<Job | null> {
    const [row] = await this.db.query<JobRow>(
      `UPDATE tickwork_jobs SET run_at = ${this.d.least("run_at", "$2")} WHERE id = $1 AND status = 'pending' AND children_waiting = 0 RETURNING ${this.d.returnedJob}`,
      [this.d.id(id), now],
    );
    if (row) await this.notices.queues([row.queue]);
    return this.job(row);
  }

  async deleteFinished({ id }: { id: string }): Promise<Job | null> {
    const [row] = await this.db.query<JobRow>(
      `DELETE FROM tickwork_jobs WHERE id = $1 AND status IN ('succeeded', 'failed', 'cancelled') RETURNING ${this.d.returnedJob}`,
      [this.d.id(id)],
    );
    return this.job(row);
  }

  async list({ queue, status, key, due, now, minAttempts, parent, order = "newest", before, after, limit }: ListParams): Promise<Job[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (clause: string, value: unknown) => {
      params.push(value);
      where.push(clause.replace("?", `$${params.length}`));
    };
    if (queue !== undefined) add("queue = ?", queue);
    if (status !== undefined && LITERAL_STATUSES.has(status)) where.push(`status = '${status}'`);
    else if (status !== undefined) add("status = ?", status);
    if (key !== undefined) add("key = ?", key);
    if (due !== undefined) {
      where.push("status = 'pending'");
      add(due ? "run_at <= ?" : "run_at > ?", now);
    }
    if (minAttempts !== undefined) add("attempts >= ?", minAttempts);
    if (parent !== undefined) add("parent_id = ?", this.d.id(parent));
    if (before !== undefined) add("id < ?", this.d.id(before));
    if (after !== undefined) add("id > ?", this.d.id(after));
    params.push(limit);
    const rows = await this.db.query<JobRow>(
      `SELECT ${this.d.jobColumns()} FROM tickwork_jobs ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id ${order === "oldest" ? "ASC" : "DESC"} LIMIT $${params.length}`,
      params,
    );
    return rows.map((row) => toJob(row, this.d.payloadIsText));
  }

  async setProgress({ id, attempt, progress }: Parameters<QueueStore["setProgress"]>[0]): Promise<boolean> {
    const [row] = await this.db.query<{ waited: boolean | number }>(
      `UPDATE tickwork_jobs SET progress = ${this.d.json("$3")} WHERE id = $1 AND status = 'running' AND attempts = $2 RETURNING waited`,
      [this.d.id(id), attempt, progress],
    );
    if (row?.waited) await this.notices.jobs([id]);
    return row !== undefined;
  }

  async childResults({ id }: { id: string }): Promise<ChildResult[]> {
    const rows = await this.db.query<ChildRow>(`SELECT id, queue, status, result, last_error FROM tickwork_jobs WHERE parent_id = $1 ORDER BY id`, [this.d.id(id)]);
    return rows.map((row) => toChildResult(row, this.d.payloadIsText));
  }

  /** A failed or cancelled job back to pending with a fresh set of attempts (in a flow, as flow-retry.ts allows). */
  async retry({ id, now }: { id: string; now: number }): Promise<Job | null> {
    const { retryStatement, d } = this;
    const row = await this.db.transaction(function* (tx) {
      if ((yield* retryInFlow(tx, retryStatement, [id], now)).length === 0) return undefined;
      const [row] = yield* tx.query<JobRow>(`SELECT ${d.jobColumns()} FROM tickwork_jobs WHERE id = $1`, [d.id(id)]);
      return row;
    });
    if (row) await this.notices.queues([row.queue]);
    return this.job(row);
  }

  /** A pending or running job ends cancelled; a flow's parent counts it as a child that failed. */
  async cancel({ id, now }: { id: string; now: number }): Promise<Job | null> {
    const { d } = this;
    const { row, effects } = await this.db.transaction(function* (tx) {
      const [row] = yield* tx.query<JobRow>(
        `UPDATE tickwork_jobs SET status = 'cancelled', finished_at = $2, worker_id = NULL, lease_until = NULL
         WHERE id = $1 AND status IN ('pending', 'running') RETURNING ${d.returnedJob}`,
        [d.id(id), now],
      );
      const effects: FlowEffects =
        row?.parent_id != null ? yield* propagate(tx, [{ parent: String(row.parent_id), child: id, failed: true, error: "cancelled" }], now, d.locksRows) : { woke: [], failedWaited: [] };
      return { row, effects };
    });
    await this.notices.queues(effects.woke);
    await this.notices.jobs([...(row?.waited ? [id] : []), ...effects.failedWaited]);
    return this.job(row);
  }

  private job(row: JobRow | undefined): Job | null {
    return row ? toJob(row, this.d.payloadIsText) : null;
  }
}
