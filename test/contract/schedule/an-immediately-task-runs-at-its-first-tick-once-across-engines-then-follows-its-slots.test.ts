import { describe, expect, it } from "vitest";
import { allStoreCases, durableObjectCase, postgresCase, sqliteFileCase } from "../../support/stores.js";
import { MINUTE, SECOND, T0, deferred, enginesFor, recordRuns, until, type Engine } from "../../support/schedule-fixtures.js";

describe.each(allStoreCases())("immediately: a task with no run recorded runs at its first tick ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("runs once at the first tick, then at its slots; a task without the option waits for its first slot", async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    await clock.set(T0 + MINUTE + 7 * SECOND);
    tw.task("prices", { every: "5m", immediately: true, run: runs.record(() => "filled") });
    tw.task("sweep", { every: "5m", run: runs.record() });
    expect((await tw.scheduler.status()).tasks.find((t) => t.name === "prices")).toMatchObject({ nextRunAt: T0 + MINUTE + 7 * SECOND, lastRunAt: null });

    await tw.tick();
    expect(runs.seen).toEqual([{ task: "prices", scheduledAt: T0 + MINUTE + 7 * SECOND, at: T0 + MINUTE + 7 * SECOND, missed: 0, manual: false }]);
    expect((await tw.scheduler.status()).tasks.find((t) => t.name === "prices")).toMatchObject({
      lastOutcome: "succeeded",
      lastResult: "filled",
      lastRunAt: T0 + MINUTE + 7 * SECOND,
      nextRunAt: T0 + 5 * MINUTE,
      runs: 1,
    });

    // Later ticks before the slot run nothing more.
    await clock.set(T0 + 2 * MINUTE);
    await tw.tick();
    expect(runs.seen).toHaveLength(1);

    await clock.set(T0 + 5 * MINUTE);
    await tw.tick();
    await clock.set(T0 + 10 * MINUTE);
    await tw.tick();
    expect(runs.slots("prices")).toEqual([T0 + MINUTE + 7 * SECOND, T0 + 5 * MINUTE, T0 + 10 * MINUTE]);
    expect(runs.slots("sweep")).toEqual([T0 + 5 * MINUTE, T0 + 10 * MINUTE]);
  });

  it("a first run that fails is not repeated out of schedule: it was recorded", async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("prices", {
      every: "5m",
      immediately: true,
      run: runs.record(() => {
        throw new Error("tenero answered 503");
      }),
    });
    await clock.set(T0 + SECOND);
    await tw.tick();
    await clock.set(T0 + 2 * SECOND);
    await tw.tick();
    expect(runs.slots()).toEqual([T0 + SECOND]);
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ lastOutcome: "failed", nextRunAt: T0 + 5 * MINUTE, consecutiveFailures: 1 });
  });

  it("waits for a pause to end, then runs at the first tick after it", async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("prices", { every: "1h", immediately: true, run: runs.record() });
    await tw.scheduler.pauseUntil("10m");
    await clock.set(T0 + MINUTE);
    expect(await tw.tick()).toMatchObject({ nextWakeAt: T0 + 10 * MINUTE });
    expect(runs.seen).toEqual([]);
    await clock.set(T0 + 10 * MINUTE);
    await tw.tick();
    expect(runs.slots()).toEqual([T0 + 10 * MINUTE]);
  });

  it("a first run whose runner died is taken over once its lease lapses, for the same time, and only once", async () => {
    const { tw, clock } = await engines.first({ instanceId: "survivor" });
    const runs = recordRuns(clock);
    tw.task("prices", { every: "1h", immediately: true, lease: "1m", run: runs.record(() => "taken over") });
    await tw.scheduler.status();
    await clock.set(T0 + MINUTE);
    const claim = (runner: string) => tw.store.schedule.claimFirstRun({ name: "prices", slot: T0 + MINUTE, runner, until: T0 + 2 * MINUTE, now: clock.now() });
    // A runner claims the first run, then dies without a word; nobody else can claim it meanwhile.
    expect(await claim("dead-runner")).toBe(true);
    expect(await claim("another")).toBe(false);

    expect((await tw.tick()).nextWakeAt).toBe(T0 + 2 * MINUTE + 1);
    expect(runs.seen).toEqual([]);
    await clock.set(T0 + 2 * MINUTE + 1);
    await tw.tick();
    await tw.tick();
    expect(runs.seen).toEqual([{ task: "prices", scheduledAt: T0 + MINUTE, at: T0 + 2 * MINUTE + 1, missed: 0, manual: false }]);
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ runs: 1, lastResult: "taken over", nextRunAt: T0 + 60 * MINUTE });
  });

  it("a task that has a run recorded (here by runNow) ignores the option", async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("prices", { every: "5m", immediately: true, run: runs.record() });
    await tw.scheduler.runNow("prices");
    await clock.set(T0 + MINUTE);
    await tw.tick();
    expect(runs.seen.map((r) => r.manual)).toEqual([true]);
  });
});

