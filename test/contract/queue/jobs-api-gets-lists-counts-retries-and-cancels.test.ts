import { describe, expect, it } from "vitest";
import { JobNotFoundError, JobStateError } from "../../../src/queue/errors.js";
import type { Job } from "../../../src/queue/job.js";
import { allStoreCases } from "../../support/stores.js";
import { T0, engineFor } from "../../support/queue-fixtures.js";

type Payload = { n: number; fail?: boolean };

describe.each(allStoreCases())("tw.jobs gets, lists, counts, retries and cancels ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("get returns the job, and null for an id that does not exist", async () => {
    const { tw } = await engine();
    const q = tw.queue("mail", { handler: () => {} });
    const { duplicate: _d, ...job } = await q.enqueue({ to: "x" }, { key: "k1", priority: 2 });

    expect(await tw.jobs.get(job.id)).toEqual(job);
    expect(await tw.jobs.get("987654321")).toBeNull();
  });

  it("list filters by queue, status and key, newest first", async () => {
    const { tw, clock } = await engine();
    const mail = tw.queue<Payload>("mail", { retry: { maxAttempts: 1 }, handler: (job) => { if (job.payload.fail) throw new Error("bounce"); } });
    const sms = tw.queue<Payload>("sms", { handler: () => {} });
    const m1 = await mail.enqueue({ n: 1 }, { key: "user-1" });
    const m2 = await mail.enqueue({ n: 2, fail: true }, { key: "user-2" });
    const s1 = await sms.enqueue({ n: 3 }, { key: "user-1" });
    await tw.tick();
    const m3 = await mail.enqueue({ n: 4 }, { key: "user-1", delay: "1h" });
    const s2 = await sms.enqueue({ n: 5 }, { delay: "1h" });
    await clock.advance("1s");

    const ids = (jobs: Job[]) => jobs.map((j) => j.id);
    expect(ids(await tw.jobs.list())).toEqual([s2.id, m3.id, s1.id, m2.id, m1.id]);
    expect(ids(await tw.jobs.list({ queue: "mail" }))).toEqual([m3.id, m2.id, m1.id]);
    expect(ids(await tw.jobs.list({ queue: "sms" }))).toEqual([s2.id, s1.id]);
    expect(ids(await tw.jobs.list({ status: "succeeded" }))).toEqual([s1.id, m1.id]);
    expect(ids(await tw.jobs.list({ status: "failed" }))).toEqual([m2.id]);
    expect(ids(await tw.jobs.list({ status: "pending" }))).toEqual([s2.id, m3.id]);
    expect(ids(await tw.jobs.list({ key: "user-1" }))).toEqual([m3.id, s1.id, m1.id]);
    expect(ids(await tw.jobs.list({ queue: "mail", key: "user-1" }))).toEqual([m3.id, m1.id]);
    expect(ids(await tw.jobs.list({ queue: "mail", key: "user-1", status: "succeeded" }))).toEqual([m1.id]);
    expect(await tw.jobs.list({ queue: "sms", status: "failed" })).toEqual([]);
    expect(await tw.jobs.list({ key: "nobody" })).toEqual([]);
  });

  it("keyset pagination with before walks every job newest first, with no overlap and no gap", async () => {
    const { tw } = await engine();
    const q = tw.queue("bulk", { handler: () => {} });
    const other = tw.queue("other", { handler: () => {} });
    const all: string[] = [];
    for (let round = 0; round < 3; round++) {
      all.push(...(await q.enqueueMany(Array.from({ length: 9 }, (_, n) => ({ payload: { n: round * 9 + n } })))).map((j) => j.id));
      await other.enqueue({ round }); // interleaved ids of another queue must not show up or break the walk
    }
    const newestFirst = [...all].sort((a, b) => Number(b) - Number(a));

    const pages: string[][] = [];
    let before: string | undefined;
    for (;;) {
      const page = await tw.jobs.list({ queue: "bulk", limit: 10, before });
      if (page.length === 0) break;
      pages.push(page.map((j) => j.id));
      before = page.at(-1)!.id;
    }

    expect(pages.map((p) => p.length)).toEqual([10, 10, 7]);
    expect(pages.flat()).toEqual(newestFirst);
    expect(new Set(pages.flat()).size).toBe(27);
  });

  it("counts gives every status per queue", async () => {
    const { tw } = await engine();
    const mail = tw.queue<Payload>("mail", { retry: { maxAttempts: 1 }, handler: (job) => { if (job.payload.fail) throw new Error("bounce"); } });
    tw.queue("idle", { handler: () => {} });
    await mail.enqueueMany([{ payload: { n: 1 } }, { payload: { n: 2 } }, { payload: { n: 3, fail: true } }]);
    await tw.tick();
    const cancelled = await mail.enqueue({ n: 4 });
    await tw.jobs.cancel(cancelled.id);
    await mail.enqueue({ n: 5 }, { delay: "1m" });
    await tw.enqueue("idle", { n: 6 });

    const counts = (await tw.jobs.counts()).sort((a, b) => a.queue.localeCompare(b.queue));
    expect(counts).toEqual([
      { queue: "idle", counts: { pending: 1, running: 0, succeeded: 0, failed: 0, cancelled: 0 } },
      { queue: "mail", counts: { pending: 1, running: 0, succeeded: 2, failed: 1, cancelled: 1 } },
    ]);
    expect(await tw.jobs.counts("mail")).toEqual([counts[1]]);
  });

  it("retry moves a failed job back to pending with attempts reset, and it runs again", async () => {
    const { tw, clock } = await engine();
    let healthy = false;
    const attempts: number[] = [];
    const q = tw.queue("mail", {
      retry: { maxAttempts: 2, backoff: () => 1_000 },
      handler: (_job, ctx) => {
        attempts.push(ctx.attempt);
        if (!healthy) throw new Error("smtp down");
      },
    });
    const { id } = await q.enqueue({});
    await tw.tick();
    await clock.advance("1s");
    await tw.tick();
    expect(await tw.jobs.get(id)).toMatchObject({ status: "failed", attempts: 2 });

    await clock.advance("10m");
    const retried = await tw.jobs.retry(id);

    expect(retried).toMatchObject({ id, status: "pending", attempts: 0, runAt: T0 + 1_000 + 10 * 60_000, finishedAt: null, startedAt: null });
    expect(retried.lastError).toContain("smtp down");
    healthy = true;
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: null });
    expect(attempts).toEqual([1, 2, 1]);
    expect(await tw.jobs.get(id)).toMatchObject({ status: "succeeded", attempts: 1 });
  });

  it("retry refuses a pending job (JobStateError) and a missing id (JobNotFoundError)", async () => {
    const { tw } = await engine();
    const q = tw.queue("mail", { handler: () => {} });
    const { id } = await q.enqueue({});

    await expect(tw.jobs.retry(id)).rejects.toBeInstanceOf(JobStateError);
    await expect(tw.jobs.retry(id)).rejects.toMatchObject({ code: "TW_JOB_STATE", message: expect.stringContaining("pending") });
    await expect(tw.jobs.retry("424242")).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(tw.jobs.retry("424242")).rejects.toMatchObject({ code: "TW_JOB_NOT_FOUND" });
    expect(await tw.jobs.get(id)).toMatchObject({ status: "pending", attempts: 0 });
  });

  it("retryFailed(queue) retries every failed job of that queue only and returns the count", async () => {
    const { tw } = await engine();
    let healthy = false;
    const failing = () => {
      if (!healthy) throw new Error("down");
    };
    const mail = tw.queue("mail", { retry: { maxAttempts: 1 }, handler: failing });
    const sms = tw.queue("sms", { retry: { maxAttempts: 1 }, handler: failing });
    await mail.enqueueMany([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    const smsJob = await sms.enqueue(4);
    await tw.tick();
    const ok = await mail.enqueue(5);
    healthy = true;
    await tw.tick();

    expect(await tw.jobs.retryFailed("mail")).toBe(3);

    expect((await tw.jobs.list({ queue: "mail", status: "pending" })).map((j) => j.attempts)).toEqual([0, 0, 0]);
    expect(await tw.jobs.get(smsJob.id)).toMatchObject({ status: "failed" });
    expect(await tw.jobs.get(ok.id)).toMatchObject({ status: "succeeded" });
    expect((await tw.tick()).ran).toBe(3);
    expect(await tw.jobs.retryFailed("mail")).toBe(0);
    expect((await tw.jobs.counts("mail"))[0]!.counts).toMatchObject({ succeeded: 4, failed: 0, pending: 0 });
  });

  it("cancel turns a pending job into cancelled and it never runs", async () => {
    const { tw, clock } = await engine();
    const ran: unknown[] = [];
    const q = tw.queue("mail", { handler: (job) => void ran.push(job.payload) });
    const keep = await q.enqueue("keep");
    const drop = await q.enqueue("drop", { delay: "5m" });

    await clock.advance("1m");
    const cancelled = await tw.jobs.cancel(drop.id);

    expect(cancelled).toMatchObject({ id: drop.id, status: "cancelled", attempts: 0, finishedAt: T0 + 60_000 });
    await clock.advance("10m");
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: null });
    expect(ran).toEqual(["keep"]);
    expect(await tw.jobs.get(drop.id)).toMatchObject({ status: "cancelled", attempts: 0 });
    expect(await tw.jobs.get(keep.id)).toMatchObject({ status: "succeeded" });
  });

  it("cancelling a succeeded job throws JobStateError and leaves it succeeded", async () => {
    const { tw } = await engine();
    const q = tw.queue("mail", { handler: () => {} });
    const { id } = await q.enqueue({});
    await tw.tick();

    await expect(tw.jobs.cancel(id)).rejects.toBeInstanceOf(JobStateError);
    await expect(tw.jobs.cancel(id)).rejects.toMatchObject({ code: "TW_JOB_STATE", message: expect.stringContaining("succeeded") });
    await expect(tw.jobs.cancel("424242")).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await tw.jobs.get(id)).toMatchObject({ status: "succeeded" });
  });
});
