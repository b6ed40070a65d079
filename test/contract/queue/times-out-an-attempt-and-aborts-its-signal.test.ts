import { describe, expect, it } from "vitest";
import { exponential } from "../../../src/core/backoff.js";
import { JobAbortedError } from "../../../src/queue/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { SECOND, T0, deferred, engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("the timeout option fails an attempt that runs too long ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("an attempt still running after 30s fails, and ctx.signal is aborted with a timeout reason", async () => {
    const { tw, clock, named } = await engine();
    let started = deferred();
    let signal: AbortSignal | undefined;
    let abortedAt: number | undefined;
    const q = tw.queue("export", {
      timeout: "30s",
      lease: "5m",
      retry: { maxAttempts: 2, backoff: exponential({ base: "10s" }) },
      handler: (_job, ctx) => {
        signal = ctx.signal;
        ctx.signal.addEventListener("abort", () => (abortedAt = clock.now()));
        started.resolve();
        // Never settles on its own: only the timeout ends this attempt.
        return new Promise<never>(() => {});
      },
    });
    const { id } = await q.enqueue({});

    // tick() awaits its handlers, so it is started, not awaited, while the clock moves.
    const tick = tw.tick();
    await started.promise;
    await clock.set(T0 + 30 * SECOND - 1);
    expect(signal!.aborted).toBe(false);
    expect((await tw.jobs.get(id))?.status).toBe("running");

    await clock.advance(1);
    expect(await tick).toMatchObject({ ran: 1, nextWakeAt: T0 + 40 * SECOND });

    expect(signal!.aborted).toBe(true);
    expect(abortedAt).toBe(T0 + 30 * SECOND);
    expect(signal!.reason).toBeInstanceOf(JobAbortedError);
    expect((signal!.reason as JobAbortedError).code).toBe("TW_JOB_TIMEOUT");
    const job = await tw.jobs.get(id);
    expect(job).toMatchObject({ status: "pending", attempts: 1, runAt: T0 + 40 * SECOND });
    expect(job!.lastError).toContain("attempt timed out after 30000 ms");
    expect(named("job.retry_scheduled")).toEqual([expect.objectContaining({ queue: "export", id, attempt: 1, retryAt: T0 + 40 * SECOND })]);

    // The second and last attempt times out as well: the job fails for good.
    await clock.set(T0 + 40 * SECOND);
    started = deferred();
    const last = tw.tick();
    await started.promise;
    expect(signal!.aborted).toBe(false);
    await clock.advance("30s");
    expect(await last).toMatchObject({ ran: 1, nextWakeAt: null });
    expect(await tw.jobs.get(id)).toMatchObject({ status: "failed", attempts: 2, finishedAt: T0 + 70 * SECOND, lastError: expect.stringContaining("timed out") });
    expect(signal!.aborted).toBe(true);
    expect(named("job.failed")).toEqual([expect.objectContaining({ queue: "export", id, attempt: 2 })]);
  });

  it("an attempt that finishes 1 ms before the timeout succeeds and its signal is never aborted", async () => {
    const { tw, clock } = await engine();
    const started = deferred();
    const release = deferred();
    let signal: AbortSignal | undefined;
    const q = tw.queue("export", {
      timeout: "30s",
      lease: "5m",
      handler: async (_job, ctx) => {
        signal = ctx.signal;
        started.resolve();
        await release.promise;
      },
    });
    const { id } = await q.enqueue({});

    const tick = tw.tick();
    await started.promise;
    await clock.set(T0 + 30 * SECOND - 1);
    release.resolve();
    expect(await tick).toMatchObject({ ran: 1, nextWakeAt: null });

    expect(signal!.aborted).toBe(false);
    expect(await tw.jobs.get(id)).toMatchObject({ status: "succeeded", attempts: 1, lastError: null });
    // The timeout timer was cleared: moving past it changes nothing.
    await clock.advance("1m");
    expect(signal!.aborted).toBe(false);
    expect((await tw.jobs.get(id))?.status).toBe("succeeded");
  });
});
