import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { SECOND, T0, engineFor } from "../../support/queue-fixtures.js";

/** Another process that claimed a job and then died: it never heartbeats and never reports. */
const DEAD_WORKER = "dead-host/work";

describe.each(allStoreCases())("a rescued or released job keeps its place ahead of a later backlog ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("with a backlog enqueued after it, a rescued job is claimed next, its priority and runAt unchanged", async () => {
    const { tw, clock } = await engine();
    const order: string[] = [];
    const q = tw.queue<{ n: string }>("work", { concurrency: 1, retry: { maxAttempts: 3 }, handler: (job) => void order.push(job.payload.n) });
    const held = await q.enqueue({ n: "held" }, { priority: 2 });
    await tw.store.queue.claimDue({ queue: "work", limit: 1, now: T0, leaseUntil: T0 + 30 * SECOND, workerId: DEAD_WORKER });
    // While the dead worker's lease runs, a backlog of the same priority arrives.
    await clock.set(T0 + 10 * SECOND);
    await q.enqueueMany(Array.from({ length: 20 }, (_, i) => ({ payload: { n: `backlog-${i}` }, priority: 2 })));

    await clock.set(T0 + 30 * SECOND + 1);
    const [rescued] = await tw.store.queue.rescueExpired({ queues: ["work"], now: clock.now(), limit: 10 });
    expect(rescued).toMatchObject({ id: held.id, status: "pending" });
    expect(await tw.jobs.get(held.id)).toMatchObject({ status: "pending", priority: 2, runAt: T0, attempts: 1 });

    const [next] = await tw.store.queue.claimDue({ queue: "work", limit: 1, now: clock.now(), leaseUntil: clock.now() + 30 * SECOND, workerId: "live-host/work" });
    expect(next?.id).toBe(held.id);
  });

  it("the engine's own rescue runs the dead worker's job before the backlog that arrived after it", async () => {
    const { tw, clock } = await engine();
    const order: string[] = [];
    const q = tw.queue<{ n: string }>("work", { concurrency: 1, retry: { maxAttempts: 3 }, handler: (job) => void order.push(job.payload.n) });
    await q.enqueue({ n: "held" });
    await tw.store.queue.claimDue({ queue: "work", limit: 1, now: T0, leaseUntil: T0 + 30 * SECOND, workerId: DEAD_WORKER });
    await clock.set(T0 + 10 * SECOND);
    await q.enqueueMany(Array.from({ length: 20 }, (_, i) => ({ payload: { n: `backlog-${i}` } })));

    await clock.set(T0 + 30 * SECOND + 1);
    expect((await tw.tick()).ran).toBe(21);

    expect(order[0]).toBe("held");
    expect(order.slice(1)).toEqual(Array.from({ length: 20 }, (_, i) => `backlog-${i}`));
  });

  it("a job handed back at a graceful stop keeps its priority and runAt, and is claimed before a later backlog", async () => {
    const { tw, clock } = await engine();
    tw.queue("work", { handler: () => {} });
    const store = tw.store.queue;
    const held = await tw.enqueue("work", { n: "held" }, { priority: 1 });
    const [claimed] = await store.claimDue({ queue: "work", limit: 1, now: T0, leaseUntil: T0 + 30 * SECOND, workerId: "stopping-host/work" });
    await clock.set(T0 + 5 * SECOND);
    for (let i = 0; i < 5; i++) await tw.enqueue("work", { n: i }, { priority: 1 });

    await clock.set(T0 + 10 * SECOND);
    const { refused } = await store.settleMany({ workerId: "stopping-host/work", outcomes: [{ kind: "released", id: held.id, attempt: claimed!.attempts }], now: clock.now() });
    expect(refused).toEqual([]);
    expect(await tw.jobs.get(held.id)).toMatchObject({ status: "pending", priority: 1, runAt: T0, attempts: 0, startedAt: null });

    const [next] = await store.claimDue({ queue: "work", limit: 1, now: clock.now(), leaseUntil: clock.now() + 30 * SECOND, workerId: "live-host/work" });
    expect(next?.id).toBe(held.id);
  });

  it("a job claimed ahead of its runAt (a clock running ahead) is due at once when rescued or released, not at its runAt", async () => {
    const { tw, clock } = await engine();
    tw.queue("work", { handler: () => {} });
    const store = tw.store.queue;
    const later = T0 + 3_600 * SECOND;
    const a = await tw.enqueue("work", { n: "a" }, { runAt: later });
    const b = await tw.enqueue("work", { n: "b" }, { runAt: later });
    await store.claimDue({ queue: "work", limit: 2, now: later, leaseUntil: T0 + 30 * SECOND, workerId: DEAD_WORKER });

    await clock.set(T0 + 31 * SECOND);
    const { refused } = await store.settleMany({ workerId: DEAD_WORKER, outcomes: [{ kind: "released", id: b.id, attempt: 1 }], now: clock.now() });
    expect(refused).toEqual([]);
    expect(await store.rescueExpired({ queues: ["work"], now: clock.now(), limit: 10 })).toEqual([expect.objectContaining({ id: a.id })]);

    expect((await tw.jobs.get(a.id))?.runAt).toBe(T0 + 31 * SECOND);
    expect((await tw.jobs.get(b.id))?.runAt).toBe(T0 + 31 * SECOND);
  });
});
