import fc from "fast-check";
import { beforeAll, describe, it } from "vitest";
import { MAX_TIME_MS } from "../../src/core/bounds.js";
import type { Tickwork } from "../../src/tickwork.js";
import { duration, instant, oddValue } from "./support/arbitraries.js";
import { CHECKS, PROPERTY_TIMEOUT, assertProperty, judge } from "./support/outcome.js";
import { STORE_KINDS, propertyStore, runEngine } from "./support/stores.js";

const run = () => "ok";

/** A defined task, "all", no task, or anything. */
const task = fc.oneof({ arbitrary: fc.constantFrom<unknown>("beat", "century", "all", undefined, "missing"), weight: 3 }, { arbitrary: oddValue, weight: 2 });

/** Every pause in the store is within 1970..9999, and status() still answers. */
async function expectPausesInRange(tw: Tickwork): Promise<void> {
  const status = await tw.scheduler.status();
  const pauses = [status.pausedUntil, ...status.tasks.map((t) => t.pausedUntil)];
  const out = pauses.find((p) => p !== null && !(p >= 0 && p <= MAX_TIME_MS));
  if (out !== undefined) throw new Error(`a pause was stored until ${out}, outside 1970..9999`);
}

describe.each(STORE_KINDS)("scheduler operations at the input boundary ($name)", { timeout: PROPERTY_TIMEOUT }, (kind) => {
  const ps = propertyStore(kind);
  let tw: Tickwork;

  beforeAll(async () => {
    ({ tw } = await runEngine(ps));
    tw.task("beat", { every: "1m", run });
    // A hundred-year cadence: a backfill over any range has a handful of slots, not thousands of runs.
    tw.task("century", { every: "36500d", run });
  });

  it.each(CHECKS)("pauseUntil stores a time within 1970..9999 or refuses it ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(fc.oneof(instant, duration), task, async (until, name) => {
        await judge(ps, check, () => tw.scheduler.pauseUntil(until as number, name as string), { names: ["until", "task"], accepted: () => expectPausesInRange(tw) });
      }),
      check,
    );
  });

  it.each(CHECKS)("resume and runNow answer or refuse any task name ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(fc.constantFrom("resume", "runNow"), task, async (method, name) => {
        await judge(ps, check, (): Promise<unknown> => tw.scheduler[method](name as string), { names: ["task"], accepted: () => expectPausesInRange(tw) });
      }),
      check,
    );
  });

  it.each(CHECKS)("backfill runs the slots of a range or refuses it ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(task, instant, instant, async (name, from, to) => {
        await judge(ps, check, () => tw.scheduler.backfill(name as string, from as number, to as number), { names: ["task", "from", "to"] });
      }),
      check,
    );
  });
});
