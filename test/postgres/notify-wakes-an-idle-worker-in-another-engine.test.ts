import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";
import { deferred, eventually, realEngines, within, type Deferred } from "../support/real-time.js";

describe("PostgreSQL: LISTEN/NOTIFY", () => {
  const schema = uniqueSchema();
  const engine = realEngines({ afterStop: () => dropSchema(schema) });

  it("wakes an idle worker in another engine as soon as a job is enqueued, with no polling", async () => {
    // Poll, rescue and lease are an hour: none of the consumer's own timers can fire during the test.
    const consumer = await engine({ store: postgres({ url: DATABASE_URL, schema }), pollInterval: "1h", rescueInterval: "1h" });
    const runs = new Map<string, Deferred<string>>([
      ["warm-up", deferred<string>()],
      ["woken", deferred<string>()],
    ]);
    consumer.tw.queue<{ name: string }>("alerts", { lease: "1h", handler: (job) => runs.get(job.payload.name)!.resolve(job.id) });
    await consumer.tw.start();

    // Another store on the same schema, as another process would have: it declares the queue without a handler.
    const producer = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    const alerts = producer.tw.queue<{ name: string }>("alerts");
    expect(producer.tw.instanceId).not.toBe(consumer.tw.instanceId);

    // A first job, so the consumer's start-up claim is over and it has gone to sleep.
    const warmUp = await alerts.enqueue({ name: "warm-up" });
    await within(runs.get("warm-up")!.promise, 5_000, "the warm-up job runs");
    await eventually(async () => (await producer.tw.jobs.get(warmUp.id))?.status === "succeeded", "the warm-up job to succeed");
    await eventually(() => consumer.tw.status().queues.every((q) => q.running === 0 && q.prefetched === 0), "the consumer to be idle");

    const woken = await alerts.enqueue({ name: "woken" });
    expect(await within(runs.get("woken")!.promise, 5_000, "the job enqueued by the other engine runs")).toBe(woken.id);
    const job = await eventually(async () => {
      const j = await producer.tw.jobs.get(woken.id);
      return j?.status === "succeeded" && j;
    }, "the woken job to succeed");
    expect(job.attempts).toBe(1);
  });

  it("announces every enqueue of a stream from another engine: with polling off, none is left waiting", async () => {
    const consumer = await engine({ store: postgres({ url: DATABASE_URL, schema }), pollInterval: "1h", rescueInterval: "1h" });
    const ran = new Set<number>();
    const all = deferred<void>();
    const total = 300;
    consumer.tw.queue<{ n: number }>("stream", {
      lease: "1h",
      handler: (job) => {
        ran.add(job.payload.n);
        if (ran.size === total) all.resolve();
      },
    });
    await consumer.tw.start();
    const producer = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    const stream = producer.tw.queue<{ n: number }>("stream");

    // Enqueues that commit while an announcement is out, alone and in overlapping groups, with and
    // without a pause between them: each must be covered by one announcement or the next.
    let n = 0;
    for (let wave = 0; wave < 30; wave++) {
      const size = 1 + (wave % 7);
      await Promise.all(Array.from({ length: size }, () => stream.enqueue({ n: n++ })));
      if (wave % 3 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    while (n < total) await stream.enqueue({ n: n++ });

    await within(all.promise, 15_000, `all ${total} jobs of the stream run`);
    expect(ran.size).toBe(total);
  });
});
