import { describe, expect, it } from "vitest";
import { InvalidInputError, InvalidPayloadError } from "../../../src/core/errors.js";
import { JobFailedError, JobNotFoundError, JobWaitTimeoutError, PermanentJobError } from "../../../src/queue/errors.js";
import type { Job } from "../../../src/queue/job.js";
import type { Tickwork } from "../../../src/tickwork.js";
import { allStoreCases } from "../../support/stores.js";
import { SECOND, T0, deferred, engineFor } from "../../support/queue-fixtures.js";

/**
 * The one job of `queue`, once its enqueue (started, not awaited) has written it. The tests that tick
 * while a job is awaited write it already awaited (enqueueAndWait): `tw.jobs.wait` marks a job, which
 * locks its row for a moment, and a claim at that moment skips it (SKIP LOCKED) until the next claim,
 * which here is the next tick.
 */
async function written(tw: Tickwork, queue: string): Promise<Job> {
  await expect.poll(async () => (await tw.jobs.list({ queue })).length).toBe(1);
  return (await tw.jobs.list({ queue }))[0]!;
}

describe.each(allStoreCases())("a handler's result is stored with the job and awaited by its caller ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("the return value is job.result; tw.jobs.wait resolves with it, and with null for a handler that returns nothing", async () => {
    const { tw } = await engine();
    const q = tw.queue("charges", { handler: (job) => ((job.payload as { amount: number }).amount ? { charged: (job.payload as { amount: number }).amount, currency: "EUR" } : undefined) });
    // Written already awaited, so no mark races the tick's claim (see written()).
    const waited = q.enqueueAndWait({ amount: 1250 });
    const paid = await written(tw, "charges");
    const none = await q.enqueue({ amount: 0 });
    expect((await tw.tick()).ran).toBe(2);

    await expect(waited).resolves.toEqual({ charged: 1250, currency: "EUR" });
    expect(await tw.jobs.get(paid.id)).toMatchObject({ status: "succeeded", result: { charged: 1250, currency: "EUR" } });
    expect(await tw.jobs.get(none.id)).toMatchObject({ status: "succeeded", result: null });
    // A finished job's wait answers at once.
    await expect(tw.jobs.wait(none.id)).resolves.toBeNull();
  });

  it("jobs that end in one tick keep each its own result, whatever JSON it is", async () => {
    const { tw } = await engine();
    const results: unknown[] = [{ text: 'quote " and \\ backslash, ünïcødé ✓' }, "null", 0, null, [1, [2]], undefined, "", { nested: { deep: [true] } }];
    const q = tw.queue<{ i: number }>("shapes", { concurrency: results.length, handler: (job) => results[job.payload.i] });
    const jobs = await q.enqueueMany(results.map((_, i) => ({ payload: { i } })));
    expect((await tw.tick()).ran).toBe(results.length);

    for (const [i, { id }] of jobs.entries()) {
      // A handler that returns nothing (undefined) or null leaves no result: both read back as null.
      expect(await tw.jobs.get(id)).toMatchObject({ status: "succeeded", result: results[i] ?? null });
    }
  });

  it("enqueueAndWait resolves with the result once the job ran, and a duplicate key waits on the live job", async () => {
    const { tw } = await engine();
    const q = tw.queue("quotes", { handler: (job) => ({ quote: `q-${(job.payload as { n: number }).n}` }) });

    const first = q.enqueueAndWait<{ quote: string }>({ n: 1 }, { key: "acme", timeout: "1m" });
    const second = q.enqueueAndWait<{ quote: string }>({ n: 2 }, { key: "acme" });
    // Both enqueues land before the tick: the second is a duplicate of the first.
    await expect.poll(async () => (await tw.jobs.list({ queue: "quotes" })).length).toBe(1);
    // The duplicate's wait marks the live job, locking its row for a moment; a tick at that moment
    // skips it (see written()), so tick until it ran, once.
    let ran = 0;
    await expect.poll(async () => (ran += (await tw.tick()).ran)).toBe(1);

    await expect(first).resolves.toEqual({ quote: "q-1" });
    await expect(second).resolves.toEqual({ quote: "q-1" });
  });

  it("a job that fails for good or is cancelled rejects its waiters with JobFailedError holding the job", async () => {
    const { tw } = await engine();
    const q = tw.queue("cards", { handler: () => { throw new PermanentJobError("card number is invalid"); } });
    // Written already awaited, so no mark races the tick's claim (see written()).
    const waited = q.enqueueAndWait({}).catch((e: unknown) => e);
    const bad = await written(tw, "cards");
    await tw.tick();
    const error = await waited;
    expect(error).toBeInstanceOf(JobFailedError);
    expect(error).toMatchObject({ code: "TW_JOB_FAILED", job: { id: bad.id, status: "failed" } });
    expect((error as JobFailedError).message).toContain("card number is invalid");

    const later = await q.enqueue({}, { delay: "1h" });
    const cancelledWait = tw.jobs.wait(later.id).catch((e: unknown) => e);
    await tw.jobs.cancel(later.id);
    expect(await cancelledWait).toMatchObject({ code: "TW_JOB_FAILED", job: { status: "cancelled" } });
  });

  it("a wait gives up at its timeout on the engine's clock, and the job goes on", async () => {
    const { tw, clock } = await engine();
    const q = tw.queue("reports", { handler: () => "done" });
    const job = await q.enqueue({}, { delay: "10m" });
    const waited = tw.jobs.wait(job.id, { timeout: "30s" });
    const settled = waited.then(() => "resolved", (e: unknown) => e);

    await clock.advance(30 * SECOND - 1);
    expect(await Promise.race([settled, Promise.resolve("still waiting")])).toBe("still waiting");
    await clock.advance(1);
    const error = await settled;
    expect(error).toBeInstanceOf(JobWaitTimeoutError);
    expect(error).toMatchObject({ code: "TW_WAIT_TIMEOUT", id: job.id });
    expect(await tw.jobs.get(job.id)).toMatchObject({ status: "pending" });
  });

  it("an unknown id is JobNotFoundError, and bad wait options are refused naming the field", async () => {
    const { tw } = await engine();
    const q = tw.queue("reports", { handler: () => "done" });
    await expect(tw.jobs.wait("424242")).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(tw.jobs.wait("x")).rejects.toBeInstanceOf(InvalidInputError);
    await expect(tw.jobs.wait("1", { timeout: "soon" })).rejects.toThrow(/jobs\.wait: timeout/);
    await expect(tw.jobs.wait("1", { timeout: 2 ** 31 })).rejects.toThrow(/timeout must be at most 2147483647/);
    await expect(tw.jobs.wait("1", { onProgress: 5 as never })).rejects.toThrow(/onProgress must be a function/);
    await expect(q.enqueueAndWait({}, { timeout: -1 })).rejects.toThrow(/enqueueAndWait: timeout/);
    await expect(q.enqueueAndWait({}, { tx: {} } as never)).rejects.toThrow(/tx is not supported/);
    await expect(q.enqueueAndWait({ big: 10n })).rejects.toBeInstanceOf(InvalidPayloadError);
    expect(await tw.jobs.counts()).toEqual([]);
  });

  it("a result larger than maxResultBytes, or not JSON, fails the attempt with an error that says so", async () => {
    const { tw } = await engine();
    const big = tw.queue("big", { maxResultBytes: 1024, retry: { maxAttempts: 1 }, handler: () => ({ blob: "é".repeat(600) }) });
    const odd = tw.queue("odd", { retry: { maxAttempts: 1 }, handler: () => ({ total: 10n }) });
    const fits = tw.queue("fits", { maxResultBytes: 1024, handler: () => ({ blob: "e".repeat(1000) }) });
    const [a, b, c] = [await big.enqueue({}), await odd.enqueue({}), await fits.enqueue({})];
    await tw.tick();

    expect(await tw.jobs.get(a.id)).toMatchObject({ status: "failed", result: null, lastError: expect.stringMatching(/ResultTooLargeError: the job's result is 1211 bytes as JSON, over the queue's maxResultBytes of 1024/) });
    expect(await tw.jobs.get(b.id)).toMatchObject({ status: "failed", lastError: expect.stringContaining("the job's result is not JSON-serialisable") });
    expect(await tw.jobs.get(c.id)).toMatchObject({ status: "succeeded", result: { blob: "e".repeat(1000) } });
  });

  it("maxResultBytes and maxSnoozes are bounded when the queue is declared", async () => {
    const { tw } = await engine();
    expect(() => tw.queue("a", { maxResultBytes: 0 })).toThrow(/maxResultBytes/);
    expect(() => tw.queue("b", { maxResultBytes: 1024 * 1024 + 1 })).toThrow(/maxResultBytes/);
    expect(() => tw.queue("c", { maxSnoozes: -1 })).toThrow(/maxSnoozes/);
    expect(() => tw.queue("d", { maxSnoozes: 1.5 })).toThrow(/maxSnoozes/);
  });

  it("a handler's progress is written at once, then at most once a second, the last value before the job settles; waiters hear each value", async () => {
    const { tw, clock } = await engine();
    const step = deferred();
    const more = deferred();
    const q = tw.queue("imports", {
      handler: async (_job, ctx) => {
        ctx.progress({ done: 1 });
        await step.promise;
        ctx.progress({ done: 2 });
        await more.promise;
        ctx.progress({ done: 3 });
        ctx.progress({ done: 4, of: 4 });
        return "imported";
      },
    });
    const heard: unknown[] = [];
    // Written already awaited, so no mark races the tick's claim (see written()).
    const waited = q.enqueueAndWait({}, { onProgress: (p) => heard.push(p) });
    const job = await written(tw, "imports");
    const ticked = tw.tick();

    await expect.poll(async () => (await tw.jobs.get(job.id))?.progress).toEqual({ done: 1 });
    step.resolve();
    await expect.poll(() => heard.length).toBe(2);
    // Within the second after the first write: not written yet.
    expect((await tw.jobs.get(job.id))?.progress).toEqual({ done: 1 });
    await clock.advance(SECOND);
    await expect.poll(async () => (await tw.jobs.get(job.id))?.progress).toEqual({ done: 2 });
    more.resolve();
    await ticked;

    await expect(waited).resolves.toBe("imported");
    expect(heard).toEqual([{ done: 1 }, { done: 2 }, { done: 3 }, { done: 4, of: 4 }]);
    expect(await tw.jobs.get(job.id)).toMatchObject({ status: "succeeded", progress: { done: 4, of: 4 }, finishedAt: T0 + SECOND });
  });

  it("a progress value that is not JSON is refused and logged, and the job goes on", async () => {
    const e = await engine();
    const q = e.tw.queue("imports", { handler: (_job, ctx) => { ctx.progress({ n: 10n }); return "ok"; } });
    const job = await q.enqueue({});
    await e.tw.tick();
    expect(await e.tw.jobs.get(job.id)).toMatchObject({ status: "succeeded", progress: null, result: "ok" });
    expect(e.named("job.progress_refused")).toEqual([expect.objectContaining({ queue: "imports", id: job.id, error: expect.stringContaining("progress is not JSON-serialisable") })]);
  });
});
