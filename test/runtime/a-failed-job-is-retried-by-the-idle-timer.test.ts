import { describe, expect, it } from "vitest";
import { allStoreCases } from "../support/stores.js";
import { eventually, realEngines } from "../support/real-time.js";

describe.each(allStoreCases())("$name: in continuous mode, a job that fails once", (c) => {
  const engine = realEngines({ afterStop: () => c.cleanup() });

  it("is retried after its backoff by the worker's own timer, and succeeds", async () => {
    // An hour-long poll and rescue interval: only the timer armed for the retry's due time can run it soon.
    const { tw, named } = await engine({ store: c.make(), pollInterval: "1h", rescueInterval: "1h" });
    const attempts: number[] = [];
    const queue = tw.queue("flaky", {
      retry: { maxAttempts: 3, backoff: () => 50 },
      handler: (_job, ctx) => {
        attempts.push(ctx.attempt);
        if (ctx.attempt === 1) throw new Error("upstream hiccup");
      },
    });
    await tw.start();
    const enqueued = await queue.enqueue({ order: 7 });

    const job = await eventually(async () => {
      const j = await tw.jobs.get(enqueued.id);
      return j?.status === "succeeded" && j;
    }, "the retried job to succeed");
    expect(job.attempts).toBe(2);
    expect(job.lastError).toContain("upstream hiccup");
    expect(attempts).toEqual([1, 2]);
    const [retry] = named("job.retry_scheduled");
    expect(retry).toMatchObject({ id: enqueued.id, attempt: 1, maxAttempts: 3 });
    expect(retry!.delayMs).toBeLessThanOrEqual(50);
    expect(named("job.failed")).toEqual([]);
  });
});
