import { describe, expect, it } from "vitest";
import { sqliteFileCase } from "../support/stores.js";
import { eventually, realEngines, within } from "../support/real-time.js";
import type { Job } from "../../src/queue/job.js";

/**
 * The engine finds the handler on the stop's call stack, async frames included: V8 (Node, Deno,
 * workerd) keeps the frames of awaited calls, Bun's engine does not, so there the stop only ends.
 */
const KEEPS_ASYNC_FRAMES = !("bun" in process.versions);

describe("tw.stop() called inside a job handler", () => {
  const c = sqliteFileCase();
  const engine = realEngines({ afterStop: () => c.cleanup() });

  it.each([
    ["a plain handler, after an await", {}],
    ["a handler under a timeout", { timeout: "1m" }],
  ] as const)("%s: a warning names the mistake and the grace it costs, and the stop still ends", async (_, extra) => {
    const { tw, named } = await engine({ store: c.make(), shutdownGrace: "300ms" });
    let stopped: Promise<void> | null = null;
    const queue = tw.queue("emails", {
      ...extra,
      handler: async () => {
        await Promise.resolve();
        stopped = tw.stop();
        await stopped;
      },
    });
    const job = await queue.enqueue({});
    await tw.start();
    await eventually(() => stopped !== null, "the handler to call stop");
    await within(stopped!, 10_000, "the stop to end after its grace");
    // As the warning says: the job is handed back, to run again.
    const after = await engine({ store: c.reopen() });
    expect(await after.tw.jobs.get(job.id)).toMatchObject({ status: "pending" });
    const warnings = named("engine.stop_in_handler");
    expect(warnings).toHaveLength(KEEPS_ASYNC_FRAMES ? 1 : 0);
    if (!KEEPS_ASYNC_FRAMES) return;
    expect(warnings[0]).toMatchObject({ level: "warn", graceMs: 300 });
    expect(String(warnings[0]!.message)).toMatch(/inside a job handler.*shutdownGrace \(300 ms\)/);
  });

  it("a batch handler that awaits stop is named too; a stop from outside a handler warns of nothing", async () => {
    const { tw, named } = await engine({ store: c.make(), shutdownGrace: "300ms" });
    let stopped: Promise<void> | null = null;
    const queue = tw.queue("emails", {
      batch: { size: 5 },
      handler: async (jobs: Job[]) => {
        await Promise.resolve();
        stopped = tw.stop();
        await stopped;
        return jobs.map(() => undefined);
      },
    });
    await queue.enqueue({});
    await tw.start();
    await eventually(() => stopped !== null, "the batch handler to call stop");
    await within(stopped!, 10_000, "the stop to end after its grace");
    expect(named("engine.stop_in_handler")).toHaveLength(KEEPS_ASYNC_FRAMES ? 1 : 0);

    const other = await engine({ store: c.make() });
    other.tw.queue("emails", { handler: () => {} });
    await other.tw.start();
    await other.tw.stop();
    expect(other.named("engine.stop_in_handler")).toEqual([]);
  });
});
