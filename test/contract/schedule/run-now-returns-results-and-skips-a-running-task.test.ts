import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import { allStoreCases, durableObjectCase, postgresCase, sqliteFileCase } from "../../support/stores.js";
import { MINUTE, T0, deferred, enginesFor, recordRuns } from "../../support/schedule-fixtures.js";

describe.each(allStoreCases())("tw.scheduler.runNow ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it('runNow("prices") runs it at once, off schedule, and returns [{ task, outcome, result }] with the run\'s return value', async () => {
    const { tw, clock, named } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("prices", { every: "5m", run: runs.record(() => ({ succeeded: 3, failed: 0 })) });
    await clock.set(T0 + 2 * MINUTE);

    expect(await tw.scheduler.runNow("prices")).toEqual([
      { task: "prices", outcome: "succeeded", scheduledAt: T0 + 2 * MINUTE, result: { succeeded: 3, failed: 0 }, durationMs: 0 },
    ]);
    expect(runs.seen).toEqual([{ task: "prices", scheduledAt: T0 + 2 * MINUTE, at: T0 + 2 * MINUTE, missed: 0, manual: true }]);
    expect(named("task.succeeded")).toEqual([expect.objectContaining({ task: "prices", manual: true })]);
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ runs: 1, lastResult: { succeeded: 3, failed: 0 }, history: [expect.objectContaining({ manual: true })] });

    // The manual run does not move the schedule: 00:05 still runs.
    await clock.set(T0 + 5 * MINUTE);
    await tw.tick();
    expect(runs.seen.map((r) => [r.scheduledAt, r.manual])).toEqual([
      [T0 + 2 * MINUTE, true],
      [T0 + 5 * MINUTE, false],
    ]);
  });

  it('runNow("all") runs every task and returns one result each; a failure is a result, not a throw', async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("tenero", { every: "5m", run: runs.record(() => "prices") });
    tw.task("sweep", { cron: "*/15 * * * *", run: runs.record(() => ({ scanned: 10 })) });
    tw.task("flaky", {
      every: "1h",
      run: runs.record(() => {
        throw new Error("hiro 500");
      }),
    });
    const results = await tw.scheduler.runNow("all");
    expect([...results].sort((a, b) => a.task.localeCompare(b.task))).toEqual([
      expect.objectContaining({ task: "flaky", outcome: "failed", error: expect.stringContaining("hiro 500") }),
      expect.objectContaining({ task: "sweep", outcome: "succeeded", result: { scanned: 10 } }),
      expect.objectContaining({ task: "tenero", outcome: "succeeded", result: "prices" }),
    ]);
    expect(runs.seen.map((r) => r.task).sort()).toEqual(["flaky", "sweep", "tenero"]);
    expect(runs.seen.every((r) => r.manual)).toBe(true);
    expect((await tw.scheduler.status()).tasks.find((t) => t.name === "flaky")).toMatchObject({ consecutiveFailures: 1, failures: 1 });
  });

  it('runNow("nope") throws a clear error naming the task and the defined ones', async () => {
    const { tw } = await engines.first();
    tw.task("prices", { every: "5m", run: () => 1 });
    tw.task("sweep", { every: "15m", run: () => 2 });
    await expect(tw.scheduler.runNow("nope")).rejects.toThrow(InvalidInputError);
    await expect(tw.scheduler.runNow("nope")).rejects.toThrow('runNow: unknown task "nope" (defined: prices, sweep)');
    expect((await tw.scheduler.status()).tasks.map((t) => t.runs)).toEqual([0, 0]);
  });

  it("runNow while the task is already running returns outcome skipped and does not start a second run", async () => {
    const { tw, clock } = await engines.first();
    const started = deferred();
    const gate = deferred();
    let calls = 0;
    tw.task("sweep", {
      every: "5m",
      run: async () => {
        calls++;
        started.resolve();
        await gate.promise;
        return "swept";
      },
    });
    await clock.set(T0 + 5 * MINUTE);
    // Not awaited: the run waits on the gate, and tick() waits for the run.
    const tick = tw.tick();
    await started.promise;

    expect(await tw.scheduler.runNow("sweep")).toEqual([
      { task: "sweep", outcome: "skipped", scheduledAt: T0 + 5 * MINUTE, reason: "a run of this task is already going" },
    ]);
    expect(calls).toBe(1);

    gate.resolve();
    await tick;
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ runs: 1, lastResult: "swept", running: false });
    // Once it has finished, runNow runs it again.
    expect(await tw.scheduler.runNow("sweep")).toEqual([expect.objectContaining({ outcome: "succeeded", result: "swept" })]);
    expect(calls).toBe(2);
  });

  it("runNow twice at once: the second is skipped while the first runs", async () => {
    const { tw } = await engines.first();
    const gate = deferred();
    const started = deferred();
    tw.task("sweep", {
      every: "5m",
      run: async () => {
        started.resolve();
        await gate.promise;
        return "swept";
      },
    });
    const first = tw.scheduler.runNow("sweep");
    await started.promise;
    expect(await tw.scheduler.runNow("sweep")).toEqual([expect.objectContaining({ outcome: "skipped" })]);
    gate.resolve();
    expect(await first).toEqual([expect.objectContaining({ outcome: "succeeded", result: "swept" })]);
  });
});

describe.each([sqliteFileCase(), postgresCase(), durableObjectCase()])("runNow respects a run going in another engine ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("runNow in one engine while another engine runs the task returns skipped", async () => {
    const a = await engines.first();
    const b = await engines.another({ clock: a.clock });
    const started = deferred();
    const gate = deferred();
    let calls = 0;
    const run = async () => {
      calls++;
      started.resolve();
      await gate.promise;
      return "swept";
    };
    a.tw.task("sweep", { every: "5m", run });
    b.tw.task("sweep", { every: "5m", run });
    await a.clock.set(T0 + 5 * MINUTE);
    const tick = a.tw.tick();
    await started.promise;
    expect(await b.tw.scheduler.runNow("sweep")).toEqual([expect.objectContaining({ task: "sweep", outcome: "skipped" })]);
    gate.resolve();
    await tick;
    expect(calls).toBe(1);
  });
});
