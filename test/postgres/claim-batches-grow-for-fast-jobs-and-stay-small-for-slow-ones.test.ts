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
    const watch = setInterval(() => (largest = Math.max(largest, tw.status().queues[0]?.batch ?? 0)), 1);
    await tw.start();
    try {
      await eventually(async () => (await tw.jobs.counts("work"))[0]?.counts.succeeded === jobs, `all ${jobs} jobs to succeed`, 30_000);
    } finally {
      clearInterval(watch);
    }
    return largest;
  }

  it("grows past 2 x concurrency while no-op jobs finish faster than a claim's round trip", async () => {
    expect(await run(() => {}, 2_000)).toBeGreaterThan(4);
  });

  it("stays at 2 x concurrency when each job outlasts a round trip, so prefetch hoards nothing", async () => {
    expect(await run(() => new Promise((resolve) => setTimeout(resolve, 30)), 40)).toBe(4);
  });
});
