import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, T0, enginesFor, recordRuns } from "../../support/schedule-fixtures.js";

describe.each(allStoreCases())("each task runs in its own try/catch, seed 003 option B ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("in one tick a failing task and a succeeding task are both recorded, and the tick itself does not throw", async () => {
    const { tw, clock, named } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("tenero", {
      every: "5m",
      run: runs.record(async () => {
        await Promise.resolve();
        throw new Error("tenero answered 503");
      }),
    });
    tw.task("sweep", { every: "5m", run: runs.record(async () => ({ scanned: 12, inserted: 3 })) });

    await clock.set(T0 + 5 * MINUTE);
    expect(await tw.tick()).toMatchObject({ nextWakeAt: T0 + 10 * MINUTE, ran: 0 });
    expect(runs.seen.map((r) => r.task).sort()).toEqual(["sweep", "tenero"]);

    const { tasks } = await tw.scheduler.status();
    const tenero = tasks.find((t) => t.name === "tenero")!;
    const sweep = tasks.find((t) => t.name === "sweep")!;
    expect(sweep).toMatchObject({ lastOutcome: "succeeded", lastResult: { scanned: 12, inserted: 3 }, lastError: null, consecutiveFailures: 0, runs: 1, failures: 0 });
    expect(tenero).toMatchObject({ lastOutcome: "failed", lastResult: null, consecutiveFailures: 1, runs: 1, failures: 1 });
    expect(tenero.lastError).toContain("tenero answered 503");

    expect(named("task.succeeded")).toEqual([expect.objectContaining({ task: "sweep", scheduledAt: T0 + 5 * MINUTE, level: "info" })]);
    expect(named("task.failed")).toEqual([
      expect.objectContaining({ task: "tenero", scheduledAt: T0 + 5 * MINUTE, consecutiveFailures: 1, level: "error", error: expect.stringContaining("tenero answered 503") }),
    ]);

    // The failed task is not retried out of schedule: both run again at the next slot.
    await clock.set(T0 + 10 * MINUTE);
    await tw.tick();
    expect(runs.seen.filter((r) => r.scheduledAt === T0 + 10 * MINUTE).map((r) => r.task).sort()).toEqual(["sweep", "tenero"]);
    expect((await tw.scheduler.status()).tasks.find((t) => t.name === "tenero")).toMatchObject({ consecutiveFailures: 2, failures: 2, runs: 2 });
  });

  it("a task that throws synchronously, or throws a non-Error, does not stop the tasks defined after it", async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("sync-throw", {
      every: "5m",
      run: runs.record(() => {
        throw new TypeError("cannot read properties of undefined");
      }),
    });
    tw.task("string-throw", {
      every: "5m",
      run: runs.record(() => {
        throw "quota exhausted";
      }),
    });
    tw.task("sweep", { every: "5m", run: runs.record(() => "swept") });

    await clock.set(T0 + 5 * MINUTE);
    await expect(tw.tick()).resolves.toMatchObject({ nextWakeAt: T0 + 10 * MINUTE, ran: 0 });
    expect(runs.seen.map((r) => r.task).sort()).toEqual(["string-throw", "sweep", "sync-throw"]);

    const byName = Object.fromEntries((await tw.scheduler.status()).tasks.map((t) => [t.name, t]));
    expect(byName["sweep"]).toMatchObject({ lastOutcome: "succeeded", lastResult: "swept", consecutiveFailures: 0 });
    expect(byName["sync-throw"]).toMatchObject({ lastOutcome: "failed", consecutiveFailures: 1 });
    expect(byName["sync-throw"]!.lastError).toContain("TypeError: cannot read properties of undefined");
    expect(byName["string-throw"]).toMatchObject({ lastOutcome: "failed", consecutiveFailures: 1, lastError: '"quota exhausted"' });
  });

  it("runNow(\"all\") isolates failures the same way: each task gets its own result", async () => {
    const { tw } = await engines.first();
    tw.task("tenero", {
      every: "5m",
      run: () => {
        throw new Error("tenero down");
      },
    });
    tw.task("sweep", { every: "15m", run: () => 42 });
    const results = await tw.scheduler.runNow("all");
    expect([...results].sort((a, b) => a.task.localeCompare(b.task))).toEqual([
      expect.objectContaining({ task: "sweep", outcome: "succeeded", result: 42 }),
      expect.objectContaining({ task: "tenero", outcome: "failed", error: expect.stringContaining("tenero down") }),
    ]);
  });
});
