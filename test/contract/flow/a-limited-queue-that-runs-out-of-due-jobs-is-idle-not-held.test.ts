import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { T0, engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("a limited queue whose due jobs ran out sleeps until the next due job, not the next token ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("global rateLimit below concurrency: one due job runs and the tick asks for no wake-up, then the next due time", async () => {
    const { tw, clock, named } = await engine();
    const q = tw.queue("api", { concurrency: 4, rateLimit: { max: 10, per: "1s", scope: "global" }, handler: () => {} });
    await q.enqueue({});
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: null });
    expect(named("queue.throttled")).toEqual([]);
    await q.enqueue({}, { delay: "5s" });
    expect(await tw.tick()).toMatchObject({ ran: 0, nextWakeAt: T0 + 5_000 });
    await clock.advance("5s");
    expect((await tw.tick()).ran).toBe(1);
  });

  it("globalConcurrency below concurrency: an emptied queue is idle, and a backlog beyond the cap is held", async () => {
    const { tw, named } = await engine();
    const q = tw.queue("api", { concurrency: 4, globalConcurrency: 2, handler: () => {} });
    await q.enqueue({});
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: null });
    expect(named("queue.throttled")).toEqual([]);
    await q.enqueueMany([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    // Each batch is cut to 2 by the cap; the tick goes on while the cap, not the queue, is what stops it.
    expect(await tw.tick()).toMatchObject({ ran: 3, nextWakeAt: null });
    expect(named("queue.throttled").map((e) => e.by)).toEqual(["globalConcurrency"]);
  });
});
