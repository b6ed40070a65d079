import fc from "fast-check";
import { describe, it } from "vitest";
import { duration, instant, int32, notAnObject, oddString, oddValue, optionsOf, payload } from "./support/arbitraries.js";
import { expectStoredAsGiven } from "./support/expect-job.js";
import { CHECKS, PROPERTY_TIMEOUT, assertProperty, judge } from "./support/outcome.js";
import { STORE_KINDS, propertyStore, runEngine, uniqueName } from "./support/stores.js";

/** Dedupe keys: ordinary ones, at and past 255 characters, with NUL or a lone surrogate, other types. */
const key = fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), oddString, oddValue);

const jobOptions = optionsOf({ key, runAt: instant, delay: duration, priority: int32, maxAttempts: int32 });

const enqueueOptions = fc.oneof(
  { arbitrary: jobOptions, weight: 9 },
  // The options argument itself of another type: null, a string, an array, a Map.
  { arbitrary: notAnObject.filter((v) => v !== undefined).map((options) => ({ options: options as Record<string, unknown>, given: ["option"] })), weight: 1 },
);

const batchItem = fc.oneof(
  { arbitrary: fc.tuple(payload, jobOptions).map(([p, { options, given }]) => ({ item: { ...options, payload: p }, given: [...given, "payload"] })), weight: 12 },
  { arbitrary: notAnObject.map((v) => ({ item: v as Record<string, unknown>, given: ["enqueueMany"] })), weight: 1 },
);

describe.each(STORE_KINDS)("queue.enqueue and enqueueMany at the input boundary ($name)", { timeout: PROPERTY_TIMEOUT }, (kind) => {
  const ps = propertyStore(kind);

  it.each(CHECKS)("enqueue stores the job exactly as given or refuses it ($says)", async ({ check }) => {
    const { tw } = await runEngine(ps);
    await assertProperty(
      fc.asyncProperty(payload, enqueueOptions, async (p, { options, given }) => {
        const q = tw.queue(uniqueName("q"));
        await judge(ps, check, () => q.enqueue(p, options), {
          names: [...given, "payload"],
          accepted: (job) => expectStoredAsGiven(tw, job, p, options),
        });
      }),
      check,
    );
  });

  it.each(CHECKS)("enqueueMany writes every item as given or none of the batch ($says)", async ({ check }) => {
    const { tw } = await runEngine(ps);
    await assertProperty(
      fc.asyncProperty(fc.array(batchItem, { minLength: 1, maxLength: 5 }), async (items) => {
        const q = tw.queue(uniqueName("q"));
        const batch = items.map((i) => i.item) as { payload: unknown }[];
        await judge(ps, check, () => q.enqueueMany(batch), {
          names: [...items.flatMap((i) => i.given), "enqueueMany["],
          accepted: async (jobs) => {
            if (jobs.length !== batch.length) throw new Error(`enqueueMany of ${batch.length} items returned ${jobs.length} jobs`);
            for (const [i, job] of jobs.entries()) {
              const { payload: p, ...options } = batch[i]!;
              await expectStoredAsGiven(tw, job, p, options);
            }
          },
        });
      }),
      check,
    );
  });

  it.each(CHECKS)("enqueueMany of something other than an array is refused ($says)", async ({ check }) => {
    const { tw } = await runEngine(ps);
    await assertProperty(
      fc.asyncProperty(oddValue, async (items) => {
        const q = tw.queue(uniqueName("q"));
        await judge(ps, check, () => q.enqueueMany(items as never), {
          names: ["array", "enqueueMany["],
          accepted: () => {
            if (!(Array.isArray(items) && items.length === 0)) throw new Error("enqueueMany accepted a value that is not an array of items");
          },
        });
      }),
      check,
    );
  });
});
