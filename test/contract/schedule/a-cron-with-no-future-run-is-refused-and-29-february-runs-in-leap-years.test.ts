import { describe, expect, it } from "vitest";
import { InvalidInputError, TickworkError } from "../../../src/core/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { SECOND, T0, enginesFor, recordRuns } from "../../support/schedule-fixtures.js";

const LEAP_DAY_2028 = Date.UTC(2028, 1, 29);
const LEAP_DAY_2032 = Date.UTC(2032, 1, 29);

describe.each(allStoreCases())("a cron is judged at definition; a rare one runs on its days ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it('"0 0 31 2 *" (31 February) never runs: tw.task refuses it naming the task and the expression, and writes nothing', async () => {
    const { tw } = await engines.first();
    let thrown: unknown;
    try {
      tw.task("never", { cron: "0 0 31 2 *", run: () => "ran" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidInputError);
    expect(thrown).toBeInstanceOf(TickworkError);
    expect((thrown as Error).message).toMatch(/task "never"/);
    expect((thrown as Error).message).toMatch(/cron "0 0 31 2 \*" has no run after/);
    expect((await tw.scheduler.status()).tasks).toEqual([]);
    expect(await tw.store.schedule.loadTasks({ names: ["never"] })).toEqual([]);
  });

  it('"0 0 29 2 *" (29 February) is valid: ticks and status keep working, a 1s task beside it keeps running, and it runs on the next leap day', async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("leap", { cron: "0 0 29 2 *", run: runs.record(() => "leap day") });
    tw.task("heartbeat", { every: "1s", run: runs.record() });

    for (let s = 1; s <= 5; s++) {
      await clock.set(T0 + s * SECOND);
      await tw.tick();
    }
    expect(runs.slots("heartbeat")).toEqual([1, 2, 3, 4, 5].map((s) => T0 + s * SECOND));
    const leap = (await tw.scheduler.status()).tasks.find((t) => t.name === "leap")!;
    expect(leap).toMatchObject({ schedule: "cron 0 0 29 2 * (UTC)", nextRunAt: LEAP_DAY_2028, runs: 0, scheduleError: null });

    // Over two years later, on the leap day: the leap task runs once, for that day.
    await clock.set(LEAP_DAY_2028 + 30 * SECOND);
    await tw.tick();
    await tw.tick();
    expect(runs.slots("leap")).toEqual([LEAP_DAY_2028]);
    const after = (await tw.scheduler.status()).tasks.find((t) => t.name === "leap")!;
    expect(after).toMatchObject({ lastOutcome: "succeeded", lastResult: "leap day", nextRunAt: LEAP_DAY_2032, runs: 1 });
    expect(runs.slots("heartbeat").at(-1)).toBe(LEAP_DAY_2028 + 30 * SECOND);
  });

  it("a cron with a year field is refused once its years are past, and accepted while one is to come", async () => {
    const { tw } = await engines.first();
    // Seven fields: seconds first, the year last.
    expect(() => tw.task("past", { cron: "0 0 0 1 1 * 2020", run: () => 1 })).toThrow(/task "past": cron "0 0 0 1 1 \* 2020" has no run after 2026-01-01T00:00:00.000Z/);
    tw.task("future", { cron: "0 0 0 1 1 * 2030", run: () => 1 });
    expect((await tw.scheduler.status()).tasks).toEqual([expect.objectContaining({ name: "future", nextRunAt: Date.UTC(2030, 0, 1) })]);
  });
});
