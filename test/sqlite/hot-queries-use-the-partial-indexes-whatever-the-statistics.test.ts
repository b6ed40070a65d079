import { sqliteSqlDb } from "../../src/db/sql-db.js";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteQueueStore } from "../../src/queue/store/sqlite.js";
import { migrateSqlite } from "../../src/store/migrate.js";
import { sqliteMigrations } from "../../src/store/migrations/sqlite.js";
import { betterSqliteExecutor } from "../../src/store/better-sqlite3.js";
import type { SqliteExecutor } from "../../src/db/sqlite-executor.js";
import type { JobStatus } from "../../src/queue/job.js";

/**
 * "No query's cost grows with the number of finished rows" (DESIGN.md), on SQLite: with 100,000
 * finished jobs, 10,000 scheduled for later and a backlog of due ones, every statement the queue
 * runs must reach its rows through an index, never scan the table nor sort what it found.
 * The table is analyzed (as `PRAGMA optimize` would): with statistics, SQLite plans with the bound
 * values, and two plans went wrong that way. The claim searched run_at across priorities and sorted
 * the whole backlog on every claim; the prune's `status = ?` could not use the partial index on
 * finished rows and scanned the table. Each statement is explained with the values it ran with, by
 * an executor that records every plan on its way to the store.
 */

const NOW = Date.parse("2026-01-01T00:00:00Z");
const FINISHED = 100_000;
const SCHEDULED = 10_000;
const DUE = 2_000;
const DAY = 86_400_000;

interface Explained {
  sql: string;
  steps: string[];
}

let db: Database.Database;
let store: SqliteQueueStore;
let plans: Explained[] = [];

/** Runs every statement through the real executor after recording its plan for the same values. */
function recording(inner: SqliteExecutor): SqliteExecutor {
  const explain = (sql: string, params: readonly unknown[]) =>
    plans.push({ sql, steps: (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail) });
  return {
    all: (sql, params = []) => (explain(sql, params), inner.all(sql, params)),
    run: (sql, params = []) => (explain(sql, params), inner.run(sql, params)),
    exec: (sql) => inner.exec(sql),
    transaction: (fn) => inner.transaction(fn),
  };
}

/** The plans of the statements `operation` ran, as one readable string per statement. */
async function plansOf(operation: () => Promise<unknown>): Promise<string[]> {
  plans = [];
  await operation();
  expect(plans.length, "the operation ran no statement").toBeGreaterThan(0);
  return plans.map((p) => `${p.sql.replace(/\s+/g, " ").slice(0, 90)}...\n  ${p.steps.join(" | ")}`);
}

function expectIndexed(explained: string[], indexes: string[]): void {
  for (const plan of explained) {
    expect(plan, "scans the table").not.toMatch(/\bSCAN (tickwork_jobs|live)\b/);
    expect(plan, "sorts what it found").not.toMatch(/USE TEMP B-TREE/);
  }
  const all = explained.join("\n");
  for (const index of indexes) expect(all, `reads ${index}`).toContain(index);
}

beforeAll(() => {
  db = new Database(":memory:");
  const executor = betterSqliteExecutor(db);
  migrateSqlite(executor, sqliteMigrations);
  // Finished history over the last ~28 hours (98% succeeded, 1% failed, 1% cancelled, one in ten keyed),
  // so the oldest rows are past a day's retention and the prune has work.
  db.prepare(
    `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < @count)
     INSERT INTO tickwork_jobs (queue, payload, key, status, priority, run_at, attempts, max_attempts, last_error, created_at, started_at, finished_at)
     SELECT 'emails', '{"n":1}', CASE WHEN n % 10 = 0 THEN 'order-' || n END,
            CASE n % 100 WHEN 0 THEN 'failed' WHEN 1 THEN 'cancelled' ELSE 'succeeded' END, 0,
            @now - n * 1000, 1, 5, CASE WHEN n % 100 = 0 THEN 'boom' END, @now - n * 1000, @now - n * 1000, @now - n * 1000 + 50
     FROM g`,
  ).run({ count: FINISHED, now: NOW });
  // Jobs scheduled for later, in the same queue and priority as the backlog.
  db.prepare(
    `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < @count)
     INSERT INTO tickwork_jobs (queue, payload, key, status, priority, run_at, attempts, max_attempts, created_at)
     SELECT 'emails', '{"n":2}', CASE WHEN n % 10 = 0 THEN 'reminder-' || n END, 'pending', 0, @now + 3600000 + n * 1000, 0, 5, @now - n
     FROM g`,
  ).run({ count: SCHEDULED, now: NOW });
  // Running jobs: two with lapsed leases, two alive.
  db.prepare(
    `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 4)
     INSERT INTO tickwork_jobs (queue, payload, status, run_at, attempts, max_attempts, worker_id, lease_until, created_at, started_at)
     SELECT 'emails', '{"n":3}', 'running', @now - 30000, 1, 5, 'w1/emails', @now + (n - 3) * 10000, @now - 60000, @now - 30000 FROM g`,
  ).run({ now: NOW });
  db.exec("ANALYZE");
  // The backlog arrives after the statistics were taken, as a burst after a quiet spell would.
  db.prepare(
    `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < @count)
     INSERT INTO tickwork_jobs (queue, payload, status, priority, run_at, attempts, max_attempts, created_at)
     SELECT 'emails', '{"n":4}', 'pending', 0, @now - n, 0, 5, @now - n FROM g`,
  ).run({ count: DUE, now: NOW });
  store = new SqliteQueueStore(recording(executor), sqliteSqlDb(recording(executor), 32_766));
});

afterAll(() => db?.close());

