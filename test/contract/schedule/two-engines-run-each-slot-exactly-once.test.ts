import { describe, expect, it } from "vitest";
import { durableObjectCase, postgresCase, sqliteFileCase } from "../../support/stores.js";
import { HOUR, MINUTE, T0, deferred, enginesFor, recordRuns, until, type Engine } from "../../support/schedule-fixtures.js";

// Two engines need one database: SQLite in memory cannot be shared, so it has no case here.
describe.each([sqliteFileCase(), postgresCase(), durableObjectCase()])("each slot runs once in total, however many engines tick ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  /** Three engines on one database, one fake clock, each with "prices" (every 5m) and "sweep" (cron every 15m). */
  async function threeEngines(options: { catchUp?: string } = {}) {
    const first = await engines.first({ instanceId: "engine-a" });
    const all: Engine[] = [first, await engines.another({ clock: first.clock, instanceId: "engine-b" }), await engines.another({ clock: first.clock, instanceId: "engine-c" })];
    const runs = recordRuns(first.clock);
    const ranBy: string[] = [];
    /** While set, "sweep" runs wait for it. */
    const hold: { until?: Promise<void> } = {};
    for (const engine of all) {
      engine.tw.task("prices", { every: "5m", ...options, run: runs.record(() => ranBy.push(engine.tw.instanceId)) });
      engine.tw.task("sweep", {
        cron: "*/15 * * * *",
        run: runs.record(async () => {
          await hold.until;
          return ranBy.push(engine.tw.instanceId);
        }),
      });
    }
    return { clock: first.clock, all, runs, ranBy, hold };
  }

  // 360 ticks, each a few store round trips; the Durable Object store's go over HTTP to workerd
  // (about 27 s alone on 2 cores), so the default 30 s is too close on a loaded machine.
  it("all engines tick at the same fake time at every slot for 2 hours: each slot of each task runs exactly once", async () => {
    const { clock, all, runs, ranBy } = await threeEngines();
    for (let m = 1; m <= 120; m++) {
      await clock.set(T0 + m * MINUTE);
      await Promise.all(all.map((e) => e.tw.tick()));
    }
    const expected = (every: number) => Array.from({ length: 120 / every }, (_, i) => T0 + (i + 1) * every * MINUTE);
    expect(runs.slots("prices")).toEqual(expected(5));
    expect(runs.slots("sweep")).toEqual(expected(15));
    // Every engine sees the same counts in the store.
    for (const engine of all) {
      const { tasks } = await engine.tw.scheduler.status();
      expect(tasks.map((t) => [t.name, t.runs])).toEqual([
        ["prices", 24],
        ["sweep", 8],
      ]);
    }
    // Which engine wins a slot is a race; every run is accounted to one of them.
    expect(ranBy).toHaveLength(32);
    expect(ranBy.every((id) => ["engine-a", "engine-b", "engine-c"].includes(id))).toBe(true);
    // 360 ticks, each a few round trips: 50 s on the Durable Object store at load 11, past 120 s with
    // more beside it. The bound only guards against a hang.
  }, 300_000);

  it("after downtime with catchUp, every catch-up slot runs once, oldest first, whichever engines tick", async () => {
    // An engine that ticks while another runs the catch-up waits for it rather than skipping the
    // latest slot as an overlap (which would cut the catch-up short).
    const { clock, all, runs } = await threeEngines({ catchUp: "30m" });
    await clock.set(T0 + 5 * MINUTE);
    await Promise.all(all.map((e) => e.tw.tick()));
    await clock.set(T0 + 2 * HOUR + 5 * MINUTE);
    await Promise.all(all.map((e) => e.tw.tick()));
    await Promise.all(all.map((e) => e.tw.tick()));
    expect(runs.slots("prices")).toEqual([T0 + 5 * MINUTE, ...[100, 105, 110, 115, 120, 125].map((m) => T0 + m * MINUTE)]);
  });

  it("runNow in every engine while one of them is running it: one run, the others are told it was skipped", async () => {
    const { all, runs, hold } = await threeEngines();
    const gate = deferred();
    hold.until = gate.promise;
    let settled = 0;
    const results = all.map((e) => e.tw.scheduler.runNow("sweep").finally(() => settled++));
    // Whichever claims first holds the run until the gate opens; the other two find it running.
    await until(() => settled === 2 && runs.seen.length === 1, "two runNow calls to be skipped");
    gate.resolve();
    const outcomes = (await Promise.all(results)).flat().map((r) => r.outcome);
    expect(outcomes.sort()).toEqual(["skipped", "skipped", "succeeded"]);
    expect(runs.seen).toHaveLength(1);
  });
});
