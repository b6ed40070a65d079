import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import { deferred, eventually, realEngines } from "../support/real-time.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";

/**
 * `await tw.queues.pause(queue)` in one process stops the queue in every process: a worker elsewhere
 * that claimed jobs ahead of its free slots hears the pause (PostgreSQL's notification, sent before
 * pause() returns) and hands them back instead of running them out, and starts nothing more until the
 * resume. Two engines on one schema play the two processes.
 */
describe("a pause from another process (PostgreSQL)", () => {
  const schema = uniqueSchema();
  const gate = deferred();
  const engine = realEngines({ beforeStop: () => gate.resolve(), afterStop: () => dropSchema(schema) });

  it("the worker hands back the 18 jobs it prefetched, starts none until the resume, then runs them all", async () => {
    const worker = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    const admin = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    const starts: { id: string; at: number }[] = [];
    const queue = worker.tw.queue("emails", {
      concurrency: 2,
      batchSize: 20,
      handler: async (job) => {
        starts.push({ id: job.id, at: Date.now() });
        await gate.promise;
      },
    });
    admin.tw.queue("emails", {});
    const jobs = await queue.enqueueMany(Array.from({ length: 50 }, (_, n) => ({ payload: { n } })));
    await worker.tw.start();
    // Two running, 18 more claimed with them and waiting for a slot.
    await eventually(() => starts.length === 2, "the first two jobs to start", 10_000);

    await admin.tw.queues.pause("emails");
    await eventually(() => worker.named("job.released").filter((e) => e.reason === "paused").length === 18, "the 18 prefetched jobs to be handed back", 10_000);

    gate.resolve();
    await eventually(async () => (await Promise.all(jobs.map((j) => admin.tw.jobs.get(j.id)))).filter((j) => j?.status === "succeeded").length === 2, "the two running jobs to end", 10_000);
    const resumedAt = Date.now();
    expect(starts.filter((s) => s.at < resumedAt)).toHaveLength(2);

    await admin.tw.queues.resume("emails");
    await eventually(async () => (await Promise.all(jobs.map((j) => admin.tw.jobs.get(j.id)))).every((j) => j?.status === "succeeded"), "every job to succeed after the resume", 20_000);
    expect(new Set(starts.map((s) => s.id)).size).toBe(50);
  });
});
