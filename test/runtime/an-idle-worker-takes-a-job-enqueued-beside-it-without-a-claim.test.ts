import { describe, expect, it, onTestFinished } from "vitest";
import type { Store } from "../../src/store/store.js";
import { allStoreCases, wrapQueueOperation } from "../support/stores.js";
import { deferred, eventually, realEngines } from "../support/real-time.js";

/**
 * Counts the claims the worker sends to a real store (the store itself is untouched), and tells when
 * the worker is idle: every claim it sent came back (empty: nothing in these tests is due unclaimed).
 */
function countingClaims(store: Store): { store: Store; claims: () => number; idle: (after?: number) => Promise<unknown> } {
  let claims = 0;
  let answered = 0;
  const counted = wrapQueueOperation(store, "claim", (claim) => async (params) => {
    claims++;
    const result = await claim(params);
    answered++;
    return result;
  });
  return {
    store: counted,
    claims: () => claims,
    // Polled, so a claim the worker is about to send (after a wake-up) is counted before this answers.
    // `after`: claims counted before a wake-up, so the claim it sends is waited for even if it has not left yet.
    idle: (after = 0) => eventually(() => claims > after && answered === claims, "every claim the worker sent to come back"),
  };
}

describe.each(allStoreCases())("$name: a job enqueued next to its queue's idle worker", (c) => {
  const engine = realEngines({ afterStop: () => c.cleanup() });

  it("is written already claimed by that worker and runs without a claim", async () => {
    const { store, claims, idle } = countingClaims(c.make());
    // An hour-long poll: after its first (empty) claim, the worker claims only if something wakes it.
    const { tw } = await engine({ store, pollInterval: "1h" });
    const ran: number[] = [];
    const queue = tw.queue("mail", { concurrency: 2, handler: (_job, ctx) => void ran.push(ctx.attempt) });
    await tw.start();
    await idle();
    const before = claims();

    const enqueued = await queue.enqueue({ to: "a@example.com" });
    expect(enqueued).toMatchObject({ status: "running", attempts: 1, duplicate: false });
    expect(enqueued.startedAt).not.toBeNull();
    const done = await eventually(async () => {
      const job = await tw.jobs.get(enqueued.id);
      return job?.status === "succeeded" && job;
    }, "the handed-off job to succeed");
    expect(done).toMatchObject({ attempts: 1, payload: { to: "a@example.com" } });
    expect(ran).toEqual([1]);
    expect(claims()).toBe(before);
  });

  it("is left pending for a claim while the worker has no free slot, and runs after the job it holds", async () => {
    const { store, idle } = countingClaims(c.make());
    const { tw } = await engine({ store, pollInterval: "1h" });
    const release = deferred();
    const order: string[] = [];
    const queue = tw.queue<{ n: string }>("mail", {
      concurrency: 1,
      handler: async (job) => {
        order.push(job.payload.n);
        if (job.payload.n === "first") await release.promise;
      },
    });
    await tw.start();
    await idle();
    // Whatever fails below, the blocked handler must end for the engine to stop.
    onTestFinished(() => release.resolve());
    const first = await queue.enqueue({ n: "first" });
    expect(first.status).toBe("running");
    await eventually(() => order.length === 1, "the first job to start");

    const second = await queue.enqueue({ n: "second" });
    expect(second).toMatchObject({ status: "pending", attempts: 0, startedAt: null });
    release.resolve();
    await eventually(async () => (await tw.jobs.get(second.id))?.status === "succeeded", "the second job to be claimed and succeed");
    expect(order).toEqual(["first", "second"]);
  });

  it("several enqueued at once are all written claimed when the worker has a free slot for each", async () => {
    const { store, claims, idle } = countingClaims(c.make());
    const { tw } = await engine({ store, pollInterval: "1h" });
    const ran: number[] = [];
    const queue = tw.queue<{ n: number }>("mail", { concurrency: 4, handler: (job) => void ran.push(job.payload.n) });
    await tw.start();
    await idle();
    const before = claims();

    const jobs = await Promise.all([1, 2, 3].map((n) => queue.enqueue({ n })));
    expect(jobs.map((j) => j.status)).toEqual(["running", "running", "running"]);
    await eventually(async () => (await tw.jobs.counts("mail"))[0]?.counts.succeeded === 3, "the three handed-off jobs to succeed");
    expect(ran.sort()).toEqual([1, 2, 3]);
    expect(claims()).toBe(before);
  });

  it("more enqueued at once than the worker has free slots are all left pending for a claim", async () => {
    const { store, idle } = countingClaims(c.make());
    const { tw } = await engine({ store, pollInterval: "1h" });
    const ran: number[] = [];
    const queue = tw.queue<{ n: number }>("mail", { concurrency: 2, handler: (job) => void ran.push(job.payload.n) });
    await tw.start();
    await idle();

    const jobs = await Promise.all([1, 2, 3].map((n) => queue.enqueue({ n })));
    expect(jobs.map((j) => j.status)).toEqual(["pending", "pending", "pending"]);
    await eventually(async () => (await tw.jobs.counts("mail"))[0]?.counts.succeeded === 3, "the three jobs to be claimed and succeed");
    expect(ran.sort()).toEqual([1, 2, 3]);
  });

  it("is not taken when due later, and a duplicate key gives the worker back for the next job", async () => {
    const { store, claims, idle } = countingClaims(c.make());
    const { tw } = await engine({ store, pollInterval: "1h" });
    const queue = tw.queue("mail", { concurrency: 2, handler: () => {} });
    await tw.start();
    await idle();

    const before = claims();
    const later = await queue.enqueue({ n: 1 }, { key: "welcome-7", delay: "1h" });
    expect(later).toMatchObject({ status: "pending", attempts: 0 });
    // Its insert woke the worker, whose claim finds nothing due: it is idle again once that is back.
    await idle(before);
    // The idle worker is reserved for this one, but the key is held: the insert writes nothing.
    const again = await queue.enqueue({ n: 2 }, { key: "welcome-7" });
    expect(again).toMatchObject({ id: later.id, duplicate: true, status: "pending" });
    // The reservation was given back: the next job is handed off.
    const next = await queue.enqueue({ n: 3 });
    expect(next.status).toBe("running");
    await eventually(async () => (await tw.jobs.get(next.id))?.status === "succeeded", "the handed-off job to succeed");
    expect((await tw.jobs.get(later.id))?.status).toBe("pending");
  });

  it("handed over while the queue is paused here, after its slots were reserved: handed back at its insert's return, never started, run after the resume", async () => {
    const insertReached = deferred();
    const insertMay = deferred();
    const gated = wrapQueueOperation(c.make(), "insertMany", (insert) => async (params) => {
      if (params.claim) {
        insertReached.resolve();
        await insertMay.promise;
      }
      return insert(params);
    });
    const { store, idle } = countingClaims(gated);
    const { tw } = await engine({ store, pollInterval: "1h" });
    const ran: string[] = [];
    const queue = tw.queue("mail", { concurrency: 2, handler: (job) => void ran.push(job.id) });
    await tw.start();
    await idle();
    onTestFinished(() => insertMay.resolve());

    // The worker is caught up: the enqueue reserves its slots, then its insert waits here.
    const enqueued = queue.enqueue({ to: "a@example.com" });
    await insertReached.promise;
    expect(await tw.queues.pause("mail")).toBe(true);
    insertMay.resolve();
    const job = await enqueued;
    expect(job).toMatchObject({ status: "running", attempts: 1 });
    // The worker heard the pause before the jobs came: it gives the attempt back instead of starting it.
    const back = await eventually(async () => {
      const row = await tw.jobs.get(job.id);
      return row?.status === "pending" && row;
    }, "the handed job to go back to pending");
    expect(back).toMatchObject({ attempts: 0 });
    expect(ran).toEqual([]);

    expect(await tw.queues.resume("mail")).toBe(true);
    await eventually(async () => (await tw.jobs.get(job.id))?.status === "succeeded", "the job to run after the resume");
    expect(ran).toEqual([job.id]);
  });
});
