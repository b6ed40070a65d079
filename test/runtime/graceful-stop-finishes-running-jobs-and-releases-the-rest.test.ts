import { describe, expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import { allStoreCases } from "../support/stores.js";
import { deferred, eventually, realEngines, within } from "../support/real-time.js";

/**
 * `tw.stop()` closes the store; these tests read the jobs after the stop, so the engine gets the
 * store with its close deferred to the test's teardown.
 */
function closedByTheTest(store: Store): { store: Store; close: () => Promise<void> } {
  return { store: { ...store, close: async () => {} }, close: () => store.close() };
}

describe.each(allStoreCases())("$name: a graceful stop", (c) => {
  const gates: (() => void)[] = [];
  let closeStore: () => Promise<void> = async () => {};
  const engine = realEngines({
    beforeStop: () => gates.splice(0).forEach((open) => open()),
    afterStop: async () => {
      const close = closeStore;
      closeStore = async () => {};
      await close();
      await c.cleanup();
    },
  });

  it("waits for running jobs to succeed and hands prefetched ones back with their attempt refunded", async () => {
    const target = closedByTheTest(c.make());
    closeStore = target.close;
    const { tw, named } = await engine({ store: target.store });
    const started: string[] = [];
    const queue = tw.queue("graceful", {
      concurrency: 2,
      batchSize: 10,
      handler: async (job) => {
        started.push(job.id);
        await new Promise<void>((resolve) => gates.push(resolve));
      },
    });
    const jobs = await queue.enqueueMany(Array.from({ length: 6 }, (_, i) => ({ payload: { i } })));
    await tw.start();
    // One claim takes all six: two run, four wait in the worker's prefetch buffer.
    await eventually(() => {
      const q = tw.status().queues.find((s) => s.name === "graceful");
      return q?.running === 2 && q.prefetched === 4 && gates.length === 2;
    }, "two jobs running and four prefetched");
    const prefetched = jobs.map((j) => j.id).filter((id) => !started.includes(id));
    expect(prefetched).toHaveLength(4);

    let stopReturned = false;
    const stopping = tw.stop().then(() => (stopReturned = true));
    await eventually(async () => {
      const states = await Promise.all(prefetched.map((id) => tw.jobs.get(id)));
      return states.every((j) => j?.status === "pending" && j.attempts === 0);
    }, "the prefetched jobs to be back to pending");
    expect(stopReturned).toBe(false);
    for (const id of started) expect((await tw.jobs.get(id))?.status).toBe("running");

    gates.splice(0).forEach((open) => open());
    await within(stopping, 5_000, "stop() once the running jobs finished");

    for (const id of started) expect(await tw.jobs.get(id)).toMatchObject({ status: "succeeded", attempts: 1 });
    for (const id of prefetched) expect(await tw.jobs.get(id)).toMatchObject({ status: "pending", attempts: 0, startedAt: null });
    expect(started).toHaveLength(2);
    expect(named("job.released").map((e) => e.id).sort()).toEqual([...prefetched].sort());
    expect(named("job.succeeded").map((e) => e.id).sort()).toEqual([...started].sort());
    expect(named("job.outcome_refused")).toEqual([]);
  });

  it("after its grace, aborts a handler that never finishes and releases its job to pending", async () => {
    const target = closedByTheTest(c.make());
    closeStore = target.close;
    const { tw, named } = await engine({ store: target.store, shutdownGrace: "200ms" });
    const running = deferred<AbortSignal>();
    const queue = tw.queue("stuck", {
      handler: (_job, ctx) => {
        running.resolve(ctx.signal);
        return new Promise(() => {});
      },
    });
    const job = await queue.enqueue({ forever: true });
    await tw.start();
    const signal = await within(running.promise, 5_000, "the handler starts");
    expect(signal.aborted).toBe(false);

    await within(tw.stop(), 5_000, "stop() returns once its grace ran out");

    expect(signal.aborted).toBe(true);
    expect(signal.reason).toMatchObject({ code: "TW_JOB_SHUTDOWN" });
    expect(await tw.jobs.get(job.id)).toMatchObject({ status: "pending", attempts: 0, startedAt: null });
    expect(named("job.released")).toEqual([expect.objectContaining({ id: job.id, queue: "stuck", reason: "shutdown" })]);
    expect(named("job.succeeded")).toEqual([]);
  });
});
