import { describe, expect, it } from "vitest";
import type { TaskContext, TaskStatus } from "../../../src/schedule/task.js";
import { allStoreCases, durableObjectCase, postgresCase, sqliteFileCase } from "../../support/stores.js";
import { HOUR, MINUTE, SECOND, T0, deferred, enginesFor, type Engine } from "../../support/schedule-fixtures.js";

/**
 * "prices" every 5m, history 3, five runs: 00:05 succeeds after 2 s, 00:10 fails, 00:15 backs off
 * for 5 minutes, 00:20 succeeds, 00:25 fails.
 */
async function fiveRuns(engine: Engine) {
  const { tw, clock } = engine;
  const started = deferred();
  const release = deferred();
  let n = 0;
  tw.task("prices", {
    every: "5m",
    history: 3,
    run: async (ctx: TaskContext) => {
      n++;
      if (n === 1) {
        started.resolve();
        await release.promise;
        return { succeeded: 3, failed: 0, rateLimitRemaining: 97 };
      }
      if (n === 2 || n === 5) throw new Error(`tenero 500 (run ${n})`);
      if (n === 3) {
        ctx.backoffUntil("5m");
        return { succeeded: 0, failed: 3, rateLimitRemaining: 0 };
      }
      return { succeeded: 3, failed: 0, rateLimitRemaining: 42 };
    },
  });
  tw.task("sweep", { cron: "*/15 * * * *", run: () => "swept" });

  await clock.set(T0 + 5 * MINUTE);
  const tick = tw.tick();
  await started.promise;
  await clock.advance("2s");
  release.resolve();
  await tick;
  for (const m of [10, 15, 20, 25]) {
    await clock.set(T0 + m * MINUTE);
    await tw.tick();
  }
}

const prices = async (engine: Engine): Promise<TaskStatus> => (await engine.tw.scheduler.status()).tasks.find((t) => t.name === "prices")!;

