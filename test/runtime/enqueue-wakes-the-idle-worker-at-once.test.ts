import { describe, expect, it } from "vitest";
import { allStoreCases } from "../support/stores.js";
import { deferred, eventually, realEngines, within, type Deferred } from "../support/real-time.js";

// The poll interval, the rescue interval and the lease are all an hour, so no timer of the engine
// can explain a job that runs within seconds: only the wake-up an enqueue sends.
describe.each(allStoreCases())("$name: an enqueue in the same process", (c) => {
  const engine = realEngines({ afterStop: () => c.cleanup() });

  it("is picked up at once by a started worker, without waiting for the poll interval", async () => {
    const { tw } = await engine({ store: c.make(), pollInterval: "1h", rescueInterval: "1h" });
    const runs = new Map<number, Deferred<string>>([
      [1, deferred<string>()],
      [2, deferred<string>()],
    ]);
    const queue = tw.queue<{ n: number }>("wake", { lease: "1h", handler: (job) => runs.get(job.payload.n)!.resolve(job.id) });
    await tw.start();

    // Right after start(): the worker's first claim may still be in flight.
    const first = await queue.enqueue({ n: 1 });
    expect(await within(runs.get(1)!.promise, 5_000, "the job enqueued right after start() runs")).toBe(first.id);
    await eventually(async () => (await tw.jobs.get(first.id))?.status === "succeeded", "the first job to succeed");

    // Now the worker has found nothing more and sleeps on a timer an hour away.
    const second = await queue.enqueue({ n: 2 });
    expect(await within(runs.get(2)!.promise, 5_000, "the job enqueued while the worker sleeps runs")).toBe(second.id);
    const done = await eventually(async () => {
      const job = await tw.jobs.get(second.id);
      return job?.status === "succeeded" && job;
    }, "the second job to succeed");
    expect(done.attempts).toBe(1);
  });
});
