import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sqlite } from "../../src/store/sqlite.js";
import { eventually, realEngines } from "../support/real-time.js";

describe("a started engine gathers a batch for up to `wait`", () => {
  const dirs: string[] = [];
  const engine = realEngines({ afterStop: async () => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })) });

  it("jobs enqueued one at a time within the wait go to the handler together, never more than `size`", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tickwork-batch-"));
    dirs.push(dir);
    const { tw } = await engine({ store: sqlite(join(dir, "batch.db")) });
    const sizes: number[] = [];
    const q = tw.queue<{ n: number }>("emails", { batch: { size: 10, wait: "300ms" }, handler: (jobs) => void sizes.push(jobs.length) });
    await tw.start();
    for (let n = 0; n < 25; n++) await q.enqueue({ n });
    await eventually(() => sizes.reduce((a, b) => a + b, 0) === 25, "every job to run");
    expect(Math.max(...sizes)).toBeLessThanOrEqual(10);
    // Enqueued one by one, they still went out in batches, not one call per job.
    expect(sizes.length).toBeLessThan(25);
  });
});
