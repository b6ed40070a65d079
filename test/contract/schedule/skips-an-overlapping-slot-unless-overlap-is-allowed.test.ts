import { describe, expect, it } from "vitest";
import type { TaskOptions } from "../../../src/schedule/task.js";
import { allStoreCases, durableObjectCase, postgresCase, sqliteFileCase } from "../../support/stores.js";
import { MINUTE, T0, deferred, enginesFor, type Deferred, type Engine } from "../../support/schedule-fixtures.js";

/** A task whose n-th run (0-based) signals `started[n]` and waits for `gates[n]`. */
function gated(engine: Engine, options: Omit<TaskOptions, "run" | "every" | "cron"> = {}) {
  const started: Deferred[] = Array.from({ length: 5 }, () => deferred());
  const gates: Deferred[] = Array.from({ length: 5 }, () => deferred());
  const slots: number[] = [];
  engine.tw.task("sweep", {
    every: "5m",
    ...options,
    run: async (ctx) => {
      const n = slots.push(ctx.scheduledAt) - 1;
      started[n]!.resolve();
      await gates[n]!.promise;
      return `run ${n + 1}`;
    },
  });
  return { started, gates, slots };
}

describe.each(allStoreCases())("a slot that comes while the previous run is still going ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it('overlap "skip" (the default): the slot is not doubled, a task.overlap_skipped event is logged and counted', async () => {
    const engine = await engines.first();
    const { tw, clock, named } = engine;
    // A lease longer than the clock's jumps: the fake clock moves 5 minutes at once, faster than a
    // heartbeat's round trip to PostgreSQL could renew a short lease (renewal is not what this tests).
    const { started, gates, slots } = gated(engine, { lease: "1h" });

    await clock.set(T0 + 5 * MINUTE);
    const first = tw.tick();
    await started[0]!.promise;

    await clock.set(T0 + 10 * MINUTE);
    await tw.tick();
    expect(slots).toEqual([T0 + 5 * MINUTE]);
    expect(named("task.overlap_skipped")).toEqual([expect.objectContaining({ level: "warn", task: "sweep", scheduledAt: T0 + 10 * MINUTE })]);
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ overlapsSkipped: 1, running: true, runs: 0 });

    // Still going at 00:15: skipped again; ticking twice on one slot counts it once.
    await clock.set(T0 + 15 * MINUTE);
    await tw.tick();
    await tw.tick();
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ overlapsSkipped: 2 });

    gates[0]!.resolve();
    await first;
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ runs: 1, running: false, lastResult: "run 1", lastScheduledAt: T0 + 5 * MINUTE });

    // The skipped slots are not made up later: the next run is the next slot.
    await clock.set(T0 + 17 * MINUTE);
    await tw.tick();
    expect(slots).toHaveLength(1);
    await clock.set(T0 + 20 * MINUTE);
    gates[1]!.resolve();
    await tw.tick();
    expect(slots).toEqual([T0 + 5 * MINUTE, T0 + 20 * MINUTE]);
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ runs: 2, overlapsSkipped: 2, missed: 0 });
  });

  it('overlap "allow": the second run starts while the first is still going, and both are recorded', async () => {
    const engine = await engines.first();
    const { tw, clock, named } = engine;
    const { started, gates, slots } = gated(engine, { overlap: "allow" });

    await clock.set(T0 + 5 * MINUTE);
    const first = tw.tick();
    await started[0]!.promise;
    await clock.set(T0 + 10 * MINUTE);
    const second = tw.tick();
    await started[1]!.promise;
    expect(slots).toEqual([T0 + 5 * MINUTE, T0 + 10 * MINUTE]);
    expect(named("task.overlap_skipped")).toEqual([]);

    // They finish in either order.
    gates[1]!.resolve();
    await second;
    gates[0]!.resolve();
    await first;
    const status = (await tw.scheduler.status()).tasks[0]!;
    expect(status).toMatchObject({ runs: 2, overlapsSkipped: 0, running: false });
    expect(status.history.map((h) => [h.scheduledAt, h.result]).sort()).toEqual([
      [T0 + 5 * MINUTE, "run 1"],
      [T0 + 10 * MINUTE, "run 2"],
    ]);
  });
});

describe.each([sqliteFileCase(), postgresCase(), durableObjectCase()])("overlap is checked across engines ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("a run going in one engine makes another engine skip the next slot", async () => {
    const a = await engines.first();
    const b = await engines.another({ clock: a.clock });
    // A lease longer than the clock's jumps (see above).
    const inA = gated(a, { lease: "1h" });
    const inB = gated(b, { lease: "1h" });

    await a.clock.set(T0 + 5 * MINUTE);
    const first = a.tw.tick();
    await inA.started[0]!.promise;

    await a.clock.set(T0 + 10 * MINUTE);
    await b.tw.tick();
    expect(inB.slots).toEqual([]);
    expect(b.named("task.overlap_skipped")).toEqual([expect.objectContaining({ task: "sweep", scheduledAt: T0 + 10 * MINUTE })]);

    inA.gates[0]!.resolve();
    await first;
    await a.clock.set(T0 + 15 * MINUTE);
    inB.gates[0]!.resolve();
    await b.tw.tick();
    expect([...inA.slots, ...inB.slots]).toEqual([T0 + 5 * MINUTE, T0 + 15 * MINUTE]);
    expect((await a.tw.scheduler.status()).tasks[0]).toMatchObject({ runs: 2, overlapsSkipped: 1 });
  });
});
