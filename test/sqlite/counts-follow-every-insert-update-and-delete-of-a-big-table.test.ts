import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqlite } from "../../src/store/sqlite.js";
import type { Store } from "../../src/store/store.js";
import { countsInTable, keptCounts } from "../support/sqlite-counts.js";

/**
 * SQLite keeps job counts in tickwork_job_counts, moved by triggers on the jobs table, so any write
 * counts: the store's own statements, and statements run beside it on the same file. Here 130,000
 * jobs in two queues written by plain SQL, then moved and deleted in bulk, against the counts the
 * table itself gives at each step.
 */
describe("SQLite: the kept job counts of a big table", () => {
  let dir: string;
  let store: Store;
  let side: Database.Database;

  const truth = () => countsInTable(side);
  const kept = () => keptCounts(store);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "tickwork-count-"));
    const path = join(dir, "jobs.db");
    store = sqlite(path);
    await store.migrate();
    side = new Database(path);
    side.prepare(
      `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
       INSERT INTO tickwork_jobs (queue, payload, status, priority, run_at, attempts, max_attempts, created_at, finished_at)
       SELECT CASE WHEN n % 3 = 0 THEN 'mail' ELSE 'sms' END, '{}',
              CASE n % 50 WHEN 0 THEN 'failed' WHEN 1 THEN 'cancelled' WHEN 2 THEN 'pending' WHEN 3 THEN 'running' ELSE 'succeeded' END, 0, 1, 1, 5, 1, 2
       FROM g`,
    ).run(130_000);
  });
  afterAll(async () => {
    side?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("match the table after a bulk insert, a bulk move between statuses and a bulk delete", async () => {
    expect(await kept()).toEqual(truth());
    side.prepare(`UPDATE tickwork_jobs SET status = 'pending' WHERE status = 'failed' AND id % 2 = 0`).run();
    side.prepare(`UPDATE tickwork_jobs SET status = 'succeeded' WHERE status = 'running'`).run();
    side.prepare(`UPDATE tickwork_jobs SET priority = 1 WHERE status = 'pending'`).run(); // no status change: no count moves
    expect(await kept()).toEqual(truth());
    side.prepare(`DELETE FROM tickwork_jobs WHERE status = 'succeeded' AND queue = 'sms'`).run();
    expect(await kept()).toEqual(truth());
    expect(await store.queue.countByStatus({ queues: ["mail"] })).toEqual((await store.queue.countByStatus({})).filter((c) => c.queue === "mail"));
  });

  it("compacting drops the counters of a queue with no job left, and the queue's next job counts from zero", async () => {
    side.prepare(`DELETE FROM tickwork_jobs WHERE queue = 'sms'`).run();
    expect(await store.queue.compactCounts()).toBe(1);
    expect((await store.queue.countByStatus({})).map((c) => c.queue)).toEqual(["mail"]);
    side.prepare(`INSERT INTO tickwork_jobs (queue, payload, status, priority, run_at, attempts, max_attempts, created_at) VALUES ('sms', '{}', 'pending', 0, 1, 0, 5, 1)`).run();
    expect(await kept()).toEqual(truth());
  });
});
