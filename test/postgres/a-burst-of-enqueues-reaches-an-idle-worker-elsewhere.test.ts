import pg from "pg";
import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";
import { eventually, realEngines } from "../support/real-time.js";

describe("PostgreSQL: notifications are debounced per queue, never lost", () => {
  const schema = uniqueSchema();
  const engine = realEngines({ afterStop: () => dropSchema(schema) });

  // NOTIFY serialises commits, so enqueues within a few milliseconds share one notification: the
  // first inline, then one trailing notification after the others committed.
  it("an enqueue inside the window of the previous one still gets a notification, after it committed", async () => {
    const { tw } = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    const listener = new pg.Client({ connectionString: DATABASE_URL });
    await listener.connect();
    const heard: number[] = [];
    // Every schema's tickwork notifies on this channel: a payload names its schema, then the queue.
    listener.on("notification", (msg) => msg.payload === `${schema}/work` && heard.push(performance.now()));
    await listener.query("LISTEN tickwork_jobs");
    try {
      const work = tw.queue("work");
      await work.enqueue({ n: 1 });
      const second = await work.enqueue({ n: 2 });
      await eventually(() => heard.length >= 2, "a second notification");
      // When the worker it wakes claims, the quiet job is there.
      expect(await tw.jobs.get(second.id)).toMatchObject({ status: "pending" });
    } finally {
      await listener.end();
    }
  });

  it("an idle worker in another engine, woken only by notifications, runs every job of bursts of single enqueues", async () => {
    const consumer = await engine({ store: postgres({ url: DATABASE_URL, schema }), pollInterval: "1h", rescueInterval: "1h" });
    const ran = new Set<number>();
    consumer.tw.queue<{ n: number }>("burst", { concurrency: 5, handler: (job) => void ran.add(job.payload.n) });
    await consumer.tw.start();
    const producer = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    const burst = producer.tw.queue<{ n: number }>("burst");
    for (const round of [0, 1, 2]) {
      await Promise.all(Array.from({ length: 40 }, (_, i) => burst.enqueue({ n: round * 40 + i })));
      await eventually(() => ran.size === (round + 1) * 40, `the ${(round + 1) * 40} jobs enqueued so far to run`);
    }
    expect(ran.size).toBe(120);
  });
});
