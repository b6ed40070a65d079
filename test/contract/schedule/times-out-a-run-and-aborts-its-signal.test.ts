import { describe, expect, it } from "vitest";
import { TaskAbortedError } from "../../../src/schedule/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, SECOND, T0, deferred, enginesFor } from "../../support/schedule-fixtures.js";

describe.each(allStoreCases())("the timeout option fails a run that takes too long ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("a run still going after its timeout fails, its signal is aborted with a timeout reason, and the task runs at its next slot", async () => {
    const { tw, clock, named } = await engines.first();
    const started = deferred();
    let signal: AbortSignal | undefined;
    let abortedAt: number | undefined;
    let n = 0;
    tw.task("sweep", {
      every: "5m",
      timeout: "30s",
      run: (ctx) => {
        if (++n > 1) return "fast";
        signal = ctx.signal;
        ctx.signal.addEventListener("abort", () => (abortedAt = clock.now()));
        started.resolve();
        // Never settles by itself: only the timeout ends it.
        return new Promise<never>(() => {});
      },
    });

    await clock.set(T0 + 5 * MINUTE);
    const tick = tw.tick();
    await started.promise;
    await clock.set(T0 + 5 * MINUTE + 30 * SECOND - 1);
    expect(signal!.aborted).toBe(false);
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ running: true, runs: 0 });

    await clock.advance(1);
    expect((await tick).nextWakeAt).toBe(T0 + 10 * MINUTE);
    expect(signal!.aborted).toBe(true);
    expect(abortedAt).toBe(T0 + 5 * MINUTE + 30 * SECOND);
    expect(signal!.reason).toBeInstanceOf(TaskAbortedError);
    expect((signal!.reason as TaskAbortedError).code).toBe("TW_TASK_TIMEOUT");

    const status = (await tw.scheduler.status()).tasks[0]!;
    expect(status).toMatchObject({ running: false, lastOutcome: "failed", consecutiveFailures: 1, failures: 1, runs: 1, lastDurationMs: 30 * SECOND });
    expect(status.lastError).toContain("run timed out after 30000 ms");
    expect(named("task.failed")).toEqual([expect.objectContaining({ task: "sweep", scheduledAt: T0 + 5 * MINUTE, durationMs: 30 * SECOND, error: expect.stringContaining("timed out") })]);

    await clock.set(T0 + 10 * MINUTE);
    await tw.tick();
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ lastOutcome: "succeeded", lastResult: "fast", consecutiveFailures: 0, runs: 2 });
  });

  it("a run that ends 1 ms before its timeout succeeds, and its signal is never aborted", async () => {
    const { tw, clock } = await engines.first();
    const started = deferred();
    const release = deferred();
    let signal: AbortSignal | undefined;
    tw.task("sweep", {
      every: "5m",
      timeout: "30s",
      run: async (ctx) => {
        signal = ctx.signal;
        started.resolve();
        await release.promise;
        return "just in time";
      },
    });
    await clock.set(T0 + 5 * MINUTE);
    const tick = tw.tick();
    await started.promise;
    await clock.set(T0 + 5 * MINUTE + 30 * SECOND - 1);
    release.resolve();
    await tick;
    expect(signal!.aborted).toBe(false);
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ lastOutcome: "succeeded", lastResult: "just in time", lastDurationMs: 30 * SECOND - 1 });
    // The timer was cleared: moving past it changes nothing.
    await clock.advance("1m");
    expect(signal!.aborted).toBe(false);
  });

  it("runNow honours the timeout too", async () => {
    const { tw, clock } = await engines.first();
    const started = deferred();
    tw.task("sweep", {
      every: "5m",
      timeout: "10s",
      run: () => {
        started.resolve();
        return new Promise<never>(() => {});
      },
    });
    const manual = tw.scheduler.runNow("sweep");
    await started.promise;
    await clock.advance("10s");
    expect(await manual).toEqual([expect.objectContaining({ task: "sweep", outcome: "failed", error: expect.stringContaining("run timed out after 10000 ms") })]);
  });
});
