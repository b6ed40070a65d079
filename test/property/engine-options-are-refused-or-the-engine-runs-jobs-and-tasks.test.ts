import fc from "fast-check";
import { describe, it } from "vitest";
import { duration, int32, oddString, oddValue, optionsOf } from "./support/arbitraries.js";
import { CHECKS, PROPERTY_TIMEOUT, assertProperty, judge, ownError } from "./support/outcome.js";
import { STORE_KINDS, propertyStore, runEngine, uniqueName, type RunEngine } from "./support/stores.js";

const engineOptions = optionsOf({
  // Written into every lease a worker takes: NUL or a lone surrogate would reach the store at the first claim.
  instanceId: fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), oddString, oddValue),
  pollInterval: duration,
  rescueInterval: duration,
  shutdownGrace: duration,
  tickBudget: int32,
  retention: fc.oneof(optionsOf({ succeeded: fc.oneof(fc.constant(false), duration), failed: duration, cancelled: duration }, false).map((o) => o.options), oddValue),
  logLevel: fc.oneof(fc.constantFrom("debug", "info", "warn", "error", "critical", "trace"), oddValue),
});

/** An accepted engine works: a job runs in a tick, a task runs now, with no store error logged. */
async function expectWorks({ tw, events }: RunEngine): Promise<void> {
  const step = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      throw new Error(`${what} failed on an accepted engine: ${ownError(error).message}`);
    }
  };
  const queue = tw.queue(uniqueName("q"), { handler: () => {} });
  const job = await step("enqueue", () => queue.enqueue({ n: 1 }));
  await step("tick", () => tw.tick());
  const after = await step("jobs.get", () => tw.jobs.get(job.id));
  if (after?.status !== "succeeded") throw new Error(`an accepted engine left its job ${after?.status} after a tick`);
  const task = uniqueName("t");
  tw.task(task, { every: "1m", run: () => "ok" });
  const [result] = await step("runNow", () => tw.scheduler.runNow(task));
  if (result?.outcome !== "succeeded") throw new Error(`an accepted engine's task run ended ${result?.outcome}: ${result?.error ?? ""}`);
  const storeErrors = events.filter((e) => e.event === "store.error");
  if (storeErrors.length) throw new Error(`an accepted engine logged store.error: ${JSON.stringify(storeErrors[0]).slice(0, 400)}`);
}

describe.each(STORE_KINDS)("engine options at the input boundary ($name)", { timeout: PROPERTY_TIMEOUT }, (kind) => {
  const ps = propertyStore(kind);

  it.each(CHECKS)("createTickwork refuses its options, or the engine runs a job and a task ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(engineOptions, async ({ options, given }) => {
        await judge(ps, check, () => runEngine(ps, options), { names: given, accepted: expectWorks });
      }),
      check,
    );
  });
});
