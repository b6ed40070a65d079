import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { HOUR, MINUTE, T0, enginesFor, recordRuns } from "../../support/schedule-fixtures.js";

const minutes = (...ms: number[]) => ms.map((m) => T0 + m * MINUTE);

describe.each(allStoreCases())("missed slots after downtime, catch-up and backfill ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("after 2 h of downtime an every-5m task runs once, for the latest slot, with missed = 23", async () => {
    const { tw, clock, named } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("prices", { every: "5m", run: runs.record() });
    await clock.set(T0 + 5 * MINUTE);
    await tw.tick();

    // Down from just after 00:05 to 02:05: the slots 00:10 ... 02:00 (23 of them) passed unseen.
    await clock.advance("2h");
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 2 * HOUR + 10 * MINUTE);
    expect(runs.seen).toEqual([
      { task: "prices", scheduledAt: T0 + 5 * MINUTE, at: T0 + 5 * MINUTE, missed: 0, manual: false },
      { task: "prices", scheduledAt: T0 + 2 * HOUR + 5 * MINUTE, at: T0 + 2 * HOUR + 5 * MINUTE, missed: 23, manual: false },
    ]);
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ missed: 23, runs: 2, lastScheduledAt: T0 + 2 * HOUR + 5 * MINUTE });
    expect(named("task.missed")).toEqual([expect.objectContaining({ level: "info", task: "prices", missed: 23, scheduledAt: T0 + 2 * HOUR + 5 * MINUTE })]);

    // The next run on time missed nothing.
    await clock.set(T0 + 2 * HOUR + 10 * MINUTE);
    await tw.tick();
    expect(runs.seen[2]).toMatchObject({ scheduledAt: T0 + 2 * HOUR + 10 * MINUTE, missed: 0 });
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ missed: 0, runs: 3 });
  });

  it("a tick between slots after downtime counts the same: the latest slot runs late, the ones before it are missed", async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("prices", { every: "5m", run: runs.record() });
    tw.task("sweep", { cron: "*/15 * * * *", run: runs.record() });
    await clock.set(T0 + 15 * MINUTE);
    await tw.tick();
    // Down until 02:17: prices' last slot is 02:15 (missed 00:20 ... 02:10 = 23), sweep's is 02:15 (missed 00:30 ... 02:00 = 7).
    await clock.set(T0 + 2 * HOUR + 17 * MINUTE);
    await tw.tick();
    const late = runs.seen.filter((r) => r.at === T0 + 2 * HOUR + 17 * MINUTE).sort((a, b) => a.task.localeCompare(b.task));
    expect(late).toEqual([
      { task: "prices", scheduledAt: T0 + 2 * HOUR + 15 * MINUTE, at: T0 + 2 * HOUR + 17 * MINUTE, missed: 23, manual: false },
      { task: "sweep", scheduledAt: T0 + 2 * HOUR + 15 * MINUTE, at: T0 + 2 * HOUR + 17 * MINUTE, missed: 7, manual: false },
    ]);
  });

  it('catchUp "30m": the missed slots of the last 30 minutes run each, oldest first, and the older ones collapse into the first', async () => {
    const { tw, clock, named } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("prices", { every: "5m", catchUp: "30m", run: runs.record((ctx) => ctx.scheduledAt) });
    await clock.set(T0 + 5 * MINUTE);
    await tw.tick();

    await clock.advance("2h");
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 2 * HOUR + 10 * MINUTE);
    // 02:05 - 30m = 01:35 is not younger than 30 minutes: the window holds 01:40 ... 02:05.
    expect(runs.seen.slice(1).map((r) => [r.scheduledAt, r.missed])).toEqual([
      [T0 + 100 * MINUTE, 18],
      [T0 + 105 * MINUTE, 0],
      [T0 + 110 * MINUTE, 0],
      [T0 + 115 * MINUTE, 0],
      [T0 + 120 * MINUTE, 0],
      [T0 + 125 * MINUTE, 0],
    ]);
    // 18 collapsed + 6 run = the 24 slots of the downtime.
    expect(named("task.missed")).toEqual([expect.objectContaining({ missed: 18, scheduledAt: T0 + 100 * MINUTE })]);
    const status = (await tw.scheduler.status()).tasks[0]!;
    expect(status).toMatchObject({ runs: 7, lastScheduledAt: T0 + 125 * MINUTE, lastResult: T0 + 125 * MINUTE });
    expect(status.history.slice(0, 6).map((h) => h.scheduledAt)).toEqual(minutes(125, 120, 115, 110, 105, 100));
  });

  it("catchUp with a downtime shorter than the window runs every missed slot, and none twice", async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("prices", { every: "5m", catchUp: "30m", run: runs.record() });
    await clock.set(T0 + 5 * MINUTE);
    await tw.tick();
    await clock.set(T0 + 22 * MINUTE);
    await tw.tick();
    await tw.tick();
    expect(runs.seen.map((r) => [r.scheduledAt, r.at, r.missed])).toEqual([
      [T0 + 5 * MINUTE, T0 + 5 * MINUTE, 0],
      [T0 + 10 * MINUTE, T0 + 22 * MINUTE, 0],
      [T0 + 15 * MINUTE, T0 + 22 * MINUTE, 0],
      [T0 + 20 * MINUTE, T0 + 22 * MINUTE, 0],
    ]);
  });

  it("backfill(task, from, to) runs every slot in the range, in order, and returns one result per slot", async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("prices", {
      every: "5m",
      run: runs.record((ctx) => {
        if (ctx.scheduledAt === T0 + 70 * MINUTE) throw new Error("no data for 01:10");
        return { slot: new Date(ctx.scheduledAt).toISOString() };
      }),
    });
    await clock.set(T0 + 3 * HOUR + 2 * MINUTE);

    // From and to are inclusive and need not be on a slot.
    const results = await tw.scheduler.backfill("prices", new Date(T0 + HOUR - 1), T0 + 80 * MINUTE);
    expect(results).toEqual([
      expect.objectContaining({ task: "prices", outcome: "succeeded", scheduledAt: T0 + 60 * MINUTE, result: { slot: "2026-01-01T01:00:00.000Z" } }),
      expect.objectContaining({ task: "prices", outcome: "succeeded", scheduledAt: T0 + 65 * MINUTE, result: { slot: "2026-01-01T01:05:00.000Z" } }),
      expect.objectContaining({ task: "prices", outcome: "failed", scheduledAt: T0 + 70 * MINUTE, error: expect.stringContaining("no data for 01:10") }),
      expect.objectContaining({ task: "prices", outcome: "succeeded", scheduledAt: T0 + 75 * MINUTE, result: { slot: "2026-01-01T01:15:00.000Z" } }),
      expect.objectContaining({ task: "prices", outcome: "succeeded", scheduledAt: T0 + 80 * MINUTE, result: { slot: "2026-01-01T01:20:00.000Z" } }),
    ]);
    expect(runs.seen.map((r) => [r.scheduledAt, r.manual])).toEqual(minutes(60, 65, 70, 75, 80).map((s) => [s, true]));

    // The schedule itself is untouched: the next tick runs the current slot as usual.
    await tw.tick();
    expect(runs.seen.at(-1)).toMatchObject({ scheduledAt: T0 + 3 * HOUR, manual: false });
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ runs: 6, failures: 1 });
  });

  it("backfill refuses an unknown task and a range that ends before it starts; an empty range runs nothing", async () => {
    const { tw } = await engines.first();
    tw.task("prices", { every: "5m", run: () => 1 });
    await expect(tw.scheduler.backfill("nope", T0, T0 + HOUR)).rejects.toThrow(InvalidInputError);
    await expect(tw.scheduler.backfill("nope", T0, T0 + HOUR)).rejects.toThrow(/unknown task "nope" \(defined: prices\)/);
    await expect(tw.scheduler.backfill("prices", T0 + HOUR, T0)).rejects.toThrow(/to \(2026-01-01T00:00:00.000Z\) is before from \(2026-01-01T01:00:00.000Z\)/);
    expect(await tw.scheduler.backfill("prices", T0 + MINUTE, T0 + 4 * MINUTE)).toEqual([]);
    expect((await tw.scheduler.status()).tasks[0]!.runs).toBe(0);
  });
});
