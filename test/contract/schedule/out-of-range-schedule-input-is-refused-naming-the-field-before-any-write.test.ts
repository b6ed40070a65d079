import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import type { TaskOptions } from "../../../src/schedule/task.js";
import type { TaskRow } from "../../../src/schedule/store.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, T0, enginesFor, recordRuns, type Engine } from "../../support/schedule-fixtures.js";

/** Options as a caller without types would pass them (JavaScript, JSON config). */
const untyped = (options: Record<string, unknown>) => options as unknown as TaskOptions;
const run = () => "ran";
const MEGABYTE = "x".repeat(1_000_000);

/** What a refused call must have left: the task rows and the global pause exactly as before it. */
async function snapshot({ tw }: Engine, names: string[]): Promise<{ rows: TaskRow[]; paused: number | null }> {
  return { rows: await tw.store.schedule.loadTasks({ names }), paused: await tw.store.schedule.pausedUntil() };
}

async function refused(call: () => unknown): Promise<InvalidInputError> {
  let thrown: unknown;
  try {
    await call();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(InvalidInputError);
  // A message names the field and the bound; it never carries a megabyte of input back.
  expect((thrown as Error).message.length).toBeLessThan(1_000);
  return thrown as InvalidInputError;
}

describe.each(allStoreCases())("schedule input out of range is refused with the field's name, before any write ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  /** An engine with "prices" defined and its row written (one tick), so a refused write would show. */
  async function engineWithTask(): Promise<Engine> {
    const engine = await engines.first();
    engine.tw.task("prices", { every: "5m", run });
    await engine.clock.set(T0 + MINUTE);
    await engine.tw.tick();
    return engine;
  }

  const pauseCases: { what: string; until: unknown; field: RegExp }[] = [
    { what: "epoch ms 1e20", until: 1e20, field: /pauseUntil must be a time from 1970 to 9999/ },
    { what: "a Date in year 275760", until: new Date(8.64e15), field: /pauseUntil must be a time from 1970 to 9999/ },
    { what: "a negative time", until: -1, field: /pauseUntil must be a time from 1970 to 9999/ },
    { what: "NaN", until: Number.NaN, field: /pauseUntil/ },
    { what: "an invalid Date", until: new Date(Number.NaN), field: /pauseUntil: invalid Date/ },
    { what: 'a duration of "99999999999999999999d"', until: "99999999999999999999d", field: /pauseUntil: invalid duration "99999999999999999999d"/ },
    { what: "a duration of 101 years", until: `${101 * 365}d`, field: /pauseUntil: invalid duration/ },
    { what: "a megabyte string", until: MEGABYTE, field: /pauseUntil: invalid duration a string of 1000000 characters/ },
    { what: "an object", until: { at: 5 }, field: /pauseUntil/ },
  ];

  it.each(pauseCases)("pauseUntil($what), of all tasks or of one, is refused and pauses nothing", async ({ until, field }) => {
    const engine = await engineWithTask();
    const before = await snapshot(engine, ["prices"]);
    const all = await refused(() => engine.tw.scheduler.pauseUntil(until as number));
    expect(all.message).toMatch(field);
    const one = await refused(() => engine.tw.scheduler.pauseUntil(until as number, "prices"));
    expect(one.message).toMatch(field);
    expect(await snapshot(engine, ["prices"])).toEqual(before);
  });

  const nameCases: { what: string; name: unknown; shown: RegExp }[] = [
    { what: "a NUL character", name: "pri\u0000ces", shown: /unknown task "pri\\u0000ces"/ },
    { what: "a lone surrogate", name: "prices\ud800", shown: /unknown task "prices\\ud800"/ },
    { what: "a megabyte string", name: MEGABYTE, shown: /unknown task a string of 1000000 characters/ },
    { what: "a number", name: 42, shown: /unknown task 42/ },
  ];

  it.each(nameCases)("a task name with $what is refused by runNow, pauseUntil, resume and backfill", async ({ name, shown }) => {
    const engine = await engineWithTask();
    const before = await snapshot(engine, ["prices"]);
    const n = name as string;
    expect((await refused(() => engine.tw.scheduler.runNow(n))).message).toMatch(/^runNow: /);
    expect((await refused(() => engine.tw.scheduler.runNow(n))).message).toMatch(shown);
    expect((await refused(() => engine.tw.scheduler.pauseUntil("1h", n))).message).toMatch(shown);
    expect((await refused(() => engine.tw.scheduler.resume(n))).message).toMatch(shown);
    expect((await refused(() => engine.tw.scheduler.backfill(n, T0, T0 + MINUTE))).message).toMatch(shown);
    expect(await snapshot(engine, ["prices"])).toEqual(before);
  });

  const backfillCases: { what: string; from: unknown; to: unknown; message: RegExp }[] = [
    { what: "from 1e20", from: 1e20, to: T0, message: /backfill: from must be a time from 1970 to 9999/ },
    { what: "to 1e20", from: T0, to: 1e20, message: /backfill: to must be a time from 1970 to 9999/ },
    { what: "from before 1970", from: -5 * MINUTE, to: T0, message: /backfill: from must be a time from 1970 to 9999/ },
    { what: "to before from", from: T0 + MINUTE * 10, to: T0, message: /backfill: to .* is before from/ },
    { what: "more than 10,000 slots", from: T0 - 365 * 24 * 60 * MINUTE, to: T0, message: /backfill: more than 10000 slots/ },
  ];

  it.each(backfillCases)("backfill with $what is refused and runs nothing", async ({ from, to, message }) => {
    const engine = await engineWithTask();
    const runs: number[] = [];
    engine.tw.task("sweep", { every: "5m", run: (ctx) => void runs.push(ctx.scheduledAt) });
    const before = await snapshot(engine, ["prices"]);
    expect((await refused(() => engine.tw.scheduler.backfill("prices", from as number, to as number))).message).toMatch(message);
    expect(await snapshot(engine, ["prices"])).toEqual(before);
    expect(runs).toEqual([]);
  });

  const backoffCases: { what: string; until: unknown; message: RegExp }[] = [
    { what: "epoch ms 1e20", until: 1e20, message: /backoffUntil must be a time from 1970 to 9999/ },
    { what: 'a duration of "99999999999999999999d"', until: "99999999999999999999d", message: /backoffUntil: invalid duration/ },
    { what: "an invalid Date", until: new Date(Number.NaN), message: /backoffUntil: invalid Date/ },
  ];

  it.each(backoffCases)("backoffUntil($what) throws in the run, which fails with that message; the tick and the other tasks go on", async ({ until, message }) => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("prices", { every: "5m", run: runs.record((ctx) => ctx.backoffUntil(until as number)) });
    tw.task("sweep", { every: "5m", run: runs.record(() => "swept") });
    await clock.set(T0 + 5 * MINUTE);
    await tw.tick();
    const byName = Object.fromEntries((await tw.scheduler.status()).tasks.map((t) => [t.name, t]));
    expect(byName["prices"]).toMatchObject({ lastOutcome: "failed", nextRunAfter: null });
    expect(byName["prices"]!.lastError).toMatch(message);
    expect(byName["sweep"]).toMatchObject({ lastOutcome: "succeeded", lastResult: "swept" });
  });

  const definitionCases: { what: string; name?: unknown; options: TaskOptions; message: RegExp[] }[] = [
    { what: "a name with a NUL character", name: "pri\u0000ces", options: { every: "5m", run }, message: [/task name "pri\\u0000ces" is invalid/] },
    { what: "a name with a lone surrogate", name: "prices\udc00", options: { every: "5m", run }, message: [/task name "prices\\udc00" is invalid/] },
    { what: "a megabyte name", name: MEGABYTE, options: { every: "5m", run }, message: [/task name a string of 1000000 characters/] },
    { what: "breaker.after of 2^31", options: { every: "5m", run, breaker: { after: 2 ** 31 } }, message: [/task "bad"/, /breaker\.after/, /2147483647/] },
    { what: "breaker.after of 1e300", options: { every: "5m", run, breaker: { after: 1e300 } }, message: [/task "bad"/, /breaker\.after/] },
    { what: "every of 1e300 ms", options: { every: 1e300, run }, message: [/task "bad"/, /every: invalid duration 1e\+300/] },
    { what: 'every of "99999999999999999999d"', options: { every: "99999999999999999999d", run }, message: [/task "bad"/, /every: invalid duration/] },
    { what: "a lease of 1e300", options: { every: "5m", run, lease: 1e300 }, message: [/task "bad"/, /lease/, /invalid duration/] },
    { what: "a timeout of 200 years", options: { every: "5m", run, timeout: `${200 * 365}d` }, message: [/task "bad"/, /timeout/] },
    { what: "a jitter of 1e300", options: { every: "5m", run, jitter: 1e300 }, message: [/task "bad"/, /jitter/] },
    { what: "a catchUp of 1e300", options: { every: "5m", run, catchUp: 1e300 }, message: [/task "bad"/, /catchUp/] },
    { what: "a maxBackoff of 1e300", options: { every: "5m", run, maxBackoff: 1e300 }, message: [/task "bad"/, /maxBackoff/] },
    { what: "a megabyte cron", options: { cron: MEGABYTE, run }, message: [/task "bad"/, /cron must be a string of 1 to 500 characters/] },
    { what: "a cron with a NUL character", options: { cron: "*/5 * * * *\u0000", run }, message: [/task "bad"/, /cron contains a NUL character/] },
    { what: "a timezone with a NUL character", options: { cron: "0 9 * * *", timezone: "Europe/Paris\u0000", run }, message: [/task "bad"/, /timezone contains a NUL character/] },
    { what: "a megabyte timezone", options: { cron: "0 9 * * *", timezone: MEGABYTE, run }, message: [/task "bad"/, /timezone must be a string of 1 to 500 characters/] },
    { what: "immediately that is not a boolean", options: untyped({ every: "5m", run, immediately: "yes" }), message: [/task "bad"/, /immediately/] },
  ];

  it.each(definitionCases)("a task with $what is refused at definition and writes nothing", async ({ name = "bad", options, message }) => {
    const { tw, clock } = await engines.first();
    const error = await refused(() => tw.task(name as string, options));
    for (const part of message) expect(error.message).toMatch(part);
    await clock.set(T0 + 10 * MINUTE);
    await tw.tick();
    expect((await tw.scheduler.status()).tasks).toEqual([]);
    expect(await tw.store.schedule.loadTasks({ names: [name as string] })).toEqual([]);
  });

  it("a run's result with no JSON form fails that run naming it; an error or result holding NUL or a lone surrogate is stored; the tick goes on", async () => {
    const { tw, clock } = await engines.first();
    tw.task("bigint", { every: "5m", run: () => ({ total: 10n }) });
    tw.task("nul-error", {
      every: "5m",
      run: () => {
        throw new Error("upstream said \u0000 and \ud800");
      },
    });
    tw.task("nul-result", { every: "5m", run: () => ({ text: "a\u0000b", lone: "\udfff" }) });
    tw.task("sweep", { every: "5m", run: () => "swept" });
    await clock.set(T0 + 5 * MINUTE);
    await expect(tw.tick()).resolves.toBeDefined();
    const byName = Object.fromEntries((await tw.scheduler.status()).tasks.map((t) => [t.name, t]));
    expect(byName["bigint"]).toMatchObject({ lastOutcome: "failed", lastResult: null });
    expect(byName["bigint"]!.lastError).toMatch(/task "bigint": the result is not JSON-serialisable: .*bigint/);
    expect(byName["nul-error"]).toMatchObject({ lastOutcome: "failed" });
    expect(byName["nul-error"]!.lastError).toContain("upstream said \ufffd and \ufffd");
    expect(byName["nul-error"]!.history[0]!.error).toContain("upstream said \ufffd and \ufffd");
    expect(byName["nul-result"]).toMatchObject({ lastOutcome: "succeeded", lastResult: { text: "a\u0000b", lone: "\udfff" } });
    expect(byName["sweep"]).toMatchObject({ lastOutcome: "succeeded", lastResult: "swept" });
  });

  it("the largest values in range are accepted and stored as given", async () => {
    const { tw, clock } = await engines.first();
    tw.task("prices", { every: "5m", run, breaker: { after: 2 ** 31 - 1 }, lease: "36500d", maxBackoff: "36500d" });
    await clock.set(T0 + 5 * MINUTE);
    await tw.tick();
    const lastMs = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    await tw.scheduler.pauseUntil(lastMs, "prices");
    await tw.scheduler.pauseUntil("36500d");
    const status = await tw.scheduler.status();
    expect(status.pausedUntil).toBe(T0 + 5 * MINUTE + 36_500 * 24 * 60 * MINUTE);
    expect(status.tasks[0]).toMatchObject({ pausedUntil: lastMs, runs: 1, lastOutcome: "succeeded" });
  });
});
