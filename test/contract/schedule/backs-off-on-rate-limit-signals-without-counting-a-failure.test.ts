import { describe, expect, it } from "vitest";
import { RetryAfterError } from "../../../src/core/errors.js";
import type { TaskContext } from "../../../src/schedule/task.js";
import { allStoreCases } from "../../support/stores.js";
import { DAY, HOUR, MINUTE, T0, enginesFor, recordRuns, type Engine } from "../../support/schedule-fixtures.js";

type Signal = (ctx: TaskContext) => unknown;

/** Every "5m"; the run with index i (0-based) does `script[i]`, later runs succeed. */
function scripted(engine: Engine, script: Signal[], options: { maxBackoff?: string; breaker?: { after: number } } = {}) {
  const runs = recordRuns(engine.clock);
  let i = 0;
  engine.tw.task("tenero", { every: "5m", ...options, run: runs.record((ctx) => (script[i++] ?? (() => "fresh prices"))(ctx)) });
  return runs;
}

const status = async (engine: Engine) => (await engine.tw.scheduler.status()).tasks.find((t) => t.name === "tenero")!;

/** Ticks at each 5-minute slot from `fromMinute` to `toMinute` (inclusive). */
async function tickSlots(engine: Engine, fromMinute: number, toMinute: number) {
  for (let m = fromMinute; m <= toMinute; m += 5) {
    await engine.clock.set(T0 + m * MINUTE);
    await engine.tw.tick();
  }
}

