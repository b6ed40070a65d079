import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import { sqlite } from "../../src/store/sqlite.js";
import type { Store } from "../../src/store/store.js";
import { eventually, realEngines } from "../support/real-time.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";

/**
 * A worker keeps jobs in hand beyond its running ones (prefetched), their leases renewed by its
 * heartbeat. A process that stalls (a handler that blocks the event loop, a frozen VM) renews
 * nothing: when it wakes, the prefetched jobs' leases may have lapsed and the store may have given
 * them to another worker. The worker hands such a job back instead of starting it (a fenced release,
 * refused if another worker holds it now), and the job starts later under a fresh lease.
 */
const schema = uniqueSchema();
const dirs: string[] = [];
const stores: { name: string; store: () => Store }[] = [
  {
    name: "sqlite-file",
    store: () => {
      const dir = mkdtempSync(join(tmpdir(), "tickwork-lapsed-"));
      dirs.push(dir);
      return sqlite(join(dir, "jobs.db"));
    },
  },
  { name: "postgres", store: () => postgres({ url: DATABASE_URL, schema }) },
];

/** Blocks the event loop, as a synchronous handler (or a frozen process) does: no timer, no heartbeat runs meanwhile. */
function block(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // spin
  }
}

describe.each(stores)("a prefetched job whose lease lapsed is never started by the worker that held it ($name)", ({ store }) => {
  const engine = realEngines({
    afterStop: async () => {
      await dropSchema(schema);
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  });

  it("the first job blocks the process past the 1 s lease: the five prefetched behind it are handed back, each then starts under a live lease", async () => {
    const { tw, named } = await engine({ store: store() });
    const starts: { id: string; leaseUntil: number; at: number }[] = [];
    const queue = tw.queue("reports", {
      concurrency: 1,
      batchSize: 6,
      lease: "1s",
      handler: (job) => {
        starts.push({ id: job.id, leaseUntil: job.lease!.until, at: Date.now() });
        if (starts.length === 1) block(1_600);
      },
    });
    const jobs = await queue.enqueueMany(Array.from({ length: 6 }, (_, n) => ({ payload: { n } })));
    await tw.start();

    await eventually(async () => (await Promise.all(jobs.map((j) => tw.jobs.get(j.id)))).every((j) => j?.status === "succeeded"), "every job to succeed", 20_000);
    const lapsed = starts.filter((s) => s.leaseUntil <= s.at);
    expect(lapsed, "starts whose lease had lapsed").toEqual([]);
    expect(named("job.released").filter((e) => e.reason === "lease_lapsed").length).toBeGreaterThanOrEqual(1);
    expect(new Set(starts.map((s) => s.id)).size).toBe(6);
  });
});
