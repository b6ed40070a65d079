import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { SECOND, T0, engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("a queue's rateLimit bounds job starts per window ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it('rateLimit { max: 3, per: "1s" }: a tick runs at most 3, the next window 3 more', async () => {
    const { tw, clock } = await engine();
    const startedAt: number[] = [];
    const q = tw.queue("api", { concurrency: 10, rateLimit: { max: 3, per: "1s" }, handler: () => void startedAt.push(clock.now()) });
    await q.enqueueMany(Array.from({ length: 8 }, (_, n) => ({ payload: { n } })));

    // The tick asks to be woken when the window ends, not at once (a driver following it must not spin).
    expect(await tw.tick()).toMatchObject({ ran: 3, nextWakeAt: T0 + SECOND });
    // Same window: nothing more, however often the engine ticks.
    expect(await tw.tick()).toMatchObject({ ran: 0, nextWakeAt: T0 + SECOND });
    await clock.set(T0 + SECOND - 1);
    expect((await tw.tick()).ran).toBe(0);

    await clock.advance(1);
    expect((await tw.tick()).ran).toBe(3);
    expect((await tw.tick()).ran).toBe(0);

    await clock.advance("1s");
    expect(await tw.tick()).toMatchObject({ ran: 2, nextWakeAt: null });

    expect(startedAt).toEqual([T0, T0, T0, T0 + SECOND, T0 + SECOND, T0 + SECOND, T0 + 2 * SECOND, T0 + 2 * SECOND]);
    expect((await tw.jobs.counts("api"))[0]!.counts).toMatchObject({ succeeded: 8, pending: 0 });
  });

  it("the limit counts starts, including retries, and other queues are not limited by it", async () => {
    const { tw, clock } = await engine();
    let limitedRuns = 0;
    const limited = tw.queue("api", {
      rateLimit: { max: 3, per: "1s" },
      concurrency: 5,
      retry: { maxAttempts: 2, backoff: () => 0 },
      handler: (_job, ctx) => {
        limitedRuns++;
        if (ctx.attempt === 1) throw new Error("flaky");
      },
    });
    const free = tw.queue("local", { concurrency: 5, handler: () => {} });
    await limited.enqueueMany([{ payload: 1 }, { payload: 2 }]);
    await free.enqueueMany(Array.from({ length: 7 }, (_, n) => ({ payload: n })));

    expect((await tw.tick()).ran).toBe(2 + 7);
    expect(limitedRuns).toBe(2);
    expect((await tw.jobs.counts("api"))[0]!.counts).toMatchObject({ pending: 2 });
    // Both retries are due at once, but the window has room for one more start only.
    expect((await tw.tick()).ran).toBe(1);
    expect((await tw.tick()).ran).toBe(0);
    expect(limitedRuns).toBe(3);
    await clock.advance("1s");
    expect((await tw.tick()).ran).toBe(1);
    expect(limitedRuns).toBe(4);
    expect((await tw.jobs.counts("api"))[0]!.counts).toMatchObject({ succeeded: 2, pending: 0 });
  });
});
