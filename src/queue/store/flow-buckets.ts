import type { SqlStatement, SqlTx } from "../../db/sql-db.js";
import type { BucketState } from "../flow-control/bucket.js";
import type { QueueDialect } from "./dialect.js";

/** A statement body: its statements, yielded to whichever executor runs the transaction. */
export type Body<T> = Generator<SqlStatement, T, unknown>;

/** The rate bucket of one group of a queue under groupRateLimit. */
export function groupBucket(queue: string, group: string): string {
  return `group:${queue}/${group}`;
}

interface LimitRow {
  bucket: string;
  tat: number | string;
  paused_until: number | string | null;
}

function toState(row: LimitRow): BucketState {
  return { tat: Number(row.tat), pausedUntil: row.paused_until === null ? null : Number(row.paused_until) };
}

/**
 * Reads buckets shared with other queues and with limiters' own takes, locked until the transaction
 * ends. On PostgreSQL a missing row is written first so there is a row to lock; SQLite's write lock
 * already holds everything.
 */
export function* lockBuckets(tx: SqlTx, d: QueueDialect, buckets: string[], now: number): Body<Map<string, BucketState>> {
  if (buckets.length === 0) return new Map();
  // Sorted, so two transactions locking the same buckets take them in the same order (no deadlock).
  const sorted = [...new Set(buckets)].sort();
  if (d.locksRows) {
    // A missing row is written first, so there is a row to lock.
    yield* tx.query(`INSERT INTO tickwork_limits (bucket, tat, paused_until, updated_at) SELECT b, $2::bigint, NULL, $2::bigint FROM unnest($1::text[]) AS b ON CONFLICT DO NOTHING`, [sorted, now]);
  }
  return yield* readBuckets(tx, d, sorted, d.locksRows ? " ORDER BY bucket FOR UPDATE" : "");
}

/** The stored state of some buckets (`lock`: a clause that locks the rows read). */
export function* readBuckets(tx: SqlTx, d: QueueDialect, buckets: string[], lock = ""): Body<Map<string, BucketState>> {
  const states = new Map<string, BucketState>();
  if (buckets.length === 0) return states;
  const list = d.inList(1, buckets, "text");
  const rows = yield* tx.query<LimitRow>(`SELECT bucket, tat, paused_until FROM tickwork_limits WHERE bucket ${list.sql}${lock}`, [list.value]);
  for (const row of rows) states.set(row.bucket, toState(row));
  return states;
}

export function* writeBuckets(tx: SqlTx, d: QueueDialect, entries: [string, BucketState][], now: number): Body<void> {
  if (entries.length === 0) return;
  if (d.bindsArrays) {
    yield* tx.query(
      `INSERT INTO tickwork_limits (bucket, tat, paused_until, updated_at) SELECT b, t, NULL, $3 FROM unnest($1::text[], $2::float8[]) AS e(b, t)
       ON CONFLICT (bucket) DO UPDATE SET tat = excluded.tat, updated_at = excluded.updated_at`,
      [entries.map(([b]) => b), entries.map(([, s]) => s.tat), now],
    );
    return;
  }
  for (const [bucket, state] of entries) {
    yield* tx.query(
      `INSERT INTO tickwork_limits (bucket, tat, paused_until, updated_at) VALUES ($1, $2, NULL, $3)
       ON CONFLICT (bucket) DO UPDATE SET tat = excluded.tat, updated_at = excluded.updated_at`,
      [bucket, state.tat, now],
    );
  }
}
