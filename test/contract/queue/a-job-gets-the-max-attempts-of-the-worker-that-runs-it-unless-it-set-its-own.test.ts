import { afterEach, describe, expect, it } from "vitest";
import { createTickwork, type Tickwork } from "../../../src/tickwork.js";
import type { LogEvent } from "../../../src/core/logger.js";
import { fakeClock, type FakeClock } from "../../../src/testing/fake-clock.js";
import { durableObjectCase, postgresCase, sqliteFileCase } from "../../support/stores.js";
import { SECOND, START } from "../../support/queue-fixtures.js";

// Two engines on one database: the stores a second process can open (an in-memory SQLite cannot).
describe.each([sqliteFileCase(), postgresCase(), durableObjectCase()])("a job's maxAttempts is the running worker's declaration unless the job set its own ($name)", (storeCase) => {
  let engines: Tickwork[] = [];
  let clock: FakeClock;

  afterEach(async () => {
    const stopping = Promise.all(engines.map((tw) => tw.stop()));
    await clock.advance("1h");
    await stopping;
    engines = [];
    await storeCase.cleanup();
  });

  /** A producer declaring `work` with retry.maxAttempts 2 and no handler, and a worker declaring 4 whose handler always fails. */
  async function producerAndWorker() {
    clock = fakeClock(START);
    const events: LogEvent[] = [];
    const producer = await createTickwork({ store: storeCase.make(), clock, logger: () => {}, handleSignals: false });
    const worker = await createTickwork({ store: storeCase.reopen(), clock, logger: (e) => events.push(e), handleSignals: false });
    engines = [producer, worker];
    const attempts = new Map<string, number[]>();
    const work = producer.queue("work", { retry: { maxAttempts: 2 } });
    worker.queue("work", {
      retry: { maxAttempts: 4, backoff: () => 0 },
      handler: (job, ctx) => {
        attempts.set(job.id, [...(attempts.get(job.id) ?? []), ctx.attempt]);
        throw new Error(`down (attempt ${ctx.attempt} of ${job.maxAttempts})`);
      },
    });
    return { producer, worker, work, attempts, events };
  }

  it("enqueued where the queue says 2 attempts, run where it says 4: 4 attempts; a job that set its own 3 keeps 3", async () => {
    const { worker, work, attempts, events } = await producerAndWorker();
    const byDefault = await work.enqueue({ n: 1 });
    const own = await work.enqueue({ n: 2 }, { maxAttempts: 3 });
    const ownLikeProducer = await work.enqueue({ n: 3 }, { maxAttempts: 2 });

    for (let i = 0; i < 10; i++) await worker.tick();

    expect(attempts.get(byDefault.id)).toEqual([1, 2, 3, 4]);
    expect(attempts.get(own.id)).toEqual([1, 2, 3]);
    expect(attempts.get(ownLikeProducer.id)).toEqual([1, 2]);
    expect(await worker.jobs.get(byDefault.id)).toMatchObject({ status: "failed", attempts: 4, maxAttempts: 4 });
    expect(await worker.jobs.get(own.id)).toMatchObject({ status: "failed", attempts: 3, maxAttempts: 3 });
    expect(await worker.jobs.get(ownLikeProducer.id)).toMatchObject({ status: "failed", attempts: 2, maxAttempts: 2 });
    expect(events.filter((e) => e.event === "job.failed").map((e) => [e.id, e.maxAttempts])).toEqual(
      expect.arrayContaining([[byDefault.id, 4], [own.id, 3], [ownLikeProducer.id, 2]]),
    );
  });

  it("a lapsed lease on attempt 2 of a job following the queue is rescued to pending under the worker's 4, not failed under the producer's 2", async () => {
    const { worker, work, attempts } = await producerAndWorker();
    const job = await work.enqueue({ n: 1 });
    expect((await worker.tick({ maxJobs: 1 })).ran).toBe(1);
    // Attempt 2 is claimed by another process declaring 4 that then dies.
    const now = clock.now();
    const [claimed] = await worker.store.queue.claimDue({ queue: "work", limit: 1, now, leaseUntil: now + 10 * SECOND, workerId: "dead/work", queueMaxAttempts: 4 });
    expect(claimed).toMatchObject({ id: job.id, attempts: 2, maxAttempts: 4 });

    await clock.advance("11s");
    await worker.tick();

    expect(attempts.get(job.id)).toEqual([1, 3, 4]);
    expect(await worker.jobs.get(job.id)).toMatchObject({ status: "failed", attempts: 4, maxAttempts: 4 });
  });
});
