import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { SECOND, T0, engineFor } from "../../support/queue-fixtures.js";
import type { JobOutcome } from "../../../src/queue/store/store.js";

/** Another process that claimed jobs and then died: it never heartbeats and never reports. */
const DEAD_WORKER = "dead-host/work";

/**
 * A claim may hold jobs for its worker beyond those it starts (prefetch): they are running under the
 * worker's lease but not started, and the worker writes each one's start before its handler runs.
 * An attempt counts from that start: when the lease of a held job that never started lapses, the job
 * goes back pending with the attempt given back, whatever its maxAttempts.
 */
describe.each(allStoreCases())("an attempt counts from its start ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("a claim starts its first `start` jobs in claim order and holds the rest, not started", async () => {
    const { tw } = await engine();
    const q = tw.queue("work", {});
    const jobs = await q.enqueueMany([0, 1, 2, 3].map((n) => ({ payload: { n }, priority: 3 - n })));
    const claimed = await tw.store.queue.claimDue({ queue: "work", limit: 4, start: 1, now: T0, leaseUntil: T0 + 30 * SECOND, workerId: DEAD_WORKER });
    // Claim order is priority first: the last enqueued is first.
    expect(claimed.map((j) => [j.id, j.status, j.attempts, j.startedAt])).toEqual([
      [jobs[3]!.id, "running", 1, T0],
      [jobs[2]!.id, "running", 1, null],
      [jobs[1]!.id, "running", 1, null],
      [jobs[0]!.id, "running", 1, null],
    ]);
    expect(claimed[0]!.history).toEqual([{ attempt: 1, startedAt: T0, finishedAt: null, outcome: "running", error: null }]);
    expect(claimed[1]!.history).toEqual([]);
    expect(await tw.jobs.get(jobs[2]!.id)).toMatchObject({ status: "running", attempts: 1, startedAt: null, lease: { workerId: DEAD_WORKER } });
  });

  it("a queue's status counts the held jobs apart from the started ones, and a start moves one across", async () => {
    const { tw } = await engine();
    const q = tw.queue("work", {});
    tw.queue("other", {});
    await q.enqueueMany([0, 1, 2, 3, 4].map((n) => ({ payload: { n } })));
    const claimed = await tw.store.queue.claimDue({ queue: "work", limit: 4, start: 1, now: T0, leaseUntil: T0 + 30 * SECOND, workerId: DEAD_WORKER });
    expect(await tw.store.queue.countHeld({ queues: ["work", "other"] })).toEqual({ work: 3 });
    expect(await tw.store.queue.countHeld({ queues: [] })).toEqual({});
    const status = async () => (await tw.queues.status("work"))[0]!;
    expect(await status()).toMatchObject({ running: 1, held: 3, pending: 1 });

    await tw.store.queue.markStarted({ workerId: DEAD_WORKER, jobs: [{ id: claimed[1]!.id, attempt: 1, at: T0 + SECOND }] });
    expect(await status()).toMatchObject({ running: 2, held: 2, pending: 1 });
  });

  it("marking a start is fenced: only the holder's unstarted attempt is marked, once", async () => {
    const { tw } = await engine();
    const q = tw.queue("work", {});
    const [a, b] = await q.enqueueMany([{ payload: { n: 0 } }, { payload: { n: 1 } }]);
    await tw.store.queue.claimDue({ queue: "work", limit: 2, start: 0, now: T0, leaseUntil: T0 + 30 * SECOND, workerId: DEAD_WORKER });
    const store = tw.store.queue;
    // Another worker, a stale attempt, then the holder itself: only the last is marked.
    expect(await store.markStarted({ workerId: "other/work", jobs: [{ id: a!.id, attempt: 1, at: T0 + 1 }] })).toEqual([]);
    expect(await store.markStarted({ workerId: DEAD_WORKER, jobs: [{ id: a!.id, attempt: 2, at: T0 + 1 }] })).toEqual([]);
    expect(await store.markStarted({ workerId: DEAD_WORKER, jobs: [{ id: a!.id, attempt: 1, at: T0 + 2 }, { id: b!.id, attempt: 1, at: T0 + 2 }] })).toEqual([a!.id, b!.id]);
    // Started already: not again.
    expect(await store.markStarted({ workerId: DEAD_WORKER, jobs: [{ id: a!.id, attempt: 1, at: T0 + 3 }] })).toEqual([]);
    expect(await tw.jobs.get(a!.id)).toMatchObject({ startedAt: T0 + 2 });
  });

  it("a dead worker's held jobs that never started come back pending with the attempt given back, even on their last attempt", async () => {
    const { tw, clock, named } = await engine();
    const seen: { id: string; attempt: number }[] = [];
    const q = tw.queue("work", { retry: { maxAttempts: 1 }, handler: (job, ctx) => void seen.push({ id: job.id, attempt: ctx.attempt }) });
    const jobs = await q.enqueueMany([0, 1, 2].map((n) => ({ payload: { n } })));
    await tw.store.queue.claimDue({ queue: "work", limit: 3, start: 1, now: T0, leaseUntil: T0 + 30 * SECOND, workerId: DEAD_WORKER });
    // The held third one had its start written before the worker died: it counts.
    expect(await tw.store.queue.markStarted({ workerId: DEAD_WORKER, jobs: [{ id: jobs[2]!.id, attempt: 1, at: T0 + SECOND }] })).toEqual([jobs[2]!.id]);

    await clock.set(T0 + 30 * SECOND + 1);
    await tw.tick();

    // Started (by the claim, or marked): its only attempt spent, failed for good; never started: run now, as attempt 1.
    for (const started of [jobs[0]!, jobs[2]!]) {
      expect(await tw.jobs.get(started.id)).toMatchObject({ status: "failed", attempts: 1 });
    }
    expect(seen).toEqual([{ id: jobs[1]!.id, attempt: 1 }]);
    const unstarted = await tw.jobs.get(jobs[1]!.id);
    expect(unstarted).toMatchObject({ status: "succeeded", attempts: 1, lastError: null });
    // Its history holds the one attempt that ran, not a lapsed one.
    expect(unstarted!.history.map((h) => h.outcome)).toEqual(["succeeded"]);
    expect(named("job.lease_expired").map((e) => [e.id, e.status])).toEqual(
      expect.arrayContaining([[jobs[0]!.id, "failed"], [jobs[1]!.id, "pending"], [jobs[2]!.id, "failed"]]),
    );
  });

  it("an attempt given back and claimed again under its number is the new holder's: none of the old holder's late outcomes applies", async () => {
    const { tw, clock } = await engine();
    tw.queue("work", {});
    const store = tw.store.queue;
    const { id } = await tw.enqueue("work", {});
    await store.claimDue({ queue: "work", limit: 1, start: 0, now: T0, leaseUntil: T0 + 30 * SECOND, workerId: "frozen-host/work" });
    // The frozen worker's other job, still its own (its lease ran on): a batch with it is judged per outcome.
    const other = await tw.enqueue("work", {});
    await store.claimDue({ queue: "work", limit: 1, now: T0, leaseUntil: T0 + 3_600 * SECOND, workerId: "frozen-host/work" });
    await clock.set(T0 + 30 * SECOND + 1);
    await store.rescueExpired({ queues: ["work"], now: clock.now(), limit: 10 });
    const [again] = await store.claimDue({ queue: "work", limit: 1, now: clock.now(), leaseUntil: clock.now() + 30 * SECOND, workerId: "live-host/work" });
    expect(again).toMatchObject({ id, attempts: 1 });
    // The frozen worker wakes and reports on attempt 1 (it started the job after the thaw, or hands it
    // back): not its own any more, whatever the outcome, alone or in a batch of successes.
    const now = clock.now();
    const late: JobOutcome[][] = [
      [{ kind: "released", id, attempt: 1 }],
      [{ kind: "succeeded", id, attempt: 1, startedAt: now }],
      [{ kind: "succeeded", id, attempt: 1, startedAt: now }, { kind: "succeeded", id: other.id, attempt: 1 }],
      [{ kind: "failed", id, attempt: 1, error: "late", retryAt: null, startedAt: now }],
      [{ kind: "failed", id, attempt: 1, error: "late", retryAt: now + 1, startedAt: now }],
      [{ kind: "snoozed", id, attempt: 1, runAt: now + 1, startedAt: now }],
    ];
    for (const outcomes of late) {
      const { refused } = await store.settleMany({ workerId: "frozen-host/work", outcomes, now });
      expect(refused, outcomes.map((o) => o.kind).join(", ")).toEqual([id]);
    }
    expect(await tw.jobs.get(other.id)).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(await tw.jobs.get(id)).toMatchObject({ status: "running", attempts: 1, startedAt: now, lastError: null, lease: { workerId: "live-host/work" } });
    // The new holder's own outcome applies.
    expect((await store.settleMany({ workerId: "live-host/work", outcomes: [{ kind: "succeeded", id, attempt: 1 }], now })).refused).toEqual([]);
    expect(await tw.jobs.get(id)).toMatchObject({ status: "succeeded", attempts: 1 });
  });
});
