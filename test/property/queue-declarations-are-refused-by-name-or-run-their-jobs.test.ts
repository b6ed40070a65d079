import fc from "fast-check";
import { describe, it } from "vitest";
import { duration, int32, nameOr, notAnObject, oddValue, optionsOf } from "./support/arbitraries.js";
import { CHECKS, PROPERTY_TIMEOUT, assertProperty, judge, outcome, ownError } from "./support/outcome.js";
import { STORE_KINDS, propertyStore, runEngine, uniqueName, type RunEngine } from "./support/stores.js";
import type { Queue } from "../../src/queue/queue.js";

const handler = () => {};

/** A function, or now and then something that is not one. */
const fnOr = fc.oneof({ arbitrary: fc.constant<unknown>(handler), weight: 6 }, { arbitrary: oddValue, weight: 1 });

const queueOptions = optionsOf({
  concurrency: int32,
  lease: duration,
  timeout: duration,
  retry: fc.oneof(optionsOf({ maxAttempts: int32, backoff: fnOr }, false).map((o) => o.options), oddValue),
  rateLimit: fc.oneof(optionsOf({ max: int32, per: duration }, false).map((o) => o.options), oddValue),
  onFailed: fnOr,
  batchSize: int32,
});

/** An accepted queue works: a job enqueued on it runs in the next tick, with no store error logged. */
async function expectRunsAJob({ tw, events }: RunEngine, queue: Queue): Promise<void> {
  const job = await queue.enqueue({ n: 1 });
  let ran: number;
  try {
    ({ ran } = await tw.tick());
  } catch (error) {
    throw new Error(`tick failed once the queue was accepted: ${ownError(error).message}`);
  }
  const storeErrors = events.filter((e) => e.event === "store.error");
  if (storeErrors.length) throw new Error(`the accepted queue's tick logged store.error: ${JSON.stringify(storeErrors[0]).slice(0, 400)}`);
  const after = await tw.jobs.get(job.id);
  if (after?.status !== "succeeded") throw new Error(`the accepted queue's job is ${after?.status} after a tick (ran ${ran})`);
}

describe.each(STORE_KINDS)("queue declarations at the input boundary ($name)", { timeout: PROPERTY_TIMEOUT }, (kind) => {
  const ps = propertyStore(kind);

  it.each(CHECKS)("a declaration is refused, or its queue runs a job in the next tick ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(queueOptions, async ({ options, given }) => {
        // An engine per run: a queue accepted with a lease no claim can write would break every later tick.
        const engine = await runEngine(ps);
        await judge(ps, check, () => engine.tw.queue(uniqueName("q"), { ...options, handler }), { names: given, accepted: (queue) => expectRunsAJob(engine, queue) });
      }),
      check,
    );
  });

  it.each(CHECKS)("options of another type than an object are refused, or mean no options ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(notAnObject, async (options) => {
        const { tw } = await runEngine(ps);
        await judge(null, check, () => tw.queue(uniqueName("q"), options as never), { names: ["option", "queue"] });
      }),
      check,
    );
  });

  it.each(CHECKS)("a queue name is refused, or declared once ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(nameOr(), async (name) => {
        // fast-check may draw a name twice (and replays runs when it shrinks): an engine per name.
        const { tw } = await runEngine(ps);
        await judge(null, check, () => tw.queue(name as string, { handler }), {
          names: ["name"],
          accepted: async () => {
            // Declaring it again is this engine's concern: refused with a TickworkError, never a crash.
            if ((await outcome(() => tw.queue(name as string, { handler }))).ok) throw new Error(`queue ${fc.stringify(name)} was declared twice`);
          },
        });
      }),
      check,
    );
  });
});
