import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import type { TaskOptions } from "../../../src/schedule/task.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, T0, enginesFor, recordRuns } from "../../support/schedule-fixtures.js";

const run = () => "ran";

/** Options as a caller without types would pass them (JavaScript, JSON config). */
const untyped = (options: Record<string, unknown>) => options as unknown as TaskOptions;

const cases: { what: string; name?: string; options: TaskOptions; message: RegExp[] }[] = [
  { what: "a cron with minute 61", options: { cron: "61 * * * *", run }, message: [/task "bad"/, /invalid cron "61 \* \* \* \*"/] },
  { what: "a cron that is not one", options: { cron: "not cron", run }, message: [/task "bad"/, /invalid cron "not cron"/] },
  {
    what: "an unknown timezone",
    options: { cron: "0 9 * * *", timezone: "Mars/Olympus_Mons", run },
    message: [/task "bad"/, /"0 9 \* \* \*"/, /timezone "Mars\/Olympus_Mons"/],
  },
  { what: "both every and cron", options: { every: "5m", cron: "*/5 * * * *", run }, message: [/task "bad"/, /exactly one of every or cron/] },
  { what: "neither every nor cron", options: { run }, message: [/task "bad"/, /exactly one of every or cron/] },
  { what: 'every "0s"', options: { every: "0s", run }, message: [/task "bad"/, /every must be at least 1s, got "0s"/] },
  { what: 'every "soon"', options: { every: "soon", run }, message: [/task "bad"/, /every: invalid duration "soon"/] },
  { what: "every as a negative number", options: { every: -5, run }, message: [/task "bad"/, /every: invalid duration -5/] },
  { what: "the reserved name all", name: "all", options: { every: "5m", run }, message: [/task name "all" is invalid/, /"all" is reserved for runNow/] },
  { what: "an empty name", name: "", options: { every: "5m", run }, message: [/task name "" is invalid/] },
  { what: "an unknown option key", options: untyped({ every: "5m", run, retries: 3 }), message: [/task "bad"/, /retries/] },
  { what: "a misspelt option key", options: untyped({ evry: "5m", run }), message: [/task "bad"/, /evry/] },
  { what: "an unknown breaker key", options: untyped({ every: "5m", run, breaker: { after: 3, for: "1h" } }), message: [/task "bad"/, /breaker/, /for/] },
  { what: "a breaker after 0 failures", options: { every: "5m", run, breaker: { after: 0 } }, message: [/task "bad"/, /breaker\.after/, /got 0/] },
  { what: "an unknown overlap mode", options: untyped({ every: "5m", run, overlap: "queue" }), message: [/task "bad"/, /overlap/, /"queue"/] },
  { what: 'a jitter of "a bit"', options: { every: "5m", run, jitter: "a bit" }, message: [/task "bad"/, /jitter/, /"a bit"/] },
  { what: "a timezone without a cron", options: { every: "5m", timezone: "America/New_York", run }, message: [/task "bad"/, /timezone applies to cron only/] },
  { what: "a run that is not a function", options: untyped({ every: "5m", run: "prices" }), message: [/task "bad"/, /run/, /"prices"/] },
];

describe.each(allStoreCases())("bad task definitions throw InvalidInputError naming the value ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it.each(cases)("$what", async ({ name = "bad", options, message }) => {
    const { tw } = await engines.first();
    let thrown: unknown;
    try {
      tw.task(name, options);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidInputError);
    expect((thrown as InvalidInputError).code).toMatch(/^TW_INVALID/);
    for (const part of message) expect((thrown as Error).message).toMatch(part);
    // Nothing was defined, in memory or in the store.
    expect((await tw.scheduler.status()).tasks).toEqual([]);
    expect(await tw.store.schedule.loadTasks({ names: [name] })).toEqual([]);
  });

  it("a duplicate task name is refused, and the first definition stays the one that runs", async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    tw.task("prices", { every: "5m", run: runs.record(() => "first") });
    expect(() => tw.task("prices", { every: "1m", run: () => "second" })).toThrow(InvalidInputError);
    expect(() => tw.task("prices", { every: "1m", run: () => "second" })).toThrow('task "prices" is already defined');

    await clock.set(T0 + 5 * MINUTE);
    await tw.tick();
    const [status] = (await tw.scheduler.status()).tasks;
    expect(status).toMatchObject({ name: "prices", schedule: "every 5m", lastResult: "first", runs: 1 });
    expect(runs.slots()).toEqual([T0 + 5 * MINUTE]);
  });

  it("a refused definition leaves the name free for a good one", async () => {
    const { tw, clock } = await engines.first();
    const runs = recordRuns(clock);
    expect(() => tw.task("prices", { cron: "61 * * * *", run })).toThrow(InvalidInputError);
    tw.task("prices", { every: "5m", run: runs.record() });
    await clock.set(T0 + 5 * MINUTE);
    await tw.tick();
    expect(runs.slots("prices")).toEqual([T0 + 5 * MINUTE]);
  });
});
