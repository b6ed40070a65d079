import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";
import { deferred, eventually, realEngines, within } from "../support/real-time.js";

describe("PostgreSQL: jobs that become pending outside an enqueue wake other processes", () => {
  const schema = uniqueSchema();
  const engine = realEngines({ afterStop: () => dropSchema(schema) });

  async function idleConsumer(handler: (attempt: number) => void) {
    // Every timer of the consumer is an hour away: only a notification can wake it.
    const consumer = await engine({ store: postgres({ url: DATABASE_URL, schema }), pollInterval: "1h", rescueInterval: "1h" });
    consumer.tw.queue("work", { lease: "1h", handler: (_job, ctx) => handler(ctx.attempt) });
    await consumer.tw.start();
    await eventually(() => consumer.tw.status().queues.every((q) => q.running === 0), "the consumer to be idle");
    const operator = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    return { consumer, operator, work: operator.tw.queue("work") };
  }

  it("a rescued job (its worker died) runs at once in an idle engine elsewhere", async () => {
    const ran = deferred<number>();
    const { operator, work } = await idleConsumer((attempt) => ran.resolve(attempt));
    // Due in an hour, so the idle consumer (woken by the enqueue's notification) cannot take it first.
    const later = Date.now() + 3_600_000;
    const job = await work.enqueue({}, { runAt: later });
    // A worker that died right after claiming it: its lease lapses in 50 ms.
    const [claimed] = await operator.tw.store.queue.claimDue({ queue: "work", limit: 1, now: later, leaseUntil: Date.now() + 50, workerId: "dead/work" });
    expect(claimed?.id).toBe(job.id);
    await eventually(async () => (await operator.tw.store.queue.rescueExpired({ queues: ["work"], now: Date.now(), limit: 10 })).length > 0, "the lease to lapse and be rescued");
    expect(await within(ran.promise, 5_000, "the rescued job runs in the idle consumer")).toBe(2);
  });

  it("a failed job retried by an operator runs at once in an idle engine elsewhere", async () => {
    const ran = deferred<number>();
    let fail = true;
    const { operator, work } = await idleConsumer((attempt) => {
      if (fail) throw new Error("down");
      ran.resolve(attempt);
    });
    const job = await work.enqueue({}, { maxAttempts: 1 });
    await eventually(async () => (await operator.tw.jobs.get(job.id))?.status === "failed", "the job to fail");
    fail = false;
    await operator.tw.jobs.retry(job.id);
    expect(await within(ran.promise, 5_000, "the retried job runs in the idle consumer")).toBe(1);
  });
});