describe.each(allStoreCases())("tw.scheduler.status() reports each task ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("before any run: the schedule, the first slot, no results, nothing counted", async () => {
    const { tw, clock } = await engines.first();
    await clock.set(T0 + 2 * MINUTE);
    tw.task("prices", { every: "5m", run: () => 1 });
    tw.task("sweep", { cron: "*/15 * * * *", run: () => 2 });
    expect(await tw.scheduler.status()).toEqual({
      pausedUntil: null,
      tasks: [
        {
          name: "prices", schedule: "every 5m", lastRunAt: null, lastScheduledAt: null, lastDurationMs: null, lastOutcome: null, lastResult: null, lastError: null,
          consecutiveFailures: 0, nextRunAt: T0 + 5 * MINUTE, scheduleError: null, nextRunAfter: null, paused: false, pausedUntil: null, breakerOpen: false, running: false,
          missed: 0, runs: 0, failures: 0, overlapsSkipped: 0, history: [],
        },
        {
          name: "sweep", schedule: "cron */15 * * * * (UTC)", lastRunAt: null, lastScheduledAt: null, lastDurationMs: null, lastOutcome: null, lastResult: null, lastError: null,
          consecutiveFailures: 0, nextRunAt: T0 + 15 * MINUTE, scheduleError: null, nextRunAfter: null, paused: false, pausedUntil: null, breakerOpen: false, running: false,
          missed: 0, runs: 0, failures: 0, overlapsSkipped: 0, history: [],
        },
      ],
    });
  });

  it("a run in progress shows as running; when it ends, its return value is lastResult and its duration is recorded", async () => {
    const { tw, clock } = await engines.first();
    const started = deferred();
    const release = deferred();
    tw.task("prices", {
      every: "5m",
      run: async () => {
        started.resolve();
        await release.promise;
        return { succeeded: 3, failed: 0, rateLimitRemaining: 97 };
      },
    });
    await clock.set(T0 + 5 * MINUTE);
    const tick = tw.tick();
    await started.promise;
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ running: true, runs: 0, lastRunAt: null });
    await clock.advance("2s");
    release.resolve();
    await tick;
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({
      running: false,
      runs: 1,
      lastOutcome: "succeeded",
      lastResult: { succeeded: 3, failed: 0, rateLimitRemaining: 97 },
      lastScheduledAt: T0 + 5 * MINUTE,
      // lastRunAt is when the last run started; it ended lastDurationMs later.
      lastRunAt: T0 + 5 * MINUTE,
      lastDurationMs: 2 * SECOND,
      nextRunAt: T0 + 10 * MINUTE,
      history: [
        expect.objectContaining({
          scheduledAt: T0 + 5 * MINUTE, startedAt: T0 + 5 * MINUTE, finishedAt: T0 + 5 * MINUTE + 2 * SECOND, durationMs: 2 * SECOND,
          outcome: "succeeded", manual: false, result: { succeeded: 3, failed: 0, rateLimitRemaining: 97 }, error: null,
        }),
      ],
    });
  });

  it("after five runs: last result and error, counters, backoff, and the last 3 runs newest first (history: 3)", async () => {
    const engine = await engines.first();
    await fiveRuns(engine);
    const status = await prices(engine);
    expect(status).toMatchObject({
      name: "prices",
      lastRunAt: T0 + 25 * MINUTE,
      lastScheduledAt: T0 + 25 * MINUTE,
      lastOutcome: "failed",
      lastResult: null,
      consecutiveFailures: 1,
      nextRunAt: T0 + 30 * MINUTE,
      nextRunAfter: null,
      paused: false,
      missed: 0,
      runs: 5,
      failures: 2,
    });
    expect(status.lastError).toContain("tenero 500 (run 5)");
    expect(status.history).toEqual([
      expect.objectContaining({ scheduledAt: T0 + 25 * MINUTE, startedAt: T0 + 25 * MINUTE, durationMs: 0, outcome: "failed", manual: false, result: null, error: expect.stringContaining("run 5") }),
      expect.objectContaining({ scheduledAt: T0 + 20 * MINUTE, outcome: "succeeded", result: { succeeded: 3, failed: 0, rateLimitRemaining: 42 }, error: null }),
      expect.objectContaining({ scheduledAt: T0 + 15 * MINUTE, outcome: "backed_off", result: { succeeded: 0, failed: 3, rateLimitRemaining: 0 } }),
    ]);
    // The store keeps only those 3: older runs are deleted, not just hidden.
    expect(await engine.tw.store.schedule.history({ name: "prices", limit: 100 })).toHaveLength(3);
    // Each task has its own history.
    expect((await engine.tw.scheduler.status()).tasks.find((t) => t.name === "sweep")!.history).toEqual([
      expect.objectContaining({ task: "sweep", scheduledAt: T0 + 15 * MINUTE, outcome: "succeeded", result: "swept" }),
    ]);
  });

  it("each new run pushes the oldest one out of the history", async () => {
    const engine = await engines.first();
    const { tw, clock } = engine;
    await fiveRuns(engine);
    await clock.set(T0 + 30 * MINUTE);
    await tw.tick();
    expect((await prices(engine)).history.map((h) => [h.scheduledAt, h.outcome])).toEqual([
      [T0 + 30 * MINUTE, "succeeded"],
      [T0 + 25 * MINUTE, "failed"],
      [T0 + 20 * MINUTE, "succeeded"],
    ]);
    expect(await tw.store.schedule.history({ name: "prices", limit: 100 })).toHaveLength(3);
  });

  it("while backed off, status shows nextRunAfter; paused tasks and the global pause show as paused", async () => {
    const { tw, clock } = await engines.first();
    tw.task("prices", { every: "5m", run: (ctx) => ctx.backoffUntil("20m") });
    tw.task("sweep", { cron: "*/15 * * * *", run: () => "swept" });
    await clock.set(T0 + 5 * MINUTE);
    await tw.tick();
    await tw.scheduler.pauseUntil(T0 + HOUR, "sweep");
    let status = await tw.scheduler.status();
    expect(status.pausedUntil).toBeNull();
    expect(status.tasks).toEqual([
      expect.objectContaining({ name: "prices", nextRunAfter: T0 + 25 * MINUTE, paused: false, pausedUntil: null, lastOutcome: "backed_off" }),
      expect.objectContaining({ name: "sweep", paused: true, pausedUntil: T0 + HOUR }),
    ]);

    await tw.scheduler.pauseUntil(new Date(T0 + 2 * HOUR));
    status = await tw.scheduler.status();
    expect(status.pausedUntil).toBe(T0 + 2 * HOUR);
    expect(status.tasks.map((t) => [t.name, t.paused, t.pausedUntil])).toEqual([
      ["prices", true, T0 + 2 * HOUR],
      ["sweep", true, T0 + 2 * HOUR],
    ]);

    // Once the backoff's time has passed, nextRunAfter is no longer reported.
    await clock.set(T0 + 25 * MINUTE);
    expect((await tw.scheduler.status()).tasks[0]!.nextRunAfter).toBeNull();
  });

  it("history: 0 keeps no runs, but the status fields are still kept", async () => {
    const { tw, clock } = await engines.first();
    tw.task("prices", { every: "5m", history: 0, run: () => 7 });
    await clock.set(T0 + 5 * MINUTE);
    await tw.tick();
    expect((await tw.scheduler.status()).tasks[0]).toMatchObject({ history: [], runs: 1, lastResult: 7, lastOutcome: "succeeded" });
    expect(await tw.store.schedule.history({ name: "prices", limit: 100 })).toEqual([]);
  });
});


describe.each([sqliteFileCase(), postgresCase(), durableObjectCase()])("task status persists across a restart ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("a new engine on the same store reports the same results, counters and history", async () => {
    const first = await engines.first();
    await fiveRuns(first);
    const before = await first.tw.scheduler.status();
    await first.tw.stop();

    const second = await engines.another();
    await second.clock.set(first.clock.now());
    second.tw.task("prices", { every: "5m", history: 3, run: () => "after restart" });
    second.tw.task("sweep", { cron: "*/15 * * * *", run: () => "swept" });
    expect(await second.tw.scheduler.status()).toEqual(before);

    // And it carries on from there: the next slot, not a repeat of the old ones.
    await second.clock.set(T0 + 30 * MINUTE);
    await second.tw.tick();
    expect(await prices(second)).toMatchObject({ runs: 6, failures: 2, consecutiveFailures: 0, lastResult: "after restart", lastScheduledAt: T0 + 30 * MINUTE });
    expect((await prices(second)).history.map((h) => h.scheduledAt)).toEqual([30, 25, 20].map((m) => T0 + m * MINUTE));
  });
});