// Two engines need one database: SQLite in memory cannot be shared, so it has no case here.
describe.each([sqliteFileCase(), postgresCase(), durableObjectCase()])("immediately across processes and restarts ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  async function threeEngines(overlap: "skip" | "allow") {
    const first = await engines.first({ instanceId: "engine-a" });
    const all: Engine[] = [first, await engines.another({ clock: first.clock, instanceId: "engine-b" }), await engines.another({ clock: first.clock, instanceId: "engine-c" })];
    const runs = recordRuns(first.clock);
    const ranBy: string[] = [];
    const gate = deferred();
    for (const engine of all) {
      engine.tw.task("prices", {
        every: "5m",
        immediately: true,
        overlap,
        run: runs.record(async () => {
          ranBy.push(engine.tw.instanceId);
          await gate.promise;
        }),
      });
    }
    return { clock: first.clock, all, runs, ranBy, gate };
  }

  it.each(["skip", "allow"] as const)("three engines tick at once, and again while the first run goes on (overlap %s): it runs once", async (overlap) => {
    const { clock, all, runs, ranBy, gate } = await threeEngines(overlap);
    await clock.set(T0 + MINUTE);
    const ticks = all.map((e) => e.tw.tick());
    await until(() => runs.seen.length >= 1, "the first run to start");
    // While it runs (not yet recorded), the others tick again: still one run.
    await clock.set(T0 + 2 * MINUTE);
    const more = all.map((e) => e.tw.tick().catch(() => null));
    gate.resolve();
    await Promise.all([...ticks, ...more]);
    expect(runs.slots()).toEqual([T0 + MINUTE]);
    expect(ranBy).toHaveLength(1);
    for (const engine of all) expect((await engine.tw.scheduler.status()).tasks[0]).toMatchObject({ runs: 1, lastScheduledAt: T0 + MINUTE });

    await clock.set(T0 + 5 * MINUTE);
    await Promise.all(all.map((e) => e.tw.tick()));
    expect(runs.slots()).toEqual([T0 + MINUTE, T0 + 5 * MINUTE]);
  });

  it("after a restart, a task that has run does not run again at the new engine's first tick", async () => {
    const first = await engines.first({ instanceId: "before" });
    const runs = recordRuns(first.clock);
    first.tw.task("prices", { every: "5m", immediately: true, run: runs.record() });
    await first.clock.set(T0 + MINUTE);
    await first.tw.tick();
    expect(runs.slots()).toEqual([T0 + MINUTE]);
    await first.tw.stop();

    const restarted = await engines.another({ clock: first.clock, instanceId: "after" });
    restarted.tw.task("prices", { every: "5m", immediately: true, run: runs.record() });
    await first.clock.set(T0 + 2 * MINUTE);
    await restarted.tw.tick();
    expect(runs.slots()).toEqual([T0 + MINUTE]);
    expect((await restarted.tw.scheduler.status()).tasks[0]).toMatchObject({ nextRunAt: T0 + 5 * MINUTE, runs: 1 });
  });
});
