import { describe, expect, it } from "vitest";
import { Peaks, sharedStoreCases, twoEnginesFor } from "./two-engines.js";
import { SECOND, until } from "../../support/queue-fixtures.js";

describe.each(sharedStoreCases())("globalConcurrency shares its slots among the engines, and a dead engine's slots count until its hold lapses ($name)", (storeCase) => {
  const engines = twoEnginesFor(storeCase);

  it("globalConcurrency 3: while A runs 2, B starts 1 of the 5 it asks for; once A's finish, B runs the rest, never more than 3 at once", async () => {
    const { a, b, gate } = await engines();
    const open = gate();
    const peaks = new Peaks();
    const ranBy = { a: 0, b: 0 };
    const handler = (engine: "a" | "b") => async () => {
      ranBy[engine]++;
      peaks.enter("all");
      await open.promise;
      peaks.leave("all");
    };
    const work = a.tw.queue("work", { concurrency: 2, globalConcurrency: 3, handler: handler("a") });
    b.tw.queue("work", { concurrency: 5, globalConcurrency: 3, handler: handler("b") });
    await work.enqueueMany(Array.from({ length: 6 }, (_, n) => ({ payload: { n } })));

    const aTick = a.tw.tick({ maxJobs: 2 });
    await until(() => ranBy.a === 2, "A to start 2 jobs");
    const bTick = b.tw.tick();
    await until(() => ranBy.b === 1, "B to start 1 job");

    expect(b.named("queue.throttled")).toEqual([expect.objectContaining({ queue: "work", by: "globalConcurrency", started: 1, asked: 5 })]);
    const [status] = await b.tw.queues.status("work");
    expect(status).toMatchObject({ globalConcurrency: 3, running: 3, pending: 3 });
    expect(peaks.peak.get("all")).toBe(3);

    open.resolve();
    expect((await aTick).ran).toBe(2);
    let ranInB = (await bTick).ran;
    for (let i = 0; i < 10 && ranInB < 4; i++) ranInB += (await b.tw.tick()).ran;

    expect(ranInB).toBe(4);
    expect(ranBy).toEqual({ a: 2, b: 4 });
    expect(peaks.peak.get("all")).toBe(3);
    expect((await a.tw.jobs.counts("work"))[0]!.counts).toMatchObject({ succeeded: 6, pending: 0, running: 0 });
  });

  it("slots held by a worker that died count until its hold lapses, then go to the next to ask", async () => {
    const { a, b, clock } = await engines();
    const work = a.tw.queue("work", { globalConcurrency: 2 });
    b.tw.queue("work", { concurrency: 5, globalConcurrency: 2, lease: "10s", handler: () => {} });
    await work.enqueueMany(Array.from({ length: 4 }, (_, n) => ({ payload: { n } })));
    // A process that holds both slots and two jobs under a 10 s lease, and dies without renewing either.
    const now = clock.now();
    const store = a.tw.store.queue;
    expect(await store.holdSlots({ queue: "work", workerId: "dead/work", want: 2, cap: 2, now, until: now + 10 * SECOND })).toEqual({ held: 2, due: false, share: 2 });
    const dead = await store.claimDue({ queue: "work", limit: 2, now, leaseUntil: now + 10 * SECOND, workerId: "dead/work" });
    expect(dead).toHaveLength(2);

    const held = await b.tw.tick();
    expect(held.ran).toBe(0);
    expect(held.nextWakeAt).toBeGreaterThan(clock.now());
    expect(b.named("queue.throttled")).toEqual([expect.objectContaining({ queue: "work", by: "globalConcurrency", started: 0, asked: 5 })]);
    // The tick let go of what it asked for: the dead worker's hold is all the store has.
    const ask = (want: number) => b.tw.store.queue.holdSlots({ queue: "work", workerId: "probe/work", want, cap: 2, now: clock.now(), until: clock.now() + 10 * SECOND });
    await clock.advance("10s");
    // Two workers want slots and the asker has none: each is to keep one.
    expect(await ask(5)).toEqual({ held: 0, due: true, share: 1 });

    await clock.advance("1ms");
    expect(await ask(5)).toEqual({ held: 2, due: true, share: 2 });
    // Given all it asked for (or letting go), the answer says nothing of due jobs.
    expect(await ask(1)).toEqual({ held: 1, due: false, share: 2 });
    expect(await ask(0)).toEqual({ held: 0, due: false, share: 2 });
  });

  it("holds never add up to more than the cap, a worker's own hold is replaced, not added to, and a starved worker makes the share equal", async () => {
    const { a, b, clock } = await engines();
    const now = clock.now();
    const ask = (engine: typeof a, workerId: string, want: number) =>
      engine.tw.store.queue.holdSlots({ queue: "work", workerId, want, cap: 5, now, until: now + 10 * SECOND });
    expect(await ask(a, "a/work", 3)).toEqual({ held: 3, due: false, share: 5 });
    // B gets what A left, 2 of the 3 that are its equal share of 5: A is to come down to 2.
    expect(await ask(b, "b/work", 4)).toEqual({ held: 2, due: false, share: 2 });
    expect(await ask(a, "a/work", 4)).toEqual({ held: 3, due: false, share: 2 });
    // B wants no more than it holds: nobody is short, the whole cap is anyone's.
    expect(await ask(b, "b/work", 1)).toEqual({ held: 1, due: false, share: 5 });
    expect(await ask(a, "a/work", 4)).toEqual({ held: 4, due: false, share: 5 });
    // Holds of another queue share nothing with these.
    expect(await b.tw.store.queue.holdSlots({ queue: "other", workerId: "b/other", want: 5, cap: 5, now, until: now + 10 * SECOND })).toEqual({ held: 5, due: false, share: 5 });
    expect(await ask(b, "c/work", 5)).toEqual({ held: 0, due: false, share: 1 });
  });

  it("after the hold and the leases lapse, B's tick rescues the dead process's jobs and runs all four, two at a time", async () => {
    const { a, b, clock } = await engines();
    const peaks = new Peaks();
    const work = a.tw.queue("work", { globalConcurrency: 2 });
    b.tw.queue("work", {
      concurrency: 5,
      globalConcurrency: 2,
      lease: "10s",
      handler: async () => {
        peaks.enter("all");
        await new Promise((resolve) => setImmediate(resolve));
        peaks.leave("all");
      },
    });
    await work.enqueueMany(Array.from({ length: 4 }, (_, n) => ({ payload: { n } })));
    const now = clock.now();
    await a.tw.store.queue.holdSlots({ queue: "work", workerId: "dead/work", want: 2, cap: 2, now, until: now + 10 * SECOND });
    await a.tw.store.queue.claimDue({ queue: "work", limit: 2, now, leaseUntil: now + 10 * SECOND, workerId: "dead/work" });
    expect((await b.tw.tick()).ran).toBe(0);

    await clock.advance("10001ms");
    let ran = 0;
    for (let i = 0; i < 10 && ran < 4; i++) ran += (await b.tw.tick()).ran;

    expect(ran).toBe(4);
    expect(peaks.peak.get("all")).toBe(2);
    expect((await b.tw.jobs.counts("work"))[0]!.counts).toMatchObject({ succeeded: 4, running: 0 });
  });
});
