import fc from "fast-check";
import { beforeAll, describe, it } from "vitest";
import type { Job } from "../../src/queue/job.js";
import type { Tickwork } from "../../src/tickwork.js";
import { int32, notAnObject, oddString, oddValue, optionsOf, rowId } from "./support/arbitraries.js";
import { CHECKS, PROPERTY_TIMEOUT, assertProperty, judge } from "./support/outcome.js";
import { STORE_KINDS, propertyStore, runEngine } from "./support/stores.js";

const QUEUE = "mail";
/** Keys the seeded jobs hold, odd ones included, so that a filter can find them. */
const SEEDED_KEYS = ["a", "order-1", "é😀", "k".repeat(255)];

describe.each(STORE_KINDS)("tw.jobs at the input boundary ($name)", { timeout: PROPERTY_TIMEOUT }, (kind) => {
  const ps = propertyStore(kind);
  let tw: Tickwork;
  let ids: string[];

  beforeAll(async () => {
    ({ tw } = await runEngine(ps));
    const q = tw.queue(QUEUE);
    tw.queue("other");
    const jobs = await q.enqueueMany([...SEEDED_KEYS.map((key) => ({ payload: { key }, key })), { payload: 1 }, { payload: 2 }]);
    ids = jobs.map((j) => j.id);
    await tw.jobs.cancel(ids[0]!);
  });

  /** An id of a seeded job now and then, else anything. */
  const id = () => fc.oneof({ arbitrary: fc.integer({ min: 0, max: 5 }).map((i) => ids[i]!), weight: 1 }, { arbitrary: rowId, weight: 4 });

  it.each(CHECKS)("get, cancel and retry answer or refuse any id ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(fc.constantFrom("get", "cancel", "retry"), id(), async (method, jobId) => {
        await judge(ps, check, () => tw.jobs[method](jobId as string), {
          names: ["id"],
          accepted: (job) => {
            if (job !== null && job.id !== jobId && job.id !== String(jobId)) throw new Error(`${method}(${fc.stringify(jobId)}) answered job ${job.id}`);
          },
        });
      }),
      check,
    );
  });

  it.each(CHECKS)("list answers only jobs that match the filter, or refuses it ($says)", async ({ check }) => {
    const filter = fc.oneof(
      {
        arbitrary: optionsOf({
          queue: fc.oneof(fc.constantFrom(QUEUE, "other", "undeclared"), oddValue),
          status: fc.oneof(fc.constantFrom("pending", "running", "succeeded", "failed", "cancelled", "PENDING", "done"), oddValue),
          key: fc.oneof(fc.constantFrom(...SEEDED_KEYS, "a\u0000", "a\ud800", "order-\ufffd"), oddString, oddValue),
          before: id(),
          limit: int32,
        }),
        weight: 9,
      },
      // The filter itself of another type.
      { arbitrary: notAnObject.map((v) => ({ options: v as Record<string, unknown>, given: ["filter", "list"] })), weight: 2 },
    );
    await assertProperty(
      fc.asyncProperty(filter, async ({ options, given }) => {
        await judge(ps, check, () => tw.jobs.list(options), { names: given, accepted: (jobs) => expectMatches(jobs, options) });
      }),
      check,
    );
  });

  it.each(CHECKS)("counts and retryFailed answer or refuse any queue name ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(fc.constantFrom("counts", "retryFailed"), fc.oneof(fc.constantFrom(QUEUE, "undeclared"), oddValue), async (method, queue) => {
        await judge(ps, check, (): Promise<unknown> => tw.jobs[method](queue as string), { names: ["queue"] });
      }),
      check,
    );
  });
});

function expectMatches(jobs: Job[], filter: Record<string, unknown>): void {
  const { queue, status, key, before, limit = 50 } = filter;
  if (jobs.length > Number(limit)) throw new Error(`list answered ${jobs.length} jobs for limit ${String(limit)}`);
  for (const job of jobs) {
    const wrong =
      (queue !== undefined && job.queue !== queue && "queue") ||
      (status !== undefined && job.status !== status && "status") ||
      (key !== undefined && job.key !== key && "key") ||
      (before !== undefined && !(BigInt(job.id) < BigInt(before as string)) && "before");
    if (wrong) throw new Error(`list(${wrong}: ${fc.stringify(filter[wrong])}) answered job ${job.id} with ${wrong} ${fc.stringify(wrong === "before" ? job.id : job[wrong as keyof Job])}`);
  }
}
