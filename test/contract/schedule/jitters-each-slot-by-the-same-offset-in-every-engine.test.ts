import { describe, expect, it } from "vitest";
import { allStoreCases, durableObjectCase, postgresCase, sqliteFileCase } from "../../support/stores.js";
import { MINUTE, SECOND, T0, enginesFor, recordRuns, type Engine } from "../../support/schedule-fixtures.js";

const SLOTS = [5, 10, 15, 20, 25, 30].map((m) => T0 + m * MINUTE);

const nextRunAt = async (engine: Engine) => (await engine.tw.scheduler.status()).tasks[0]!.nextRunAt!;

/** Runs "prices" (jitter 30s) through SLOTS, checking each runs exactly at its jittered time; returns the offsets. */
async function runThroughSlots(engine: Engine): Promise<number[]> {
  const { tw, clock } = engine;
  const runs = recordRuns(clock);
  tw.task("prices", { every: "5m", jitter: "30s", run: runs.record() });
  const offsets: number[] = [];
  for (const slot of SLOTS) {
    const due = await nextRunAt(engine);
    const offset = due - slot;
    expect(offset).toBeGreaterThanOrEqual(0);
    expect(offset).toBeLessThanOrEqual(30 * SECOND);
    offsets.push(offset);

    // At the slot itself (if the offset is not 0) and 1 ms before its time, nothing runs.
    for (const before of [slot, due - 1].filter((t) => t < due && t >= clock.now())) {
      await clock.set(before);
      expect((await tw.tick()).nextWakeAt).toBe(due);
    }
    expect(runs.seen).toHaveLength(offsets.length - 1);

    await clock.set(due);
    await tw.tick();
    // The run starts at slot + offset, and ctx.scheduledAt is the slot itself.
    expect(runs.seen.at(-1)).toEqual({ task: "prices", scheduledAt: slot, at: due, missed: 0, manual: false });
  }
  return offsets;
}

describe.each(allStoreCases())('jitter: "30s" ($name)', (storeCase) => {
  const engines = enginesFor(storeCase);
  // A second, separate store of the same kind: nothing is shared with the first but the task's name.
  const separate = enginesFor(allStoreCases().find((c) => c.name === storeCase.name)!);

  it("each slot runs at slot + an offset in [0, 30s], with ctx.scheduledAt the slot; offsets vary by slot", async () => {
    const offsets = await runThroughSlots(await engines.first());
    // The offset spreads load: it is not one constant for every slot.
    expect(new Set(offsets).size).toBeGreaterThan(1);
  });

  it("the offset is a pure function of the task and the slot: an engine on a separate store computes the same times", async () => {
    const offsets = await runThroughSlots(await engines.first());
    expect(await runThroughSlots(await separate.first())).toEqual(offsets);
  });
});

describe.each([sqliteFileCase(), postgresCase(), durableObjectCase()])('jitter: "30s" with two engines on the same store ($name)', (storeCase) => {
  const engines = enginesFor(storeCase);

  it("both engines agree on each slot's time, and the slot runs once, at that time", async () => {
    const a = await engines.first();
    const b = await engines.another({ clock: a.clock });
    const runs = recordRuns(a.clock);
    a.tw.task("prices", { every: "5m", jitter: "30s", run: runs.record() });
    b.tw.task("prices", { every: "5m", jitter: "30s", run: runs.record() });
    for (const slot of SLOTS) {
      const due = await nextRunAt(a);
      expect(await nextRunAt(b)).toBe(due);
      await a.clock.set(due - 1);
      const [ta, tb] = await Promise.all([a.tw.tick(), b.tw.tick()]);
      expect([ta.nextWakeAt, tb.nextWakeAt]).toEqual([due, due]);
      await a.clock.set(due);
      await Promise.all([a.tw.tick(), b.tw.tick()]);
      expect(runs.seen.filter((r) => r.scheduledAt === slot)).toEqual([{ task: "prices", scheduledAt: slot, at: due, missed: 0, manual: false }]);
    }
  });
});
