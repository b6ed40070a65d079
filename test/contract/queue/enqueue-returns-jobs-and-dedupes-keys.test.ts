import { describe, expect, it } from "vitest";
import type { EnqueuedJob } from "../../../src/queue/job.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, T0, engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("enqueue returns the job and dedupes live keys ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("enqueue returns the pending job with the queue's maxAttempts, as the store holds it", async () => {
    const { tw } = await engine();
    const q = tw.queue("mail", { handler: () => {}, retry: { maxAttempts: 7 } });

    const job = await q.enqueue({ to: "a@example.com" });
    expect(job).toEqual({
      id: expect.stringMatching(/^[1-9][0-9]*$/),
      queue: "mail",
      payload: { to: "a@example.com" },
      key: null,
      group: null,
      status: "pending",
      priority: 0,
      runAt: T0,
      attempts: 0,
      maxAttempts: 7,
      lastError: null,
      createdAt: T0,
      startedAt: null,
      finishedAt: null,
      result: null,
      progress: null,
      snoozes: 0,
      history: [],
      parentId: null,
      children: null,
      lease: null,
      duplicate: false,
    });
    const { duplicate: _duplicate, ...stored } = job;
    expect(await tw.jobs.get(job.id)).toEqual(stored);

    const later = await q.enqueue({ to: "b@example.com" }, { delay: "5m", priority: -3, maxAttempts: 2 });
    expect(later).toMatchObject({ status: "pending", runAt: T0 + 5 * MINUTE, priority: -3, maxAttempts: 2, attempts: 0 });
    expect(Number(later.id)).toBeGreaterThan(Number(job.id));
  });

  it("enqueueMany inserts every item in one call and returns them in input order", async () => {
    const { tw } = await engine();
    const q = tw.queue("mail", { handler: () => {}, retry: { maxAttempts: 4 } });
    const items = Array.from({ length: 12 }, (_, n) => ({ payload: { n }, priority: n % 3, runAt: T0 + (12 - n) * 1000 }));

    const jobs = await q.enqueueMany(items);

    expect(jobs.map((j) => j.payload)).toEqual(items.map((i) => i.payload));
    expect(jobs.map((j) => j.runAt)).toEqual(items.map((i) => i.runAt));
    expect(jobs.map((j) => j.priority)).toEqual(items.map((i) => i.priority));
    expect(jobs.every((j) => j.status === "pending" && j.attempts === 0 && j.maxAttempts === 4 && !j.duplicate)).toBe(true);
    const ids = jobs.map((j) => Number(j.id));
    expect(new Set(ids).size).toBe(12);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const [counts] = await tw.jobs.counts("mail");
    expect(counts!.counts.pending).toBe(12);
    for (const job of jobs) expect((await tw.jobs.get(job.id))?.payload).toEqual(job.payload);
  });

  it("a key held by a pending job returns that job with duplicate: true", async () => {
    const { tw } = await engine();
    const q = tw.queue("charges", { handler: () => {} });

    const first = await q.enqueue({ amount: 10 }, { key: "sub-1:2026-01" });
    const again = await q.enqueue({ amount: 99 }, { key: "sub-1:2026-01", priority: 5 });

    expect(first.duplicate).toBe(false);
    expect(again).toEqual({ ...first, duplicate: true });
    expect(await tw.jobs.list({ queue: "charges" })).toHaveLength(1);
  });

  it("a key held by a running job returns that job, running, with duplicate: true", async () => {
    const { tw } = await engine();
    let seenFromHandler: EnqueuedJob | undefined;
    const q = tw.queue("charges", {
      handler: async (job) => {
        if (job.key === "sub-1") seenFromHandler = await q.enqueue({ amount: 2 }, { key: "sub-1" });
      },
    });
    const first = await q.enqueue({ amount: 1 }, { key: "sub-1" });

    await tw.tick();

    expect(seenFromHandler).toMatchObject({ id: first.id, status: "running", attempts: 1, payload: { amount: 1 }, duplicate: true });
    expect(await tw.jobs.list({ queue: "charges" })).toHaveLength(1);
  });

  it("duplicate keys within one enqueueMany batch and across batches return the first job", async () => {
    const { tw } = await engine();
    const q = tw.queue("charges", { handler: () => {} });

    const batch = await q.enqueueMany([
      { payload: { n: 0 }, key: "a" },
      { payload: { n: 1 }, key: "b" },
      { payload: { n: 2 }, key: "a" },
      { payload: { n: 3 } },
      { payload: { n: 4 }, key: "b" },
    ]);
    expect(batch.map((j) => j.duplicate)).toEqual([false, false, true, false, true]);
    expect(batch[2]!.id).toBe(batch[0]!.id);
    expect(batch[2]!.payload).toEqual({ n: 0 });
    expect(batch[4]!.id).toBe(batch[1]!.id);
    expect(batch[4]!.payload).toEqual({ n: 1 });
    expect(new Set(batch.map((j) => j.id)).size).toBe(3);

    const next = await q.enqueueMany([
      { payload: { n: 5 }, key: "c" },
      { payload: { n: 6 }, key: "b" },
      { payload: { n: 7 }, key: "a" },
    ]);
    expect(next.map((j) => j.duplicate)).toEqual([false, true, true]);
    expect(next[1]).toMatchObject({ id: batch[1]!.id, payload: { n: 1 }, status: "pending" });
    expect(next[2]).toMatchObject({ id: batch[0]!.id, payload: { n: 0 }, status: "pending" });
    expect(await tw.jobs.list({ queue: "charges" })).toHaveLength(4);
  });

  it("once the key's holder succeeded or failed, the key can be used again", async () => {
    const { tw } = await engine();
    const q = tw.queue("charges", {
      retry: { maxAttempts: 1 },
      handler: (job) => {
        if ((job.payload as { fail: boolean }).fail) throw new Error("card declined");
      },
    });
    const ok = await q.enqueue({ fail: false }, { key: "ok" });
    const bad = await q.enqueue({ fail: true }, { key: "bad" });
    await tw.tick();
    expect((await tw.jobs.get(ok.id))?.status).toBe("succeeded");
    expect((await tw.jobs.get(bad.id))?.status).toBe("failed");

    const okAgain = await q.enqueue({ fail: false }, { key: "ok" });
    const badAgain = await q.enqueue({ fail: false }, { key: "bad" });

    expect(okAgain).toMatchObject({ duplicate: false, status: "pending", attempts: 0 });
    expect(badAgain).toMatchObject({ duplicate: false, status: "pending", attempts: 0 });
    expect(okAgain.id).not.toBe(ok.id);
    expect(badAgain.id).not.toBe(bad.id);
    expect((await tw.jobs.list({ queue: "charges", key: "ok" })).map((j) => j.status)).toEqual(["pending", "succeeded"]);
    expect((await tw.jobs.list({ queue: "charges", key: "bad" })).map((j) => j.status)).toEqual(["pending", "failed"]);
  });
});