describe.each(allStoreCases())("adaptive backoff on rate-limit signals, seed 003 option C ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it('ctx.backoffUntil("10m") is outcome backed_off: nextRunAfter is set, the slot before it is skipped, the slot at it runs', async () => {
    const engine = await engines.first();
    const { tw, clock, named } = engine;
    const runs = scripted(engine, [
      (ctx) => {
        ctx.backoffUntil("10m");
        return { succeeded: 0, rateLimitRemaining: 0 };
      },
    ]);

    await clock.set(T0 + 5 * MINUTE);
    await tw.tick();
    expect(await status(engine)).toMatchObject({
      lastOutcome: "backed_off",
      lastResult: { succeeded: 0, rateLimitRemaining: 0 },
      nextRunAfter: T0 + 15 * MINUTE,
      consecutiveFailures: 0,
      failures: 0,
      runs: 1,
      paused: false,
    });
    expect(named("task.backoff")).toEqual([expect.objectContaining({ task: "tenero", level: "warn", scheduledAt: T0 + 5 * MINUTE, nextRunAfter: T0 + 15 * MINUTE })]);
    expect(named("task.failed")).toEqual([]);

    // 00:10 is a slot, but the task is backed off until 00:15: skipped, and the tick says when to come back.
    await clock.set(T0 + 10 * MINUTE);
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 15 * MINUTE);
    await clock.set(T0 + 15 * MINUTE - 1);
    await tw.tick();
    expect(runs.slots()).toEqual([T0 + 5 * MINUTE]);

    await clock.set(T0 + 15 * MINUTE);
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 20 * MINUTE);
    expect(runs.seen.map((r) => [r.scheduledAt, r.at])).toEqual([
      [T0 + 5 * MINUTE, T0 + 5 * MINUTE],
      [T0 + 15 * MINUTE, T0 + 15 * MINUTE],
    ]);
    // A successful run clears the backoff.
    expect(await status(engine)).toMatchObject({ lastOutcome: "succeeded", nextRunAfter: null, runs: 2 });
  });

  it('throwing new RetryAfterError("429", "10m") backs off the same way and keeps the error text', async () => {
    const engine = await engines.first();
    const runs = scripted(engine, [
      () => {
        throw new RetryAfterError("hiro answered 429", "10m");
      },
    ]);
    await tickSlots(engine, 5, 20);
    expect(runs.slots()).toEqual([T0 + 5 * MINUTE, T0 + 15 * MINUTE, T0 + 20 * MINUTE]);
    const history = (await status(engine)).history;
    expect(history.map((h) => h.outcome)).toEqual(["succeeded", "succeeded", "backed_off"]);
    expect(history[2]!.error).toContain("hiro answered 429");
    expect(engine.named("task.backoff")).toEqual([expect.objectContaining({ nextRunAfter: T0 + 15 * MINUTE, error: expect.stringContaining("hiro answered 429") })]);
  });

  it("any thrown error carrying retryAfter (an HTTP client's 429) is a backoff, in ms or as a Date", async () => {
    const engine = await engines.first();
    const runs = scripted(engine, [
      () => {
        throw Object.assign(new Error("upstream 429"), { retryAfter: 10 * MINUTE });
      },
      () => {
        throw Object.assign(new Error("upstream 429 again"), { retryAfter: new Date(T0 + 30 * MINUTE) });
      },
    ]);
    await tickSlots(engine, 5, 35);
    expect(runs.slots()).toEqual([5, 15, 30, 35].map((m) => T0 + m * MINUTE));
    expect((await status(engine)).history.map((h) => h.outcome)).toEqual(["succeeded", "succeeded", "backed_off", "backed_off"]);
  });

  it('a backoffUntil of 2 days with maxBackoff "1h" parks the task for 1 h only', async () => {
    const engine = await engines.first();
    const runs = scripted(engine, [(ctx) => ctx.backoffUntil("2d")], { maxBackoff: "1h" });
    await clock5(engine);
    expect(await status(engine)).toMatchObject({ lastOutcome: "backed_off", nextRunAfter: T0 + 5 * MINUTE + HOUR });
    await tickSlots(engine, 10, 60);
    expect(runs.slots()).toEqual([T0 + 5 * MINUTE]);
    await tickSlots(engine, 65, 70);
    expect(runs.slots()).toEqual([5, 65, 70].map((m) => T0 + m * MINUTE));
  });

  it("without maxBackoff, the default ceiling is 1 h (a Retry-After date a day away cannot park a task for a day)", async () => {
    const engine = await engines.first();
    scripted(engine, [
      () => {
        throw new RetryAfterError("429", new Date(T0 + DAY));
      },
    ]);
    await clock5(engine);
    expect((await status(engine)).nextRunAfter).toBe(T0 + 5 * MINUTE + HOUR);
  });

  it("runNow clears the backoff: the manual run goes, and the next slot runs on schedule", async () => {
    const engine = await engines.first();
    const { tw, clock } = engine;
    const runs = scripted(engine, [(ctx) => ctx.backoffUntil("1h")]);
    await clock5(engine);
    expect((await status(engine)).nextRunAfter).toBe(T0 + 65 * MINUTE);

    await clock.set(T0 + 7 * MINUTE);
    expect(await tw.scheduler.runNow("tenero")).toEqual([expect.objectContaining({ task: "tenero", outcome: "succeeded", result: "fresh prices", scheduledAt: T0 + 7 * MINUTE })]);
    expect(await status(engine)).toMatchObject({ nextRunAfter: null, lastOutcome: "succeeded" });

    await clock.set(T0 + 10 * MINUTE);
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 15 * MINUTE);
    expect(runs.seen.map((r) => [r.scheduledAt, r.manual])).toEqual([
      [T0 + 5 * MINUTE, false],
      [T0 + 7 * MINUTE, true],
      [T0 + 10 * MINUTE, false],
    ]);
  });

  it("backed_off is not a failure: consecutiveFailures is unchanged by it, and it cannot open the breaker", async () => {
    const engine = await engines.first();
    const fail = () => {
      throw new Error("tenero 503");
    };
    scripted(engine, [fail, (ctx) => ctx.backoffUntil("5m"), (ctx) => ctx.backoffUntil("5m"), fail], { breaker: { after: 2 } });

    await tickSlots(engine, 5, 5);
    expect(await status(engine)).toMatchObject({ lastOutcome: "failed", consecutiveFailures: 1, failures: 1 });
    await tickSlots(engine, 10, 15);
    expect(await status(engine)).toMatchObject({ lastOutcome: "backed_off", consecutiveFailures: 1, failures: 1, runs: 3, breakerOpen: false, paused: false });

    // The next real failure is the second consecutive one: now the breaker opens.
    await tickSlots(engine, 20, 20);
    expect(await status(engine)).toMatchObject({ lastOutcome: "failed", consecutiveFailures: 2, failures: 2, breakerOpen: true });
    expect(engine.named("task.breaker_opened")).toHaveLength(1);
  });

  it("a backoff that ends between slots runs the slot it held back once, when it ends; earlier held-back slots collapse", async () => {
    // Like a pause: slots inside the backoff are not run at their time. The latest of them runs as
    // soon as the backoff ends (the upstream said "after 12 minutes", not "at the next slot"), once.
    const engine = await engines.first();
    const { tw, clock } = engine;
    const runs = scripted(engine, [(ctx) => ctx.backoffUntil("12m")]);
    await clock5(engine);
    expect((await status(engine)).nextRunAfter).toBe(T0 + 17 * MINUTE);
    await tickSlots(engine, 10, 15);
    expect(runs.slots()).toEqual([T0 + 5 * MINUTE]);

    await clock.set(T0 + 17 * MINUTE);
    expect((await tw.tick()).nextWakeAt).toBe(T0 + 20 * MINUTE);
    expect(runs.seen.slice(1)).toEqual([{ task: "tenero", scheduledAt: T0 + 15 * MINUTE, at: T0 + 17 * MINUTE, missed: 1, manual: false }]);
    await tickSlots(engine, 20, 20);
    expect(runs.slots()).toEqual([5, 15, 20].map((m) => T0 + m * MINUTE));
  });
});

async function clock5(engine: Engine) {
  await engine.clock.set(T0 + 5 * MINUTE);
  await engine.tw.tick();
}
