import fc from "fast-check";
import { describe, it } from "vitest";
import { MAX_TIME_MS } from "../../src/core/bounds.js";
import { cronExpression, duration, int32, nameOr, notAnObject, oddValue, optionsOf, timezone } from "./support/arbitraries.js";
import { CHECKS, PROPERTY_TIMEOUT, assertProperty, judge, ownError } from "./support/outcome.js";
import { STORE_KINDS, propertyStore, runEngine, uniqueName, type RunEngine } from "./support/stores.js";

const run = () => "ok";

/** `every`, or `cron` (with a timezone now and then), or any mix of the two. */
const cadence = fc.oneof(
  { arbitrary: duration.map((every) => ({ options: { every }, given: ["every"] })), weight: 2 },
  {
    arbitrary: fc.tuple(cronExpression, fc.option(timezone, { nil: undefined, freq: 3 })).map(([cron, tz]) => ({ options: tz === undefined ? { cron } : { cron, timezone: tz }, given: tz === undefined ? ["cron"] : ["cron", "timezone"] })),
    weight: 3,
  },
  { arbitrary: optionsOf({ every: duration, cron: cronExpression, timezone }, false), weight: 1 },
);

const taskOptions = fc.tuple(
  cadence,
  optionsOf({
    run: fc.oneof({ arbitrary: fc.constant<unknown>(run), weight: 8 }, { arbitrary: oddValue, weight: 1 }),
    breaker: fc.oneof(optionsOf({ after: int32 }, false).map((o) => o.options), oddValue),
    overlap: fc.oneof(fc.constantFrom("skip", "allow", "SKIP"), oddValue),
    jitter: duration,
    catchUp: fc.oneof(fc.constant(false), duration),
    lease: duration,
    timeout: duration,
    maxBackoff: duration,
    history: int32,
  }),
).map(([c, rest]) => ({ options: { run, ...c.options, ...rest.options }, given: [...c.given, ...rest.given] }));

/**
 * An accepted task never stops the others: status() and runNow answer, and a tick two seconds on
 * runs the healthy every-second task beside it, with no store error logged.
 */
async function expectOthersKeepRunning({ tw, clock, events }: RunEngine, name: string): Promise<void> {
  const step = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      throw new Error(`${what} failed once task ${name} was accepted: ${ownError(error).message}`);
    }
  };
  const status = await step("status()", () => tw.scheduler.status());
  const mine = status.tasks.find((t) => t.name === name);
  if (mine?.nextRunAt != null && !(mine.nextRunAt >= 0 && mine.nextRunAt <= MAX_TIME_MS)) throw new Error(`task ${name}'s nextRunAt is ${mine.nextRunAt}, outside 1970..9999`);
  await clock.advance("2s");
  await step("tick()", () => tw.tick());
  await step(`runNow("${name}")`, () => tw.scheduler.runNow(name));
  const healthy = (await step("status()", () => tw.scheduler.status())).tasks.find((t) => t.name === "healthy");
  if (!healthy || healthy.runs < 1) throw new Error(`the healthy every-1s task ran ${healthy?.runs ?? 0} times in a tick 2s on, beside task ${name}`);
  const storeErrors = events.filter((e) => e.event === "store.error" || e.event === "scheduler.error");
  if (storeErrors.length) throw new Error(`${storeErrors[0]!.event} logged beside task ${name}: ${JSON.stringify(storeErrors[0]).slice(0, 400)}`);
}

describe.each(STORE_KINDS)("task definitions at the input boundary ($name)", { timeout: PROPERTY_TIMEOUT }, (kind) => {
  const ps = propertyStore(kind);

  it.each(CHECKS)("a task definition is refused, or every task keeps running beside it ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(taskOptions, async ({ options, given }) => {
        // An engine per run: a task accepted with a cadence that throws would stop every later tick.
        const engine = await runEngine(ps);
        engine.tw.task("healthy", { every: "1s", run });
        const name = uniqueName("t");
        await judge(ps, check, () => engine.tw.task(name, options as never), { names: [...given, "every", "cron"], accepted: () => expectOthersKeepRunning(engine, name) });
      }),
      check,
    );
  });

  it.each(CHECKS)("options of another type than an object are refused ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(notAnObject, async (options) => {
        const { tw } = await runEngine(ps);
        await judge(null, check, () => tw.task(uniqueName("t"), options as never), {
          names: ["option", "task", "run", "every", "cron"],
          accepted: () => {
            throw new Error("a task was defined with no run function");
          },
        });
      }),
      check,
    );
  });

  it.each(CHECKS)("a task name is refused, or defined once ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(nameOr(), async (name) => {
        const { tw } = await runEngine(ps);
        await judge(null, check, () => tw.task(name as string, { every: "1m", run }), { names: ["name"] });
      }),
      check,
    );
  });
});
