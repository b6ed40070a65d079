import { describe, expect, it } from "vitest";
import { JobNotFoundError, JobStateError, SnoozeError } from "../../../src/queue/errors.js";
import { RateLimitedError } from "../../../src/http/errors.js";
import { LEASE_EXPIRED_ERROR } from "../../../src/queue/store/rows.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, SECOND, T0, engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("a snoozed job comes back later without spending an attempt, and every attempt is kept ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it('throw new SnoozeError("2m") puts the job back 2 minutes later, attempts unspent, the snooze counted, logged and kept in its history', async () => {
    const e = await engine();
    const { tw, clock } = e;
    const seen: number[] = [];
    const q = tw.queue("payouts", {
      retry: { maxAttempts: 1 },
      handler: (_job, ctx) => {
        seen.push(ctx.attempt);
        if (seen.length === 1) throw new SnoozeError("2m");
        return "paid";
      },
    });
    const job = await q.enqueue({});

    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: T0 + 2 * MINUTE });
    expect(await tw.jobs.get(job.id)).toMatchObject({
      status: "pending", attempts: 0, snoozes: 1, runAt: T0 + 2 * MINUTE, startedAt: null,
      history: [{ attempt: 1, startedAt: T0, finishedAt: T0, outcome: "snoozed", error: null }],
    });
    expect(e.named("job.snoozed")).toEqual([expect.objectContaining({ queue: "payouts", id: job.id, attempt: 1, snoozes: 1, maxSnoozes: 100, runAt: T0 + 2 * MINUTE })]);

    await clock.set(T0 + 2 * MINUTE);
    expect((await tw.tick()).ran).toBe(1);
    // maxAttempts 1, and still it ran: the snooze spent nothing.
    expect(seen).toEqual([1, 1]);
    expect(await tw.jobs.get(job.id)).toMatchObject({
      status: "succeeded", attempts: 1, result: "paid",
      history: [
        { attempt: 1, outcome: "snoozed", finishedAt: T0 },
        { attempt: 1, startedAt: T0 + 2 * MINUTE, finishedAt: T0 + 2 * MINUTE, outcome: "succeeded", error: null },
      ],
    });
  });

  it("return ctx.snooze(\"30s\") is the same decision, and past maxSnoozes a snooze fails the attempt", async () => {
    const { tw, clock } = await engine();
    const q = tw.queue("polls", { maxSnoozes: 2, retry: { maxAttempts: 1 }, handler: (_job, ctx) => ctx.snooze("30s") });
    const job = await q.enqueue({});

    for (let n = 1; n <= 2; n++) {
      expect((await tw.tick()).ran).toBe(1);
      expect(await tw.jobs.get(job.id)).toMatchObject({ status: "pending", snoozes: n, attempts: 0, runAt: T0 + n * 30 * SECOND });
      await clock.advance("30s");
    }
    expect((await tw.tick()).ran).toBe(1);
    const failed = await tw.jobs.get(job.id);
    expect(failed).toMatchObject({ status: "failed", snoozes: 2, attempts: 1, lastError: expect.stringContaining("SnoozeLimitError: the job snoozed 2 times, its queue's maxSnoozes") });
    expect(failed!.history.map((a) => a.outcome)).toEqual(["snoozed", "snoozed", "failed"]);
  });

  it("an upstream's 429 (the HTTP client's RateLimitedError) snoozes until its Retry-After instead of spending attempts", async () => {
    const { tw, clock } = await engine();
    let calls = 0;
    const q = tw.queue("sync", {
      retry: { maxAttempts: 2 },
      handler: () => {
        calls++;
        if (calls <= 3) {
          throw new RateLimitedError({ method: "POST", url: "http://127.0.0.1/api", attempts: 1, requestId: null, status: 429, body: "", rateLimit: null, retryAfter: new Date(clock.now() + 45 * SECOND) });
        }
        return "synced";
      },
    });
    const job = await q.enqueue({});
    for (let n = 1; n <= 3; n++) {
      expect((await tw.tick()).ran).toBe(1);
      expect(await tw.jobs.get(job.id)).toMatchObject({ status: "pending", attempts: 0, snoozes: n, runAt: T0 + n * 45 * SECOND });
      await clock.advance("45s");
    }
    expect((await tw.tick()).ran).toBe(1);
    expect(await tw.jobs.get(job.id)).toMatchObject({ status: "succeeded", attempts: 1, snoozes: 3, result: "synced" });
  });

  it("a job that failed twice, then succeeded, shows three attempts with their errors; a retried dead job keeps its last attempt", async () => {
    const { tw, clock } = await engine();
    let fail = 2;
    const q = tw.queue("exports", {
      retry: { maxAttempts: 3, backoff: () => 10 * SECOND },
      handler: () => {
        if (fail-- > 0) throw new Error(`upstream 503 #${2 - fail}`);
      },
    });
    const job = await q.enqueue({});
    for (let n = 0; n < 3; n++) {
      await tw.tick();
      await clock.advance("10s");
    }
    const done = await tw.jobs.get(job.id);
    expect(done!.history).toEqual([
      { attempt: 1, startedAt: T0, finishedAt: T0, outcome: "failed", error: expect.stringContaining("upstream 503 #1") },
      { attempt: 2, startedAt: T0 + 10 * SECOND, finishedAt: T0 + 10 * SECOND, outcome: "failed", error: expect.stringContaining("upstream 503 #2") },
      { attempt: 3, startedAt: T0 + 20 * SECOND, finishedAt: T0 + 20 * SECOND, outcome: "succeeded", error: null },
    ]);

    const dead = tw.queue("dead", { retry: { maxAttempts: 1 }, handler: () => { throw new Error("no such account"); } });
    const d = await dead.enqueue({});
    await tw.tick();
    const retried = await tw.jobs.retry(d.id);
    expect(retried.history).toEqual([{ attempt: 1, startedAt: T0 + 30 * SECOND, finishedAt: T0 + 30 * SECOND, outcome: "failed", error: expect.stringContaining("no such account") }]);
  });

  it("a lapsed lease is kept in the history as lease_expired, and the history keeps the last 20 attempts before the current one", async () => {
    const { tw, clock } = await engine();
    const q = tw.queue("long", { lease: "5s", maxSnoozes: 100, handler: (_job, ctx) => ctx.snooze("1s") });
    const job = await q.enqueue({});
    // Another engine claims it and dies: its lease lapses and this engine's rescue takes it back.
    const [claimed] = await tw.store.queue.claimDue({ queue: "long", limit: 1, now: T0, leaseUntil: T0 + 5 * SECOND, workerId: "dead-engine" });
    expect(claimed).toBeDefined();
    await clock.advance("6s");
    await tw.tick();
    const rescued = await tw.jobs.get(job.id);
    expect(rescued!.history[0]).toEqual({ attempt: 1, startedAt: T0, finishedAt: T0 + 6 * SECOND, outcome: "lease_expired", error: LEASE_EXPIRED_ERROR });

    for (let n = 0; n < 25; n++) {
      await tw.tick();
      await clock.advance("1s");
    }
    const long = await tw.jobs.get(job.id);
    expect(long!.snoozes).toBeGreaterThanOrEqual(25);
    expect(long!.history).toHaveLength(20);
    expect(long!.history.every((a) => a.outcome === "snoozed")).toBe(true);
  });

  it("jobs.promote runs a job scheduled for later now; a running or finished job cannot be promoted", async () => {
    const { tw } = await engine();
    const q = tw.queue("mail", { handler: () => "sent" });
    const later = await q.enqueue({}, { delay: "1h" });
    expect((await tw.tick()).ran).toBe(0);

    expect(await tw.jobs.promote(later.id)).toMatchObject({ id: later.id, status: "pending", runAt: T0 });
    expect((await tw.tick()).ran).toBe(1);
    await expect(tw.jobs.promote(later.id)).rejects.toBeInstanceOf(JobStateError);
    await expect(tw.jobs.promote(later.id)).rejects.toThrow(/is succeeded; only a pending job can be promoted/);
    await expect(tw.jobs.promote("999999")).rejects.toBeInstanceOf(JobNotFoundError);
  });

  it("jobs.list tells jobs due now from those scheduled for later, and filters by attempts", async () => {
    const { tw, clock } = await engine();
    const q = tw.queue("mail", { retry: { maxAttempts: 3, backoff: () => MINUTE }, handler: (job) => { if ((job.payload as { fail?: boolean }).fail) throw new Error("bounce"); } });
    const flaky = await q.enqueue({ fail: true });
    await tw.tick();
    const due = await q.enqueue({ n: 1 });
    const later = await q.enqueue({ n: 2 }, { delay: "1h" });
    await clock.advance("1m");

    expect((await tw.jobs.list({ queue: "mail", due: true })).map((j) => j.id)).toEqual([due.id, flaky.id]);
    expect((await tw.jobs.list({ queue: "mail", due: false })).map((j) => j.id)).toEqual([later.id]);
    expect((await tw.jobs.list({ queue: "mail", minAttempts: 1 })).map((j) => j.id)).toEqual([flaky.id]);
    await expect(tw.jobs.list({ due: true, status: "failed" })).rejects.toThrow(/due applies to pending jobs/);
    await expect(tw.jobs.list({ due: "yes" as never })).rejects.toThrow(/due must be true/);
    await expect(tw.jobs.list({ minAttempts: -1 })).rejects.toThrow(/minAttempts/);
  });
});
