import { describe, expect, it } from "vitest";
import { allStoreCases, durableObjectCase, postgresCase, sqliteFileCase } from "../../support/stores.js";
import { MINUTE, T0, enginesFor, recordRuns, type Engine } from "../../support/schedule-fixtures.js";

/** Every "5m"; `outcomes[i]` says whether the run with index i fails (later runs succeed). */
function flaky(engine: Engine, outcomes: ("fail" | "ok")[], options: { breaker?: { after: number } } = {}) {
  const runs = recordRuns(engine.clock);
  let i = 0;
  engine.tw.task("sweep", {
    every: "5m",
    ...options,
    run: runs.record(() => {
      const n = i++;
      if ((outcomes[n] ?? "ok") === "fail") throw new Error(`hiro 502 on run ${n + 1}`);
      return { run: n + 1 };
    }),
  });
  return runs;
}

const sweep = async (engine: Engine) => (await engine.tw.scheduler.status()).tasks.find((t) => t.name === "sweep")!;

async function tickAt(engine: Engine, minutes: number[]) {
  for (const m of minutes) {
    await engine.clock.set(T0 + m * MINUTE);
    await engine.tw.tick();
  }
}

describe.each(allStoreCases())("consecutive failures and the breaker, seed 003 option D ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("consecutiveFailures counts failures in a row and resets on a success", async () => {
    const engine = await engines.first();
    flaky(engine, ["fail", "fail", "ok", "fail"]);
    await tickAt(engine, [5, 10]);
    expect(await sweep(engine)).toMatchObject({ consecutiveFailures: 2, failures: 2, runs: 2, lastError: expect.stringContaining("hiro 502 on run 2") });
    await tickAt(engine, [15]);
    expect(await sweep(engine)).toMatchObject({ consecutiveFailures: 0, failures: 2, runs: 3, lastOutcome: "succeeded", lastResult: { run: 3 } });
    await tickAt(engine, [20]);
    expect(await sweep(engine)).toMatchObject({ consecutiveFailures: 1, failures: 3, runs: 4 });
    expect(engine.named("task.failed").map((e) => e["consecutiveFailures"])).toEqual([1, 2, 1]);
  });

  it("breaker { after: 3 }: the third failure in a row pauses the task with a critical event; resume() closes it", async () => {
    const engine = await engines.first();
    const { tw, clock, named } = engine;
    const runs = flaky(engine, ["fail", "fail", "fail"], { breaker: { after: 3 } });

    await tickAt(engine, [5, 10]);
    expect(await sweep(engine)).toMatchObject({ consecutiveFailures: 2, breakerOpen: false, paused: false });
    expect(named("task.breaker_opened")).toEqual([]);

    await clock.set(T0 + 15 * MINUTE);
    await tw.tick();
    expect(await sweep(engine)).toMatchObject({ consecutiveFailures: 3, breakerOpen: true, paused: true, lastOutcome: "failed" });
    expect(named("task.breaker_opened")).toEqual([
      expect.objectContaining({ level: "critical", task: "sweep", consecutiveFailures: 3, action: expect.stringContaining('resume("sweep")') }),
    ]);

    // Open: later slots do not run, however long it stays open, and nothing else is scheduled, so
    // the open breaker gives the runtime no reason to wake.
    await clock.set(T0 + 20 * MINUTE);
    expect((await tw.tick()).nextWakeAt).toBeNull();
    await tickAt(engine, [25, 60, 120]);
    expect(runs.slots()).toEqual([5, 10, 15].map((m) => T0 + m * MINUTE));
    expect(named("task.breaker_opened")).toHaveLength(1);

    await clock.set(T0 + 122 * MINUTE);
    await tw.scheduler.resume("sweep");
    expect(named("scheduler.resumed")).toEqual([expect.objectContaining({ task: "sweep" })]);
    expect(await sweep(engine)).toMatchObject({ breakerOpen: false, paused: false, consecutiveFailures: 0 });

    // The slot held back while it was open runs at once (the ones before it collapse into it), then the schedule goes on.
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 125 * MINUTE);
    await tickAt(engine, [125]);
    expect(runs.seen.slice(3).map((r) => [r.scheduledAt, r.at, r.missed])).toEqual([
      [T0 + 120 * MINUTE, T0 + 122 * MINUTE, 20],
      [T0 + 125 * MINUTE, T0 + 125 * MINUTE, 0],
    ]);
    expect(await sweep(engine)).toMatchObject({ lastOutcome: "succeeded", consecutiveFailures: 0, breakerOpen: false, runs: 5, failures: 3 });
  });

  it("resume() with no task closes every open breaker", async () => {
    const engine = await engines.first();
    const runs = flaky(engine, ["fail"], { breaker: { after: 1 } });
    await tickAt(engine, [5, 10]);
    expect(await sweep(engine)).toMatchObject({ breakerOpen: true, paused: true });
    await engine.tw.scheduler.resume();
    await tickAt(engine, [15]);
    expect(runs.slots()).toEqual([T0 + 5 * MINUTE, T0 + 15 * MINUTE]);
    expect(await sweep(engine)).toMatchObject({ breakerOpen: false, lastOutcome: "succeeded" });
  });

  it("without a breaker a task never pauses: it fails at every slot and keeps counting", async () => {
    const engine = await engines.first();
    const runs = flaky(engine, Array<"fail">(12).fill("fail"));
    const minutes = Array.from({ length: 12 }, (_, i) => (i + 1) * 5);
    await tickAt(engine, minutes);
    expect(runs.slots()).toEqual(minutes.map((m) => T0 + m * MINUTE));
    expect(await sweep(engine)).toMatchObject({ consecutiveFailures: 12, failures: 12, breakerOpen: false, paused: false });
    expect(engine.named("task.breaker_opened")).toEqual([]);
  });
});

