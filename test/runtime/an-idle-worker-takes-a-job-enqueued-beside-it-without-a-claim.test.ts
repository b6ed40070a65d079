import { describe, expect, it, onTestFinished } from "vitest";
import type { QueueStore } from "../../src/queue/store.js";
import type { Store } from "../../src/store/store.js";
import { allStoreCases } from "../support/stores.js";
import { deferred, eventually, realEngines } from "../support/real-time.js";

/**
 * Counts the claims the worker sends to a real store (the store itself is untouched), and tells when
 * the worker is idle: its first claim came back (empty, the queue being new).
 */
function countingClaims(store: Store): { store: Store; claims: () => number; idle: () => Promise<unknown> } {
  let claims = 0;
  let answered = 0;
  const inner = store.queue;
  const claimDue: QueueStore["claimDue"] = async (params) => {
    claims++;
    const jobs = await inner.claimDue(params);
    answered++;
    return jobs;
  };
  // Every other operation goes to the store's own queue module as it is.
  const queue = new Proxy(inner, { get: (target, property) => (property === "claimDue" ? claimDue : Reflect.get(target, property)) });
  return {
    store: { ...store, queue },
    claims: () => claims,
    idle: () => eventually(() => answered >= 1, "the worker's first claim to come back"),
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

  it("is left pending for a claim when every slot is busy, and runs once one frees", async () => {
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

  it("frees its slot when the key is already held, and a job due later is not handed off", async () => {
    const { store, idle } = countingClaims(c.make());
    const { tw } = await engine({ store, pollInterval: "1h" });
    const release = deferred();
    const queue = tw.queue("mail", { concurrency: 2, handler: () => release.promise });
    await tw.start();
    await idle();
    let later;
    // Whatever fails inside, the blocked handlers must end for the engine to stop.
    try {
      const keyed = await queue.enqueue({}, { key: "welcome-7" });
      expect(keyed.status).toBe("running");

      const again = await queue.enqueue({}, { key: "welcome-7" });
      expect(again).toMatchObject({ id: keyed.id, duplicate: true });
      // The duplicate's reserved slot was given back: the second slot still takes a hand-off.
      const other = await queue.enqueue({ n: 2 });
      expect(other.status).toBe("running");

      later = await queue.enqueue({ n: 3 }, { delay: "1h" });
      expect(later).toMatchObject({ status: "pending", attempts: 0 });
    } finally {
      release.resolve();
    }
    await eventually(async () => (await tw.jobs.counts("mail"))[0]?.counts.succeeded === 2, "both running jobs to succeed");
    expect((await tw.jobs.get(later.id))?.status).toBe("pending");
  });
});
