import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, SECOND, T0, enginesFor, recordRuns } from "../../support/schedule-fixtures.js";

const at = (iso: string) => Date.parse(iso);

describe.each(allStoreCases())("tasks run at their slots, on the fake clock ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it('every "5m" runs at each 5-minute boundary, never 1 ms before, late slots with their own scheduledAt', async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    await clock.set(T0 + 2 * MINUTE);
    tw.task("prices", { every: "5m", run: runs.record(() => "ok") });

    // Defined at 00:02: the first run is at its first slot, 00:05, not at definition.
    expect(await tw.tick()).toMatchObject({ nextWakeAt: T0 + 5 * MINUTE, ran: 0 });
    expect(runs.seen).toEqual([]);

    await clock.set(T0 + 5 * MINUTE - 1);
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 5 * MINUTE);
    expect(runs.seen).toEqual([]);

    await clock.set(T0 + 5 * MINUTE);
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 10 * MINUTE);
    expect(runs.seen).toEqual([{ task: "prices", scheduledAt: T0 + 5 * MINUTE, at: T0 + 5 * MINUTE, missed: 0, manual: false }]);

    // Between slots, and on the same slot again, nothing more runs.
    await clock.set(T0 + 7 * MINUTE + 30 * SECOND);
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 10 * MINUTE);
    await clock.set(T0 + 10 * MINUTE - 1);
    await tw.tick();
    expect(runs.seen).toHaveLength(1);

    await clock.set(T0 + 10 * MINUTE);
    await tw.tick();
    await tw.tick();
    // A tick that comes late runs the slot late: scheduledAt is the slot, the run starts at the tick.
    await clock.set(T0 + 16 * MINUTE);
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 20 * MINUTE);
    expect(runs.seen.map((r) => [r.scheduledAt, r.at])).toEqual([
      [T0 + 5 * MINUTE, T0 + 5 * MINUTE],
      [T0 + 10 * MINUTE, T0 + 10 * MINUTE],
      [T0 + 15 * MINUTE, T0 + 16 * MINUTE],
    ]);
  });

  it("a task defined exactly on a slot boundary does not run that slot: its first run is the next one", async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("prices", { every: "5m", run: runs.record() });
    expect(await tw.tick()).toMatchObject({ nextWakeAt: T0 + 5 * MINUTE, ran: 0 });
    expect(runs.seen).toEqual([]);
    await clock.set(T0 + 5 * MINUTE);
    await tw.tick();
    expect(runs.slots()).toEqual([T0 + 5 * MINUTE]);
  });

  it("a task's first slot is the first after its definition, even when the first tick comes only at that slot", async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    await clock.set(T0 + 2 * MINUTE);
    tw.task("prices", { every: "5m", run: runs.record() });
    // No tick until 00:05 (a runtime that only wakes at slots): 00:05 still runs.
    await clock.set(T0 + 5 * MINUTE);
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 10 * MINUTE);
    expect(runs.seen).toEqual([{ task: "prices", scheduledAt: T0 + 5 * MINUTE, at: T0 + 5 * MINUTE, missed: 0, manual: false }]);
  });

  it('cron "*/15 * * * *" runs at :00, :15, :30, :45 UTC and not 1 ms before', async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    await clock.set(T0 + 1 * MINUTE);
    tw.task("sweep", { cron: "*/15 * * * *", run: runs.record() });

    expect((await tw.tick()).nextWakeAt).toBe(T0 + 15 * MINUTE);
    for (const slot of [15, 30, 45, 60].map((m) => T0 + m * MINUTE)) {
      await clock.set(slot - 1);
      expect((await tw.tick()).nextWakeAt).toBe(slot);
      await clock.set(slot);
      expect((await tw.tick()).nextWakeAt).toBe(slot + 15 * MINUTE);
    }
    expect(runs.seen.map((r) => [r.scheduledAt, r.at])).toEqual([15, 30, 45, 60].map((m) => [T0 + m * MINUTE, T0 + m * MINUTE]));
  });

  it('cron "0 9 * * *" in America/New_York runs at 14:00 UTC in winter and 13:00 UTC in summer, across both DST changes', async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("report", { cron: "0 9 * * *", timezone: "America/New_York", run: runs.record() });

    // Winter (EST, UTC-5).
    expect((await tw.tick()).nextWakeAt).toBe(at("2026-01-01T14:00:00Z"));
    await clock.set(at("2026-01-01T14:00:00Z") - 1);
    await tw.tick();
    expect(runs.seen).toEqual([]);
    await clock.set(at("2026-01-01T14:00:00Z"));
    expect((await tw.tick()).nextWakeAt).toBe(at("2026-01-02T14:00:00Z"));

    // DST starts on Sunday 2026-03-08: 09:00 on the 7th is 14:00 UTC, on the 8th it is 13:00 UTC (EDT, UTC-4).
    await clock.set(at("2026-03-07T14:00:00Z"));
    expect((await tw.tick()).nextWakeAt).toBe(at("2026-03-08T13:00:00Z"));
    await clock.set(at("2026-03-08T13:00:00Z"));
    expect((await tw.tick()).nextWakeAt).toBe(at("2026-03-09T13:00:00Z"));

    // Summer.
    await clock.set(at("2026-07-01T13:00:00Z"));
    expect((await tw.tick()).nextWakeAt).toBe(at("2026-07-02T13:00:00Z"));

    // DST ends on Sunday 2026-11-01: back to 14:00 UTC.
    await clock.set(at("2026-10-31T13:00:00Z"));
    expect((await tw.tick()).nextWakeAt).toBe(at("2026-11-01T14:00:00Z"));
    await clock.set(at("2026-11-01T14:00:00Z"));
    await tw.tick();

    expect(runs.seen.map((r) => new Date(r.scheduledAt).toISOString())).toEqual([
      "2026-01-01T14:00:00.000Z",
      "2026-03-07T14:00:00.000Z",
      "2026-03-08T13:00:00.000Z",
      "2026-07-01T13:00:00.000Z",
      "2026-10-31T13:00:00.000Z",
      "2026-11-01T14:00:00.000Z",
    ]);
    // Each run started at its slot (every jump landed exactly on one).
    expect(runs.seen.every((r) => r.at === r.scheduledAt)).toBe(true);
  });

  it("a task defined after the engine has ticked starts at its own first slot; nextWakeAt is the earliest task's slot", async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("sweep", { cron: "*/15 * * * *", run: runs.record() });
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 15 * MINUTE);

    await clock.set(T0 + 6 * MINUTE);
    tw.task("prices", { every: "5m", run: runs.record() });
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 10 * MINUTE);
    expect(runs.seen).toEqual([]);

    await clock.set(T0 + 10 * MINUTE);
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 15 * MINUTE);
    await clock.set(T0 + 15 * MINUTE);
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 20 * MINUTE);
    // Tasks due in one tick run side by side, so only the set per slot is fixed, not the order.
    const ran = runs.seen.map((r) => [r.scheduledAt, r.task] as const).sort(([a, x], [b, y]) => a - b || x.localeCompare(y));
    expect(ran).toEqual([
      [T0 + 10 * MINUTE, "prices"],
      [T0 + 15 * MINUTE, "prices"],
      [T0 + 15 * MINUTE, "sweep"],
    ]);
  });
});
