import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NewJobRow } from "../../src/queue/store/store.js";
import { sqlite } from "../../src/store/sqlite.js";
import type { Store } from "../../src/store/store.js";
import { countsInTable, keptCounts } from "../support/sqlite-counts.js";

/**
 * The kept job counts through the store's batch writes (an enqueue of many jobs with duplicate keys,
 * a claim, a batch of successes with a stale one among them), through writes beside the store on the
 * same file, and through a batch that fails part-way, against the counts the table itself gives.
 */
describe("SQLite: the kept counts follow the store's batch writes, and a failed batch moves none", () => {
  let dir: string;
  let store: Store;
  let side: Database.Database;
  const now = 1_000_000;

  const truth = () => countsInTable(side);
  const kept = () => keptCounts(store);
  const rows = (count: number, key?: (n: number) => string): NewJobRow[] =>
    Array.from({ length: count }, (_, n) => ({ payload: JSON.stringify({ n }), key: key?.(n) ?? null, priority: 0, runAt: now, maxAttempts: 3 }));
  const sideInsert = (queue: string) =>
    side.prepare(`INSERT INTO tickwork_jobs (queue, payload, status, priority, run_at, attempts, max_attempts, created_at) VALUES (?, '{}', 'pending', 0, 1, 0, 5, 1)`).run(queue);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "tickwork-bulk-count-"));
    const path = join(dir, "jobs.db");
    store = sqlite(path);
    await store.migrate();
    side = new Database(path);
  });
  afterAll(async () => {
    side?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("an enqueue of many, a claim and a batch of successes each move the counts by their jobs, duplicates and a stale success left out", async () => {
    await store.queue.insertMany({ queue: "mail", rows: rows(40, (n) => `k${n % 30}`), now });
    expect(await kept()).toEqual([{ queue: "mail", status: "pending", n: 30 }]);
    const claimed = await store.queue.claimDue({ queue: "mail", limit: 25, now, leaseUntil: now + 60_000, workerId: "w1" });
    expect(claimed).toHaveLength(25);
    const outcomes = claimed.slice(0, 20).map((job) => ({ kind: "succeeded" as const, id: job.id, attempt: job.attempts }));
    // A success of an attempt that is not the job's (a stale outcome) is refused and moves no count.
    outcomes.push({ kind: "succeeded", id: claimed[20]!.id, attempt: claimed[20]!.attempts + 1 });
    const { refused } = await store.queue.settleMany({ workerId: "w1", outcomes, now: now + 1 });
    expect(refused).toEqual([claimed[20]!.id]);
    expect(await kept()).toEqual([
      { queue: "mail", status: "pending", n: 5 },
      { queue: "mail", status: "running", n: 5 },
      { queue: "mail", status: "succeeded", n: 20 },
    ]);
    expect(await kept()).toEqual(truth());
  });

  it("a write beside the store after its batches is counted", async () => {
    sideInsert("mail");
    sideInsert("sms");
    side.prepare(`UPDATE tickwork_jobs SET status = 'cancelled' WHERE queue = 'mail' AND status = 'pending'`).run();
    expect(await kept()).toEqual(truth());
  });

  it("a batch that fails part-way changes no count, and the next write beside it is counted", async () => {
    // A trigger beside the store refuses the batch's last row: the insert throws after five rows went in.
    side.prepare(`CREATE TRIGGER refuse_boom BEFORE INSERT ON tickwork_jobs WHEN NEW.key = 'boom' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`).run();
    const before = await kept();
    await expect(store.queue.insertMany({ queue: "sms", rows: [...rows(5), ...rows(1, () => "boom")], now })).rejects.toThrow(/refused by the test/);
    side.prepare(`DROP TRIGGER refuse_boom`).run();
    expect(await kept()).toEqual(before);
    sideInsert("sms");
    expect(await kept()).toEqual(truth());
  });
});
