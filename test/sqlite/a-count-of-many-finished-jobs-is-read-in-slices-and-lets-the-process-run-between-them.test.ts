import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqlite } from "../../src/store/sqlite.js";
import type { Store } from "../../src/store/store.js";

/**
 * SQLite counts finished jobs by reading them. Over a big table one statement would hold the only
 * thread for as long as the read takes, and every job, timer and request of the process with it, so
 * the count reads a slice of ids at a time and lets the event loop run between slices. Here 130,000
 * finished jobs in two queues, with a gap in their ids, against the counts SQLite itself gives.
 */
describe("SQLite: a count of many finished jobs", () => {
  let dir: string;
  let store: Store;
  let truth: { queue: string; status: string; n: number }[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "tickwork-count-"));
    const path = join(dir, "jobs.db");
    store = sqlite(path);
    await store.migrate();
    const side = new Database(path);
    const fill = side.prepare(
      `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
       INSERT INTO tickwork_jobs (id, queue, payload, status, priority, run_at, attempts, max_attempts, created_at, finished_at)
       SELECT ? + n, CASE WHEN n % 3 = 0 THEN 'mail' ELSE 'sms' END, '{}',
              CASE n % 50 WHEN 0 THEN 'failed' WHEN 1 THEN 'cancelled' ELSE 'succeeded' END, 0, 1, 1, 5, 1, 2
       FROM g`,
    );
    fill.run(80_000, 0);
    fill.run(50_000, 500_000); // ids 500,001..550,000: a gap of ten slices with no row
    side.prepare(`INSERT INTO tickwork_jobs (queue, payload, status, priority, run_at, attempts, max_attempts, created_at) VALUES ('mail', '{}', 'pending', 0, 1, 0, 5, 1)`).run();
    truth = side.prepare(`SELECT queue, status, count(*) AS n FROM tickwork_jobs GROUP BY queue, status ORDER BY queue, status`).all() as typeof truth;
    side.close();
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("adds up every slice to the table's own counts", async () => {
    const counts = await store.queue.countByStatus({});
    const flat = counts.flatMap(({ queue, counts }) => Object.entries(counts).filter(([, n]) => n > 0).map(([status, n]) => ({ queue, status, n })));
    expect(flat.sort((a, b) => `${a.queue}/${a.status}`.localeCompare(`${b.queue}/${b.status}`))).toEqual(truth);
    expect(await store.queue.countByStatus({ queues: ["mail"] })).toEqual(counts.filter((c) => c.queue === "mail"));
  });

  it("lets a timer due meanwhile run before the count ends", async () => {
    const order: string[] = [];
    setTimeout(() => order.push("timer"), 0);
    await store.queue.countByStatus({}).then(() => order.push("count"));
    expect(order).toEqual(["timer", "count"]);
  });
});
