import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import type { Store } from "../../src/store/store.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";

/**
 * Regression found by the sustained side-by-side workload (2,000 enqueues/s for 60 s into a fresh
 * table): the claim and the settle were prepared once per connection, and after five calls PostgreSQL
 * ran them on a generic plan built while the table held a few rows, a sequential scan. It kept that
 * plan while the table grew (no ANALYZE came along to invalidate it), so each claim and settle read
 * the whole table, 200 ms at 120,000 rows, and the queue fell behind. They are now planned per call
 * and must reach their rows by index however the table looked when they first ran.
 *
 * Counted, not timed: the test reads the table's sequential-scan counter around the calls, on a
 * store of one connection that flushes its statistics on request.
 */
const schema = uniqueSchema();
const NOW = Date.parse("2026-01-01T00:00:00Z");
let pool: pg.Pool;
let store: Store;
let observer: pg.Client;

/** The table's scan counters, once the store's connection has flushed what it counted. */
async function scans(): Promise<{ seq: number; idx: number }> {
  await pool.query(`SELECT pg_stat_force_next_flush()`);
  // The flush happens as the connection goes idle after that statement; one more round trip on it
  // returns only after that.
  await pool.query(`SELECT 1`);
  const { rows } = await observer.query<{ seq: string; idx: string }>(
    `SELECT seq_scan::text AS seq, coalesce(idx_scan, 0)::text AS idx FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'tickwork_jobs'`,
    [schema],
  );
  return { seq: Number(rows[0]!.seq), idx: Number(rows[0]!.idx) };
}

async function claimAndSettle(count: number): Promise<number> {
  const jobs = await store.queue.claimDue({ queue: "emails", limit: count, now: NOW, leaseUntil: NOW + 30_000, workerId: "w1/emails" });
  await store.queue.heartbeat({ workerId: "w1/emails", ids: jobs.map((j) => j.id), leaseUntil: NOW + 60_000 });
  await store.queue.settleMany({ workerId: "w1/emails", outcomes: jobs.map((j) => ({ kind: "succeeded", id: j.id, attempt: j.attempts })), now: NOW });
  return jobs.length;
}

const row = () => ({ payload: "{}", key: null, priority: 0, runAt: NOW - 1, maxAttempts: 5 });

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1, options: `-c search_path="${schema}"` });
  await pool.query(`CREATE SCHEMA "${schema}"`);
  store = postgres({ pool });
  await store.migrate();
  // No autovacuum: an ANALYZE in the middle would invalidate a cached plan and hide the regression.
  await pool.query(`ALTER TABLE tickwork_jobs SET (autovacuum_enabled = false)`);
  observer = new pg.Client({ connectionString: DATABASE_URL });
  await observer.connect();
});

afterAll(async () => {
  await observer?.end();
  await pool?.end();
  await dropSchema(schema);
});

it("claims, heartbeats and settles reach their rows by index after the table grew from empty to 100,000 rows", async () => {
  // Ten rounds on an all but empty table: enough for a prepared statement to settle on a generic plan.
  for (let round = 0; round < 10; round++) {
    await store.queue.insertMany({ queue: "emails", rows: [row(), row()], now: NOW });
    expect(await claimAndSettle(2)).toBe(2);
  }
  await observer.query(
    `INSERT INTO "${schema}".tickwork_jobs (queue, payload, status, priority, run_at, attempts, max_attempts, created_at, finished_at)
     SELECT 'emails', '{}', 'succeeded', 0, $1::bigint, 1, 5, $1::bigint, $1::bigint FROM generate_series(1, 100000)`,
    [NOW - 1],
  );
  await store.queue.insertMany({ queue: "emails", rows: Array.from({ length: 500 }, row), now: NOW });

  const before = await scans();
  expect(await claimAndSettle(500)).toBe(500);
  const after = await scans();

  expect(after.idx - before.idx, "the calls were counted").toBeGreaterThan(0);
  expect(after.seq - before.seq, "sequential scans of tickwork_jobs").toBe(0);
});
