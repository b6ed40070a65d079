import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import { allStoreCases, durableObjectCase, postgresCase, sqliteFileCase } from "../../support/stores.js";
import { DAY, HOUR, MINUTE, T0, enginesFor, recordRuns, type Engine } from "../../support/schedule-fixtures.js";

const minutes = (...ms: number[]) => ms.map((m) => T0 + m * MINUTE);

function twoTasks(engine: Engine) {
  const runs = recordRuns(engine.clock);
  engine.tw.task("prices", { every: "5m", run: runs.record(() => "priced") });
  engine.tw.task("sweep", { every: "5m", run: runs.record(() => "swept") });
  return runs;
}

async function tickAt(engine: Engine, ms: number[]) {
  for (const m of ms) {
    await engine.clock.set(T0 + m * MINUTE);
    await engine.tw.tick();
  }
}

describe.each(allStoreCases())("pauseUntil and resume, the ops kill switch ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("pauseUntil(time) stops every task until then; runNow still works; at the time the schedule goes on", async () => {
    const engine = await engines.first();
    const { tw, clock, named } = engine;
    const runs = twoTasks(engine);
    await clock.set(T0 + 2 * MINUTE);
    await tw.scheduler.pauseUntil(new Date(T0 + 20 * MINUTE));
    expect(named("scheduler.paused")).toEqual([expect.objectContaining({ task: "all", until: T0 + 20 * MINUTE })]);

    await clock.set(T0 + 5 * MINUTE);
    // Paused: the tick asks to come back when the pause ends.
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 20 * MINUTE);
    await tickAt(engine, [10, 15]);
    expect(runs.seen).toEqual([]);

    await clock.set(T0 + 17 * MINUTE);
    expect(await tw.scheduler.runNow("prices")).toEqual([expect.objectContaining({ task: "prices", outcome: "succeeded", result: "priced" })]);
    expect(runs.seen).toEqual([expect.objectContaining({ task: "prices", manual: true })]);
    await clock.set(T0 + 20 * MINUTE - 1);
    await tw.tick();
    expect(runs.seen).toHaveLength(1);

    // 00:20: both run, the three slots they slept through collapsed into this run.
    await tickAt(engine, [20]);
    const scheduled = runs.seen.filter((r) => !r.manual).sort((a, b) => a.task.localeCompare(b.task));
    expect(scheduled).toEqual([
      { task: "prices", scheduledAt: T0 + 20 * MINUTE, at: T0 + 20 * MINUTE, missed: 3, manual: false },
      { task: "sweep", scheduledAt: T0 + 20 * MINUTE, at: T0 + 20 * MINUTE, missed: 3, manual: false },
    ]);
    expect((await tw.scheduler.status()).pausedUntil).toBeNull();
  });

  it('pauseUntil(time, "sweep") pauses that task only', async () => {
    const engine = await engines.first();
    const { tw } = engine;
    const runs = twoTasks(engine);
    await tw.scheduler.pauseUntil(T0 + 12 * MINUTE, "sweep");
    expect(engine.named("scheduler.paused")).toEqual([expect.objectContaining({ task: "sweep", until: T0 + 12 * MINUTE })]);
    await tickAt(engine, [5, 10, 15]);
    expect(runs.slots("prices")).toEqual(minutes(5, 10, 15));
    expect(runs.slots("sweep")).toEqual(minutes(15));
    expect((await tw.scheduler.status()).pausedUntil).toBeNull();
  });

  it("resume() undoes a pause at once: the slot held back runs at the next tick", async () => {
    const engine = await engines.first();
    const { tw, clock, named } = engine;
    const runs = twoTasks(engine);
    await tw.scheduler.pauseUntil(T0 + DAY);
    await tw.scheduler.pauseUntil(T0 + DAY, "sweep");
    await tickAt(engine, [5, 10]);
    expect(runs.seen).toEqual([]);

    await clock.set(T0 + 12 * MINUTE);
    await tw.scheduler.resume();
    expect(named("scheduler.resumed")).toEqual([expect.objectContaining({ task: "all" })]);
    const status = await tw.scheduler.status();
    expect(status.pausedUntil).toBeNull();
    expect(status.tasks.map((t) => [t.name, t.paused, t.pausedUntil])).toEqual([
      ["prices", false, null],
      ["sweep", false, null],
    ]);
    await tw.tick();
    expect(runs.seen.map((r) => [r.task, r.scheduledAt, r.at, r.missed]).sort()).toEqual([
      ["prices", T0 + 10 * MINUTE, T0 + 12 * MINUTE, 1],
      ["sweep", T0 + 10 * MINUTE, T0 + 12 * MINUTE, 1],
    ]);
    await tickAt(engine, [15]);
    expect(runs.slots("prices")).toEqual(minutes(10, 15));
  });

  it('resume("sweep") undoes that task\'s pause but not the pause of all tasks', async () => {
    const engine = await engines.first();
    const { tw } = engine;
    const runs = twoTasks(engine);
    await tw.scheduler.pauseUntil(T0 + HOUR, "sweep");
    await tw.scheduler.pauseUntil(T0 + 12 * MINUTE);
    await tw.scheduler.resume("sweep");
    await tickAt(engine, [5, 10]);
    expect(runs.seen).toEqual([]);
    await tickAt(engine, [15]);
    expect(runs.slots("prices")).toEqual(minutes(15));
    expect(runs.slots("sweep")).toEqual(minutes(15));
  });

  it("a pause that has already ended changes nothing; an unknown task or a bad time is refused", async () => {
    const engine = await engines.first();
    const { tw, clock } = engine;
    const runs = twoTasks(engine);
    await clock.set(T0 + 5 * MINUTE);
    await tw.scheduler.pauseUntil(T0 + 4 * MINUTE);
    await tw.tick();
    expect(runs.seen).toHaveLength(2);
    await expect(tw.scheduler.pauseUntil(T0 + HOUR, "nope")).rejects.toThrow(InvalidInputError);
    await expect(tw.scheduler.pauseUntil(T0 + HOUR, "nope")).rejects.toThrow(/unknown task "nope"/);
    await expect(tw.scheduler.resume("nope")).rejects.toThrow(/unknown task "nope"/);
    await expect(tw.scheduler.pauseUntil(new Date("not a date"))).rejects.toThrow(/pauseUntil: invalid Date/);
    await expect(tw.scheduler.pauseUntil(Number.NaN)).rejects.toThrow(InvalidInputError);
    expect((await tw.scheduler.status()).pausedUntil).toBeNull();
  });
});

describe.each([sqliteFileCase(), postgresCase(), durableObjectCase()])("a pause is in the store: every engine on it obeys ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("a pause set by one engine stops the other's runs; a resume from either lifts it", async () => {
    const ops = await engines.first();
    twoTasks(ops);
    const worker = await engines.another({ clock: ops.clock });
    const runs = twoTasks(worker);
    await ops.tw.scheduler.pauseUntil(T0 + DAY);
    await tickAt(worker, [5, 10]);
    expect(runs.seen).toEqual([]);
    expect((await worker.tw.scheduler.status()).pausedUntil).toBe(T0 + DAY);
    await ops.tw.scheduler.resume();
    await tickAt(worker, [15]);
    expect(runs.seen.map((r) => r.task).sort()).toEqual(["prices", "sweep"]);
  });
});