describe.each([sqliteFileCase(), postgresCase(), durableObjectCase()])("consecutive failures and the breaker are in the store, not the process ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("a second engine on the same store sees the count, continues it, and a success resets it for everyone", async () => {
    const first = await engines.first();
    flaky(first, ["fail", "fail"]);
    await tickAt(first, [5, 10]);
    await first.tw.stop();

    // A restart: a new engine (new process, new clock) on the same database.
    const second = await engines.another();
    await second.clock.set(T0 + 12 * MINUTE);
    const runs = flaky(second, ["fail", "ok"]);
    expect(await sweep(second)).toMatchObject({ consecutiveFailures: 2, failures: 2, runs: 2, lastError: expect.stringContaining("hiro 502 on run 2") });
    await tickAt(second, [15]);
    expect(await sweep(second)).toMatchObject({ consecutiveFailures: 3, failures: 3, runs: 3 });

    // Two engines at once: a success in one is seen by the other.
    const third = await engines.another({ clock: second.clock });
    flaky(third, []);
    await tickAt(second, [20]);
    expect(runs.slots()).toEqual([T0 + 15 * MINUTE, T0 + 20 * MINUTE]);
    expect(await sweep(third)).toMatchObject({ consecutiveFailures: 0, failures: 3, runs: 4, lastOutcome: "succeeded" });
  });

  it("an open breaker survives a restart: the new engine does not run the task until resume()", async () => {
    const first = await engines.first();
    flaky(first, ["fail", "fail"], { breaker: { after: 2 } });
    await tickAt(first, [5, 10]);
    expect(await sweep(first)).toMatchObject({ breakerOpen: true });
    await first.tw.stop();

    const second = await engines.another();
    const runs = flaky(second, [], { breaker: { after: 2 } });
    await tickAt(second, [15, 20]);
    expect(runs.seen).toEqual([]);
    expect(await sweep(second)).toMatchObject({ breakerOpen: true, paused: true, consecutiveFailures: 2 });

    await second.tw.scheduler.resume("sweep");
    await tickAt(second, [25]);
    expect(runs.slots()).toEqual([T0 + 25 * MINUTE]);
    expect(await sweep(second)).toMatchObject({ breakerOpen: false, consecutiveFailures: 0, runs: 3 });
  });
});
