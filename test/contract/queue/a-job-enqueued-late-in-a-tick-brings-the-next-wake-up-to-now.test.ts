import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { enginesFor } from "../../support/schedule-fixtures.js";

describe.each(allStoreCases())("a job enqueued after the queues' pass of a tick ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("an onDelivered hook's enqueue makes the tick ask to run again at once, and the next tick runs the job", async () => {
    const { tw, clock } = await engines.first();
    const ran: number[] = [];
    const followUps = tw.queue<{ n: number }>("follow-ups", { handler: (job) => void ran.push(job.payload.n) });
    const callbacks = tw.delivery<{ n: number }>("callbacks", {
      send: async () => {},
      onDelivered: async (message) => void (await followUps.enqueue({ n: message.payload.n })),
    });
    await callbacks.emit([{ payload: { n: 1 } }]);

    const first = await tw.tick();
    expect(first.outbound.used).toBe(1);
    expect(ran).toEqual([]);
    // The queues read their next due time before the delivery ran; the job enqueued after it is due now.
    expect(first.nextWakeAt).toBe(clock.now());

    const second = await tw.tick();
    expect(ran).toEqual([1]);
    expect(second.nextWakeAt).not.toBe(clock.now());
  });

  it("a tick whose jobs enqueue more jobs runs them in the same tick and does not ask to run again", async () => {
    const { tw, clock } = await engines.first();
    const ran: number[] = [];
    const chain = tw.queue<{ n: number }>("chain", {
      handler: async (job) => {
        ran.push(job.payload.n);
        if (job.payload.n < 3) await chain.enqueue({ n: job.payload.n + 1 });
      },
    });
    await chain.enqueue({ n: 1 });
    const result = await tw.tick();
    expect(ran).toEqual([1, 2, 3]);
    expect(result.nextWakeAt).not.toBe(clock.now());
  });
});
