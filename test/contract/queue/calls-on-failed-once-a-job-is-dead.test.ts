import { describe, expect, it } from "vitest";
import { PermanentJobError } from "../../../src/queue/errors.js";
import type { Job } from "../../../src/queue/job.js";
import { allStoreCases } from "../../support/stores.js";
import { SECOND, T0, engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("a queue's onFailed hook ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("runs once, after the last attempt is recorded failed, with the job and its error", async () => {
    const { tw, clock } = await engine();
    const calls: { job: Job; error: string; stored: string | undefined }[] = [];
    const q = tw.queue("pay", {
      retry: { maxAttempts: 2, backoff: () => SECOND },
      handler: () => {
        throw new Error("card declined");
      },
      onFailed: async (job, error) => {
        calls.push({ job, error, stored: (await tw.jobs.get(job.id))?.status });
      },
    });
    const job = await q.enqueue({});
    await tw.tick();
    expect(calls).toEqual([]);
    await clock.advance(SECOND);
    await tw.tick();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.job).toMatchObject({ id: job.id, status: "failed", attempts: 2 });
    expect(calls[0]!.error).toContain("card declined");
    expect(calls[0]!.stored).toBe("failed");
  });

  it("runs for a PermanentJobError, and a hook that throws is logged, not thrown", async () => {
    const { tw, named } = await engine();
    let called = 0;
    const q = tw.queue("pay", {
      handler: () => {
        throw new PermanentJobError("no such account");
      },
      onFailed: () => {
        called++;
        throw new Error("pager down");
      },
    });
    await q.enqueue({});
    expect((await tw.tick()).ran).toBe(1);
    expect(called).toBe(1);
    expect(named("job.on_failed_error")[0]).toMatchObject({ queue: "pay", error: expect.stringContaining("pager down") });
  });

  it("runs when this engine's rescue finds a lapsed lease on the last attempt", async () => {
    const { tw, clock } = await engine();
    const failed: string[] = [];
    const q = tw.queue("pay", { retry: { maxAttempts: 1 }, handler: () => {}, onFailed: (job) => void failed.push(job.id) });
    const job = await q.enqueue({});
    await tw.store.queue.claimDue({ queue: "pay", limit: 1, now: T0, leaseUntil: T0 + SECOND, workerId: "dead/pay" });
    await clock.advance(SECOND + 1);
    await tw.tick();
    expect(failed).toEqual([job.id]);
    expect(await tw.jobs.get(job.id)).toMatchObject({ status: "failed", attempts: 1 });
  });
});