describe("SQLite: the queue's statements on an analyzed table of mostly finished jobs", () => {
  it("claims the first due jobs through the claim index without sorting the backlog", async () => {
    let claimed = 0;
    const explained = await plansOf(async () => {
      claimed = (await store.claimDue({ queue: "emails", limit: 20, now: NOW, leaseUntil: NOW + 20_000, workerId: "w2/emails" })).length;
    });
    expect(claimed).toBe(20);
    expectIndexed(explained, ["tickwork_jobs_claim"]);
  });

  it("settles outcomes by primary key, the successes of a batch in one statement", async () => {
    const [a, b, c, d, e] = await store.claimDue({ queue: "emails", limit: 5, now: NOW, leaseUntil: NOW + 20_000, workerId: "w2/emails" });
    const explained = await plansOf(() =>
      store.settleMany({
        workerId: "w2/emails",
        now: NOW,
        outcomes: [
          { kind: "succeeded", id: a!.id, attempt: 1 },
          { kind: "succeeded", id: d!.id, attempt: 1, result: '{"sent":true}' },
          { kind: "succeeded", id: e!.id, attempt: 1 },
          { kind: "failed", id: b!.id, attempt: 1, error: "boom", retryAt: NOW + 60_000 },
          { kind: "released", id: c!.id, attempt: 1 },
        ],
      }),
    );
    expectIndexed(explained, ["INTEGER PRIMARY KEY"]);
    expect(explained.filter((plan) => plan.includes("SET status = 'succeeded'")), "one statement for the three successes").toHaveLength(1);
  });

  it("renews a worker's leases by primary key", async () => {
    expectIndexed(await plansOf(() => store.heartbeat({ workerId: "w2/emails", ids: ["1", "2", "3"], leaseUntil: NOW + 40_000 })), ["INTEGER PRIMARY KEY"]);
  });

  it("counts jobs by queue and status from the counters the writes keep, never reading the jobs table", async () => {
    let counted: Awaited<ReturnType<SqliteQueueStore["countByStatus"]>> = [];
    const explained = await plansOf(async () => {
      counted = await store.countByStatus({});
    });
    for (const plan of explained) expect(plan).not.toMatch(/tickwork_jobs\b/);
    expect(explained.join("\n")).toContain("tickwork_job_counts");
    const truth = db.prepare(`SELECT queue, status, count(*) AS n FROM tickwork_jobs GROUP BY queue, status`).all() as { queue: string; status: JobStatus; n: number }[];
    expect(counted.flatMap((c) => Object.entries(c.counts).filter(([, n]) => n > 0).map(([status, n]) => `${c.queue}/${status}=${n}`)).sort())
      .toEqual(truth.map((t) => `${t.queue}/${t.status}=${t.n}`).sort());
  });

  it("rescues lapsed leases through the lease index", async () => {
    let rescued = 0;
    const explained = await plansOf(async () => {
      rescued = (await store.rescueExpired({ queues: ["emails"], now: NOW, limit: 1000 })).length;
    });
    expect(rescued).toBe(2);
    expectIndexed(explained, ["tickwork_jobs_lease"]);
  });

  it("finds the next wake-up through the claim and lease indexes", async () => {
    expectIndexed(await plansOf(() => store.nextWakeAt({ queues: ["emails"] })), ["tickwork_jobs_claim", "tickwork_jobs_lease"]);
  });

  it("answers a duplicate key with its holder through the key index", async () => {
    const rows = [{ payload: "{}", key: "reminder-10", priority: 0, runAt: NOW, maxAttempts: 5 }];
    let duplicate = false;
    const explained = await plansOf(async () => {
      duplicate = (await store.insertMany({ queue: "emails", rows, now: NOW }))[0]!.duplicate;
    });
    expect(duplicate).toBe(true);
    expectIndexed(explained, ["tickwork_jobs_key"]);
  });

  it.each(["succeeded", "failed", "cancelled"] as const)("prunes %s jobs past retention through the finished-rows index", async (status) => {
    let pruned = 0;
    const explained = await plansOf(async () => {
      pruned = await store.pruneFinished({ status, before: NOW - DAY, limit: 1000 });
    });
    expect(pruned).toBeGreaterThan(0);
    expectIndexed(explained, ["tickwork_jobs_finished"]);
  });

  it.each(["failed", "cancelled"] as const)("lists %s jobs newest first, and a queue's in pages, through their own index", async (status) => {
    let listed = 0;
    const explained = await plansOf(async () => {
      const page = await store.list({ now: NOW, status, order: "newest", limit: 20 });
      const next = await store.list({ now: NOW, queue: "emails", status, order: "newest", before: page.at(-1)!.id, limit: 20 });
      const oldest = await store.list({ now: NOW, queue: "emails", status, order: "oldest", after: "0", limit: 20 });
      listed = page.length + next.length + oldest.length;
    });
    expect(listed).toBe(60);
    // The first page walks the status's partial index from its end: every row it passes is one of
    // the jobs listed, so a walk of it is not a scan of the table.
    for (const plan of explained) {
      expect(plan, "reads the status's own index").toMatch(new RegExp(`(SCAN|SEARCH) tickwork_jobs USING INDEX tickwork_jobs_${status}\\b`));
      expect(plan, "sorts what it found").not.toMatch(/USE TEMP B-TREE/);
    }
  });

  it("retries a queue's failed jobs through the finished-rows index", async () => {
    let retried = 0;
    const explained = await plansOf(async () => {
      retried = await store.retryFailed({ queue: "emails", now: NOW });
    });
    expect(retried).toBeGreaterThan(0);
    expectIndexed(explained, ["tickwork_jobs_finished"]);
  });
});
