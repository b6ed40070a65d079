import type * as Croner from "croner";
import { afterEach, describe, expect, it, vi } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, SECOND, T0, enginesFor, recordRuns } from "../../support/schedule-fixtures.js";

/**
 * No public option gives a task a cadence of the caller's own, and no cron expression croner accepts
 * is known (once 29 February is fixed) to make it throw later. So croner itself is the seam: the
 * patterns in `broken` throw from every call, as croner's `previousRuns` did for "0 0 29 2 *". The
 * scheduler, the engine and the store are the real ones.
 */
const broken = vi.hoisted(() => new Set<string>());

vi.mock("croner", async (importOriginal) => {
  const real = await importOriginal<typeof Croner>();
  class Cron extends real.Cron {
    override nextRun(...args: Parameters<InstanceType<typeof real.Cron>["nextRun"]>) {
      if (broken.has(this.getPattern() ?? "")) throw new TypeError("Cannot read properties of undefined (reading '0')");
      return super.nextRun(...args);
    }
    override previousRuns(...args: Parameters<InstanceType<typeof real.Cron>["previousRuns"]>) {
      if (broken.has(this.getPattern() ?? "")) throw new TypeError("Cannot read properties of undefined (reading '0')");
      return super.previousRuns(...args);
    }
  }
  return { ...real, Cron };
});

const BROKEN = "*/10 * * * *";

describe.each(allStoreCases())("a cadence that throws at run time fails its own task only ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);
  afterEach(() => broken.clear());

  it("tick, status and runNow keep working, a 1s task beside it runs every second, and its status carries the error", async () => {
    const { tw, clock, named } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("heartbeat", { every: "1s", run: runs.record() });
    tw.task("fragile", { cron: BROKEN, run: runs.record(() => "ran") });
    // Accepted at definition; from now on croner fails on it.
    broken.add(BROKEN);

    for (let s = 1; s <= 5; s++) {
      await clock.set(T0 + s * SECOND);
      await expect(tw.tick()).resolves.toMatchObject({ nextWakeAt: expect.any(Number) });
    }
    expect(runs.slots("heartbeat")).toEqual([1, 2, 3, 4, 5].map((s) => T0 + s * SECOND));
    expect(runs.slots("fragile")).toEqual([]);

    const { tasks } = await tw.scheduler.status();
    const fragile = tasks.find((t) => t.name === "fragile")!;
    expect(fragile).toMatchObject({ nextRunAt: null, runs: 0 });
    expect(fragile.scheduleError).toMatch(/task "fragile": cron "\*\/10 \* \* \* \*" failed: TypeError: Cannot read properties of undefined/);
    expect(tasks.find((t) => t.name === "heartbeat")).toMatchObject({ scheduleError: null, runs: 5, lastOutcome: "succeeded" });

    // Logged as the task's failure, once for the run of failures rather than once a tick.
    const logged = named("task.schedule_failed");
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: "error", task: "fragile", error: expect.stringContaining("TypeError") });

    // A manual run needs no cadence: it runs.
    expect(await tw.scheduler.runNow("fragile")).toEqual([expect.objectContaining({ task: "fragile", outcome: "succeeded", result: "ran" })]);
    expect(await tw.scheduler.runNow("all")).toHaveLength(2);
  });

  it("a cadence that fails from the first tick (the task's row is created without it) recovers when croner does, and runs its next slot", async () => {
    const { tw, clock, named } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("heartbeat", { every: "1s", run: runs.record() });
    tw.task("fragile", { cron: BROKEN, run: runs.record() });
    broken.add(BROKEN);
    await clock.set(T0 + SECOND);
    await tw.tick();
    await clock.set(T0 + 2 * SECOND);
    await tw.tick();
    expect(runs.slots("heartbeat")).toEqual([T0 + SECOND, T0 + 2 * SECOND]);

    broken.clear();
    await clock.set(T0 + 10 * MINUTE);
    await tw.tick();
    expect(runs.slots("fragile")).toEqual([T0 + 10 * MINUTE]);
    expect((await tw.scheduler.status()).tasks.find((t) => t.name === "fragile")).toMatchObject({ scheduleError: null, nextRunAt: T0 + 20 * MINUTE, runs: 1 });
    expect(named("task.schedule_recovered")).toEqual([expect.objectContaining({ task: "fragile", level: "info" })]);
  });

  it("the continuous driver (tw.start) keeps running the healthy task beside a failing cadence", async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("heartbeat", { every: "1s", run: runs.record() });
    tw.task("fragile", { cron: BROKEN, run: runs.record() });
    broken.add(BROKEN);
    await tw.start();
    for (let s = 1; s <= 5; s++) {
      await clock.set(T0 + s * SECOND);
      // The driver's tick does store I/O in real time and arms its next timer when it ends; firing
      // timers now due (advance by 0) until the slot has run lets it get there however slow that is.
      await vi.waitFor(
        async () => {
          await clock.advance(0);
          expect(runs.slots("heartbeat")).toContain(T0 + s * SECOND);
          // Recorded, too: a slot due while the last run is still being written would be skipped as an overlap.
          expect((await tw.scheduler.status()).tasks.find((t) => t.name === "heartbeat")).toMatchObject({ runs: s, running: false });
        },
        { timeout: 10_000, interval: 5 },
      );
    }
    expect(runs.slots("fragile")).toEqual([]);
  });
});
