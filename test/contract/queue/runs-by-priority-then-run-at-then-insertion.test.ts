import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, SECOND, T0, engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("jobs run by priority, then runAt, then insertion ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("runs due jobs lower priority first, then earlier runAt, then in insertion order", async () => {
    const { tw } = await engine();
    const order: string[] = [];
    const q = tw.queue("work", { concurrency: 1, handler: (job) => void order.push((job.payload as { name: string }).name) });
    // Enqueued in an order that matches none of the three rules on its own.
    await q.enqueue({ name: "p5" }, { priority: 5 });
    await q.enqueue({ name: "p0-late-1" }, { runAt: T0 - 1 * SECOND });
    await q.enqueue({ name: "p0-early" }, { runAt: T0 - 5 * SECOND });
    await q.enqueue({ name: "p-1" }, { priority: -1 });
    await q.enqueue({ name: "p0-late-2" }, { runAt: T0 - 1 * SECOND });
    await q.enqueueMany([{ payload: { name: "p5-many-1" }, priority: 5 }, { payload: { name: "p0-late-3" }, runAt: T0 - 1 * SECOND }, { payload: { name: "p5-many-2" }, priority: 5 }]);

    const { ran } = await tw.tick();

    expect(ran).toBe(8);
    expect(order).toEqual(["p-1", "p0-early", "p0-late-1", "p0-late-2", "p0-late-3", "p5", "p5-many-1", "p5-many-2"]);
  });

  it("a job whose runAt is in the future waits for the clock, and tick() says when", async () => {
    const { tw, clock } = await engine();
    const ran: string[] = [];
    const q = tw.queue("work", { handler: (job) => void ran.push((job.payload as { name: string }).name) });
    await q.enqueue({ name: "in 10m" }, { runAt: new Date(T0 + 10 * MINUTE) });
    await q.enqueue({ name: "in 5m" }, { delay: "5m" });

    expect(await tw.tick()).toMatchObject({ ran: 0, nextWakeAt: T0 + 5 * MINUTE });

    await clock.set(T0 + 5 * MINUTE - 1);
    expect(await tw.tick()).toMatchObject({ ran: 0, nextWakeAt: T0 + 5 * MINUTE });
    expect(ran).toEqual([]);

    await clock.advance(1);
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: T0 + 10 * MINUTE });
    expect(ran).toEqual(["in 5m"]);

    await clock.set(T0 + 10 * MINUTE - 1);
    expect(await tw.tick()).toMatchObject({ ran: 0, nextWakeAt: T0 + 10 * MINUTE });

    await clock.advance(1);
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: null });
    expect(ran).toEqual(["in 5m", "in 10m"]);
  });

  it("a higher-priority job that is not yet due does not hold back a due one", async () => {
    const { tw, clock } = await engine();
    const ran: string[] = [];
    const q = tw.queue("work", { concurrency: 1, handler: (job) => void ran.push((job.payload as { name: string }).name) });
    await q.enqueue({ name: "urgent later" }, { priority: -10, delay: "1m" });
    await q.enqueue({ name: "normal now" });

    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: T0 + MINUTE });
    expect(ran).toEqual(["normal now"]);

    await clock.advance("1m");
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: null });
    expect(ran).toEqual(["normal now", "urgent later"]);
  });
});
