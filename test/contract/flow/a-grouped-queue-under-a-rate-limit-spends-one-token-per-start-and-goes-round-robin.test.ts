import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { T0, engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("a grouped queue under a shared rate limit spends one token per start and still goes round-robin ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  /** Ticks until `total` jobs started, following each tick's wake-up; returns the wake-ups asked for. */
  async function tickThrough(tw: Awaited<ReturnType<typeof engine>>["tw"], clock: Awaited<ReturnType<typeof engine>>["clock"], started: () => number, total: number) {
    const wakes: { at: number; ran: number; nextWakeAt: number | null }[] = [];
    for (let i = 0; i < 20 && started() < total; i++) {
      const result = await tw.tick();
      wakes.push({ at: clock.now() - T0, ran: result.ran, nextWakeAt: result.nextWakeAt === null ? null : result.nextWakeAt - T0 });
      if (started() < total) await clock.set(result.nextWakeAt!);
    }
    return wakes;
  }

  it("global rateLimit { max: 2, per: 1s }: groups a, b, c start one job every 500 ms in turn, each tick asking to wake at the next token", async () => {
    const { tw, clock } = await engine();
    const starts: { group: string; at: number }[] = [];
    const q = tw.queue("work", {
      concurrency: 10,
      group: true,
      rateLimit: { max: 2, per: "1s", scope: "global" },
      handler: (job) => void starts.push({ group: job.group!, at: clock.now() - T0 }),
    });
    await q.enqueueMany(["a", "a", "a", "b", "b", "c"].map((group) => ({ payload: {}, group })));

    const wakes = await tickThrough(tw, clock, () => starts.length, 6);

    expect(starts).toEqual([
      { group: "a", at: 0 },
      { group: "b", at: 500 },
      { group: "c", at: 1000 },
      { group: "a", at: 1500 },
      { group: "b", at: 2000 },
      { group: "a", at: 2500 },
    ]);
    // Held by the queue's budget, each tick asks to be woken at its next token; after the last start, never.
    expect(wakes).toEqual([...[0, 500, 1000, 1500, 2000].map((at) => ({ at, ran: 1, nextWakeAt: at + 500 })), { at: 2500, ran: 1, nextWakeAt: null }]);
    expect(tw.status().queues[0]).toMatchObject({ heldBy: null });
  });

  it("global rateLimit { max: 4, per: 1s } and groupRateLimit { max: 1, per: 1s }: a group's spent budget holds it while the queue still has tokens", async () => {
    const { tw, clock } = await engine();
    const starts: { group: string; at: number }[] = [];
    const q = tw.queue("work", {
      concurrency: 10,
      group: true,
      rateLimit: { max: 4, per: "1s", scope: "global" },
      groupRateLimit: { max: 1, per: "1s" },
      handler: (job) => void starts.push({ group: job.group!, at: clock.now() - T0 }),
    });
    await q.enqueueMany(["a", "a", "b", "b"].map((group) => ({ payload: {}, group })));

    const wakes = await tickThrough(tw, clock, () => starts.length, 4);

    expect(starts).toEqual([
      { group: "a", at: 0 },
      { group: "b", at: 250 },
      { group: "a", at: 1000 },
      { group: "b", at: 1250 },
    ]);
    // At 500 the queue has a token and neither group has: nothing starts, and the tick sleeps until a's comes back.
    expect(wakes).toEqual([
      { at: 0, ran: 1, nextWakeAt: 250 },
      { at: 250, ran: 1, nextWakeAt: 500 },
      { at: 500, ran: 0, nextWakeAt: 1000 },
      { at: 1000, ran: 1, nextWakeAt: 1250 },
      { at: 1250, ran: 1, nextWakeAt: null },
    ]);
    const pending = await tw.jobs.list({ queue: "work", status: "pending" });
    expect(pending).toEqual([]);
  });

  it("a named limiter: a token taken outside the queue is one its grouped jobs wait for", async () => {
    const { tw, clock } = await engine();
    const api = tw.limiter("api", { max: 2, per: "1s" });
    const starts: { group: string; at: number }[] = [];
    const q = tw.queue("work", { concurrency: 10, group: true, limiter: api, handler: (job) => void starts.push({ group: job.group!, at: clock.now() - T0 }) });
    await q.enqueueMany(["a", "b"].map((group) => ({ payload: {}, group })));

    expect(await api.tryAcquire()).toBe(true);
    expect(await tw.tick()).toMatchObject({ ran: 0, nextWakeAt: T0 + 500 });
    expect((await tw.jobs.list({ queue: "work", status: "pending" })).map((j) => j.attempts)).toEqual([0, 0]);
    await clock.set(T0 + 500);
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: T0 + 1000 });
    expect(await api.tryAcquire()).toBe(false);
    await clock.set(T0 + 1000);
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: null });
    expect(starts).toEqual([
      { group: "a", at: 500 },
      { group: "b", at: 1000 },
    ]);
  });
});
