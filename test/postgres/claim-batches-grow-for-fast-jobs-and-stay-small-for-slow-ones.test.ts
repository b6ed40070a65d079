import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";
import { eventually, realEngines } from "../support/real-time.js";

describe("PostgreSQL: the adaptive claim batch", () => {
  const schema = uniqueSchema();
  const engine = realEngines({ afterStop: () => dropSchema(schema) });

  async function run(handler: () => Promise<void> | void, jobs: number) {
    const { tw } = await engine({ store: postgres({ url: DATABASE_URL, schema }), pollInterval: "1h" });
    const q = tw.queue("work", { concurrency: 2, handler });
    await q.enqueueMany(Array.from({ length: jobs }, (_, n) => ({ payload: { n } })));
    let largest = 0;
    let inHand = 0;
    const watch = setInterval(() => {
      const queue = tw.status().queues[0];
      largest = Math.max(largest, queue?.batch ?? 0);
      inHand = Math.max(inHand, (queue?.running ?? 0) + (queue?.prefetched ?? 0));
    }, 1);
    await tw.start();
    try {
      await eventually(async () => (await tw.jobs.counts("work"))[0]?.counts.succeeded === jobs, `all ${jobs} jobs to succeed`, 30_000);
    } finally {
      clearInterval(watch);
    }
    return { largest, inHand };
  }

  it("grows past 2 x concurrency while no-op jobs finish faster than a claim's round trip", async () => {
    expect((await run(() => {}, 2_000)).largest).toBeGreaterThan(4);
  });

  it("stays at 2 x concurrency when each job outlasts a round trip, so prefetch hoards nothing", async () => {
    // 200 ms a job: on a loaded machine a claim's round trip averages tens of milliseconds, and the
    // batch grows only once that average exceeds a job's run.
    const { largest, inHand } = await run(() => new Promise((resolve) => setTimeout(resolve, 200)), 16);
    expect(largest).toBe(4);
    // Two slots finish in four round trips of up to 50 ms less than a job: one batch in hand, running or prefetched.
    expect(inHand).toBeLessThanOrEqual(4);
  });

  it("keeps at most two batches in hand for jobs of about a round trip, whichever side of it they fall", async () => {
    const { largest, inHand } = await run(() => new Promise((resolve) => setTimeout(resolve, 3)), 200);
    expect(inHand).toBeGreaterThan(0);
    expect(inHand).toBeLessThanOrEqual(2 * largest);
  });
});
