import type { SqlDb, SqlStatement, SqlTx } from "../../db/sql-db.js";
import type { Job } from "../job.js";
import { toJob, type JobRow } from "./rows.js";
import type { QueueDialect } from "./dialect.js";
import type { InsertResult, KeyMode, NewJobRow } from "./store.js";

type Body<T> = Generator<SqlStatement, T, unknown>;

/** A replace races another process's insert of the same key at most this often before it sees the row. */
const MAX_TRIES = 3;

/** A traced row (an engine with a tracer) adds its trace context ($11). */
const insertOne = (traced: boolean) => `
  INSERT INTO tickwork_jobs (queue, payload, key, status, priority, run_at, max_attempts, max_attempts_from_queue, group_key, created_at, waited${traced ? ", trace_context" : ""})
  VALUES ($1, $2, $3, 'pending', $4, $5, $6, ($7 = 1), $8, $9, ($10 = 1)${traced ? ", $11" : ""})
  ON CONFLICT DO NOTHING RETURNING id`;
const INSERT_ONE = insertOne(false);
const INSERT_ONE_TRACED = insertOne(true);

/**
 * Keyed enqueues with a mode, on either dialect, each one transaction of conditional writes (no read
 * then write): the pending holder is updated where it stands, the key's period is taken by an upsert
 * that only succeeds once it lapsed, so racing processes agree on one job.
 */
export class KeyedSql {
  constructor(
    private readonly db: SqlDb,
    private readonly d: QueueDialect,
  ) {}

  insertKeyed(p: { queue: string; row: NewJobRow & { key: string }; mode: KeyMode; now: number }): Promise<InsertResult> {
    return this.db.transaction((tx) => (p.mode.kind === "window" ? this.window(tx, p, p.mode.ms) : p.mode.kind === "debounce" ? this.replace(tx, p, p.now + p.mode.ms, true) : this.replace(tx, p, p.row.runAt, false)));
  }

  /** Deletes up to `limit` keys whose period ended before `before`. */
  async pruneKeys({ before, limit }: { before: number; limit: number }): Promise<number> {
    const rows = await this.db.query<{ key: string }>(
      `DELETE FROM tickwork_job_keys WHERE (queue, key) IN (SELECT queue, key FROM tickwork_job_keys WHERE until < $1 LIMIT $2) RETURNING key`,
      [before, limit],
    );
    return rows.length;
  }

  /**
   * The pending holder takes the row's payload, `runAt` and priority; or the row is written. A
   * debounce (`debounced`) never moves the holder's time back: an enqueue whose write lands after a
   * later one's (its connection came late) would set an earlier time and its older payload, so it
   * leaves the holder as it is and gets it back.
   */
  private *replace(tx: SqlTx, p: { queue: string; row: NewJobRow & { key: string }; now: number }, runAt: number, debounced: boolean): Body<InsertResult> {
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      const [updated] = yield* tx.query<JobRow>(
        `UPDATE tickwork_jobs SET payload = $1, run_at = $2, priority = $3 WHERE queue = $4 AND key = $5 AND status = 'pending'${debounced ? " AND run_at <= $2" : ""} RETURNING ${this.d.returnedJob}`,
        [this.d.rowPayload(p.row.payload), runAt, p.row.priority, p.queue, p.row.key],
      );
      if (updated) {
        if (this.d.keepsLongPayloadsApart) {
          // The new payload replaces the job's out-of-line one, or, kept in the row now, leaves none behind.
          const write = this.d.payloadWrite(updated.id, p.row.payload);
          if (write) yield* tx.query(write.sql, write.params);
          else yield* tx.query(`DELETE FROM tickwork_job_payloads WHERE id = $1`, [Number(updated.id)]);
          updated.stored_payload = write ? p.row.payload : null;
        }
        return { id: String(updated.id), duplicate: true, existing: this.job(updated) };
      }
      const inserted = yield* this.insert(tx, p.queue, { ...p.row, runAt }, p.now);
      if (inserted) return { id: String(inserted.id), duplicate: false };
      const holder = yield* this.holder(tx, p.queue, p.row.key);
      if (holder?.status === "running") return { id: holder.id, duplicate: true, existing: holder };
      if (debounced && holder?.status === "pending" && holder.runAt > runAt) return { id: holder.id, duplicate: true, existing: holder };
      // Another process inserted the key between this one's update and insert: update it now.
    }
    throw new Error(`tickwork: the key "${p.row.key}" of queue "${p.queue}" kept changing hands during ${MAX_TRIES} tries`);
  }

  private *window(tx: SqlTx, p: { queue: string; row: NewJobRow & { key: string }; now: number }, ms: number): Body<InsertResult> {
    const { queue, row, now } = p;
    // Taken if free or lapsed; otherwise the job that holds it answers, if it still exists.
    const [taken] = yield* tx.query<{ queue: string }>(
      `INSERT INTO tickwork_job_keys (queue, key, job_id, until) VALUES ($1, $2, NULL, $3)
       ON CONFLICT (queue, key) DO UPDATE SET job_id = NULL, until = $3 WHERE tickwork_job_keys.until <= $4
       RETURNING queue`,
      [queue, row.key, now + ms, now],
    );
    if (!taken) {
      const [held] = yield* tx.query<JobRow>(
        `SELECT ${this.d.jobColumns("j")} FROM tickwork_job_keys k JOIN tickwork_jobs j ON j.id = k.job_id WHERE k.queue = $1 AND k.key = $2`,
        [queue, row.key],
      );
      if (held) return { id: String(held.id), duplicate: true, existing: this.job(held) };
      // Its job was pruned (or deleted) before the period ended: nothing to give back, so take it.
      yield* tx.query(`UPDATE tickwork_job_keys SET until = $3 WHERE queue = $1 AND key = $2`, [queue, row.key, now + ms]);
    }
    const inserted = yield* this.insert(tx, queue, row, now);
    // A live job holding the key from a plain keyed enqueue is the one the period belongs to.
    const job = inserted ? null : yield* this.holder(tx, queue, row.key);
    const id = inserted ? String(inserted.id) : job!.id;
    yield* tx.query(`UPDATE tickwork_job_keys SET job_id = $3 WHERE queue = $1 AND key = $2`, [queue, row.key, Number(id)]);
    return inserted ? { id, duplicate: false } : { id, duplicate: true, existing: job! };
  }

  private *insert(tx: SqlTx, queue: string, row: NewJobRow, now: number): Body<{ id: number | string } | undefined> {
    const traced = row.traceContext !== undefined;
    const [inserted] = yield* tx.query<{ id: number | string }>(traced ? INSERT_ONE_TRACED : INSERT_ONE, [
      queue, this.d.rowPayload(row.payload), row.key, row.priority, row.runAt, row.maxAttempts, row.maxAttemptsFromQueue ? 1 : 0, row.group ?? null, now, row.waited ? 1 : 0,
      ...(traced ? [row.traceContext] : []),
    ]);
    const write = inserted ? this.d.payloadWrite(inserted.id, row.payload) : undefined;
    if (write) yield* tx.query(write.sql, write.params);
    return inserted;
  }

  private *holder(tx: SqlTx, queue: string, key: string): Body<Job | undefined> {
    const [row] = yield* tx.query<JobRow>(`SELECT ${this.d.jobColumns()} FROM tickwork_jobs WHERE queue = $1 AND key = $2 AND status IN ('pending', 'running')`, [queue, key]);
    return row ? this.job(row) : undefined;
  }

  private job(row: JobRow): Job {
    return toJob(row, this.d.payloadIsText);
  }
}
