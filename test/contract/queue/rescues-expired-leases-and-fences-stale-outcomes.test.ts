import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { SECOND, T0, deferred, engineFor, until } from "../../support/queue-fixtures.js";

/** Another process that claimed jobs and then died: it never heartbeats and never reports. */
const DEAD_WORKER = "dead-host/work";

describe.each(allStoreCases())("expired leases are rescued and stale outcomes are fenced off ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("jobs held by a dead worker return after their lease, the attempt counted, and then run", async () => {
    const { tw, clock, named } = await engine();
    const seen: { id: string; attempt: number; attempts: number }[] = [];
    const q = tw.queue("work", { retry: { maxAttempts: 3 }, handler: (job, ctx) => void seen.push({ id: job.id, attempt: ctx.attempt, attempts: job.attempts }) });
    const jobs = await q.enqueueMany([{ payload: { n: 1 } }, { payload: { n: 2 } }]);
    const claimed = await tw.store.queue.claimDue({ queue: "work", limit: 10, now: T0, leaseUntil: T0 + 30 * SECOND, workerId: DEAD_WORKER });
    expect(claimed.map((j) => [j.id, j.status, j.attempts])).toEqual(jobs.map((j) => [j.id, "running", 1]));

    // Still leased: nothing to run, and the next wake-up is the first millisecond after the lease.
    expect(await tw.tick()).toMatchObject({ ran: 0, nextWakeAt: T0 + 30 * SECOND + 1 });
    await clock.set(T0 + 30 * SECOND);
    expect(await tw.tick()).toMatchObject({ ran: 0, nextWakeAt: T0 + 30 * SECOND + 1 });
    expect(named("job.lease_expired")).toEqual([]);
    expect((await tw.jobs.get(jobs[0]!.id))?.status).toBe("running");

    await clock.advance(1);
    expect(await tw.tick()).toMatchObject({ ran: 2, nextWakeAt: null });

    expect(named("job.lease_expired").map((e) => [e.queue, e.id, e.attempts, e.status])).toEqual(jobs.map((j) => ["work", j.id, 1, "pending"]));
    expect(seen).toEqual(jobs.map((j) => ({ id: j.id, attempt: 2, attempts: 2 })));
    for (const job of jobs) expect(await tw.jobs.get(job.id)).toMatchObject({ status: "succeeded", attempts: 2, startedAt: T0 + 30 * SECOND + 1 });
  });

  it("a job whose lease lapses on its last attempt is failed, not run again", async () => {
    const { tw, clock, named } = await engine();
    let calls = 0;
    const q = tw.queue("work", { retry: { maxAttempts: 1 }, handler: () => void calls++ });
    const { id } = await q.enqueue({});
    await tw.store.queue.claimDue({ queue: "work", limit: 1, now: T0, leaseUntil: T0 + 30 * SECOND, workerId: DEAD_WORKER });

    await clock.set(T0 + 30 * SECOND + 1);
    expect(await tw.tick()).toMatchObject({ ran: 0, nextWakeAt: null });

    expect(calls).toBe(0);
    const job = await tw.jobs.get(id);
    expect(job).toMatchObject({ status: "failed", attempts: 1, maxAttempts: 1, finishedAt: T0 + 30 * SECOND + 1 });
    expect(job!.lastError).toContain("lease expired");
    expect(named("job.lease_expired")).toEqual([expect.objectContaining({ queue: "work", id, attempts: 1, status: "failed" })]);
    expect(named("job.failed")).toEqual([expect.objectContaining({ queue: "work", id, attempt: 1, maxAttempts: 1 })]);
  });

  it("an outcome for the old attempt, sent after the job was re-claimed, is refused and changes nothing", async () => {
    const { tw, clock } = await engine();
    const store = tw.store.queue;
    const refusals: string[][] = [];
    let during: unknown;
    const q = tw.queue("work", {
      retry: { maxAttempts: 3 },
      handler: async (job) => {
        // The dead worker wakes up and reports on attempt 1 while attempt 2 runs here.
        const now = clock.now();
        refusals.push((await store.settleMany({ workerId: DEAD_WORKER, outcomes: [{ kind: "succeeded", id: job.id, attempt: 1 }], now })).refused);
        refusals.push((await store.settleMany({ workerId: DEAD_WORKER, outcomes: [{ kind: "failed", id: job.id, attempt: 1, error: "zombie", retryAt: null }], now })).refused);
        refusals.push((await store.settleMany({ workerId: DEAD_WORKER, outcomes: [{ kind: "failed", id: job.id, attempt: 1, error: "zombie", retryAt: now + 1 }], now })).refused);
        refusals.push((await store.settleMany({ workerId: DEAD_WORKER, outcomes: [{ kind: "released", id: job.id, attempt: 1 }], now })).refused);
        during = await tw.jobs.get(job.id);
      },
    });
    const { id } = await q.enqueue({});
    await store.claimDue({ queue: "work", limit: 1, now: T0, leaseUntil: T0 + 30 * SECOND, workerId: DEAD_WORKER });
    await clock.set(T0 + 31 * SECOND);

    expect((await tw.tick()).ran).toBe(1);

    expect(refusals).toEqual([[id], [id], [id], [id]]);
    expect(during).toMatchObject({ status: "running", attempts: 2, finishedAt: null, startedAt: T0 + 31 * SECOND });
    expect((during as { lastError: string }).lastError).toContain("lease expired");
    expect(await tw.jobs.get(id)).toMatchObject({ status: "succeeded", attempts: 2, finishedAt: T0 + 31 * SECOND });

    // Once finished, no outcome for any attempt applies.
    const holder = (during as { lease: { workerId: string } }).lease.workerId;
    expect((await store.settleMany({ workerId: holder, outcomes: [{ kind: "failed", id, attempt: 2, error: "late", retryAt: null }], now: clock.now() })).refused).toEqual([id]);
    expect(await tw.jobs.get(id)).toMatchObject({ status: "succeeded", attempts: 2 });
  });

  it("at store level: a re-claimed job accepts only its current attempt's outcome, and a batch is judged per outcome", async () => {
    const { tw, clock } = await engine();
    tw.queue("work", { handler: () => {} });
    const store = tw.store.queue;
    const a = await tw.enqueue("work", { n: "a" });
    const b = await tw.enqueue("work", { n: "b" });
    await store.claimDue({ queue: "work", limit: 2, now: T0, leaseUntil: T0 + 10 * SECOND, workerId: "worker-1" });
    await clock.set(T0 + 11 * SECOND);
    const rescued = await store.rescueExpired({ queues: ["work"], now: clock.now(), limit: 10 });
    expect(rescued.map((r) => [r.id, r.status, r.attempts]).sort()).toEqual([
      [a.id, "pending", 1],
      [b.id, "pending", 1],
    ]);
    const reclaimed = await store.claimDue({ queue: "work", limit: 2, now: clock.now(), leaseUntil: clock.now() + 10 * SECOND, workerId: "worker-2" });
    expect(reclaimed.map((j) => j.attempts)).toEqual([2, 2]);

    const result = await store.settleMany({
      workerId: "worker-2",
      outcomes: [
        { kind: "succeeded", id: a.id, attempt: 1 },
        { kind: "succeeded", id: b.id, attempt: 2 },
      ],
      now: clock.now(),
    });

    expect(result.refused).toEqual([a.id]);
    expect(await tw.jobs.get(a.id)).toMatchObject({ status: "running", attempts: 2, finishedAt: null });
    expect(await tw.jobs.get(b.id)).toMatchObject({ status: "succeeded", attempts: 2, finishedAt: T0 + 11 * SECOND });
    // worker-1's heartbeat no longer holds anything; worker-2's holds a.
    expect(await store.heartbeat({ workerId: "worker-1", ids: [a.id, b.id], leaseUntil: clock.now() + 10 * SECOND })).toEqual([]);
    expect(await store.heartbeat({ workerId: "worker-2", ids: [a.id, b.id], leaseUntil: clock.now() + 10 * SECOND })).toEqual([a.id]);
  });

  it("a long-running handler whose lease the heartbeat renews is not rescued", async () => {
    const { tw, clock, named } = await engine();
    const started = deferred();
    const finish = deferred();
    let signal: AbortSignal | undefined;
    const q = tw.queue("work", {
      lease: "20s",
      handler: async (_job, ctx) => {
        signal = ctx.signal;
        started.resolve();
        await finish.promise;
      },
    });
    const { id } = await q.enqueue({});

    const tick = tw.tick();
    await started.promise;
    // Three leases long, in steps shorter than the heartbeat interval (lease / 4 = 5s). The only
    // timer on the clock is the heartbeat; after one fires, wait for its store round trip to re-arm it.
    for (let step = 0; step < 15; step++) {
      await clock.advance("4s");
      await until(() => clock.pending === 1, "the heartbeat to renew the lease and re-arm");
    }
    expect(clock.now()).toBe(T0 + 60 * SECOND);

    // Another process's rescue pass finds nothing to rescue: the lease (first due at T0 + 20s) was renewed.
    expect(await tw.store.queue.rescueExpired({ queues: ["work"], now: clock.now(), limit: 100 })).toEqual([]);
    expect(await tw.jobs.get(id)).toMatchObject({ status: "running", attempts: 1 });
    expect(signal!.aborted).toBe(false);

    finish.resolve();
    expect(await tick).toMatchObject({ ran: 1, nextWakeAt: null });
    expect(await tw.jobs.get(id)).toMatchObject({ status: "succeeded", attempts: 1, finishedAt: T0 + 60 * SECOND });
    expect(named("job.lease_expired")).toEqual([]);
    expect(named("job.lease_lost")).toEqual([]);
    expect(named("job.outcome_refused")).toEqual([]);
  });
});
