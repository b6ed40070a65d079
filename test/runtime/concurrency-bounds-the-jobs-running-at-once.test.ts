import { describe, expect, it } from "vitest";
import { allStoreCases } from "../support/stores.js";
import { eventually, realEngines } from "../support/real-time.js";

describe.each(allStoreCases())("$name: a queue's concurrency", (c) => {
  const gates: (() => void)[] = [];
  const engine = realEngines({ beforeStop: () => gates.splice(0).forEach((open) => open()), afterStop: () => c.cleanup() });

  it("lets at most that many jobs run at once, and every job still runs", async () => {
    const { tw } = await engine({ store: c.make() });
    let inFlight = 0;
    let maxInFlight = 0;
    let started = 0;
    const queue = tw.queue("limited", {
      concurrency: 3,
      handler: async () => {
        started++;
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        await new Promise<void>((resolve) => gates.push(resolve));
        inFlight--;
      },
    });
    await queue.enqueueMany(Array.from({ length: 20 }, (_, i) => ({ payload: { i } })));
    await tw.start();

    // Open one gate at a time, and only when the worker has filled every slot it may: a worker that
    // ignored the limit would start a fourth handler while three are held, and maxInFlight shows it.
    for (let finished = 0; finished < 20; finished++) {
      const full = Math.min(3, 20 - finished);
      await eventually(() => inFlight === full && gates.length === full, `${full} jobs in flight after ${finished} finished`);
      gates.shift()!();
    }

    const counts = await eventually(async () => {
      const [row] = await tw.jobs.counts("limited");
      return row?.counts.succeeded === 20 && row.counts;
    }, "all 20 jobs to succeed");
    expect(counts).toMatchObject({ pending: 0, running: 0, succeeded: 20, failed: 0 });
    expect(started).toBe(20);
    expect(maxInFlight).toBe(3);
  });
});
