import { describe, expect, it } from "vitest";
import { exponential, schedule } from "../../../src/core/backoff.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, SECOND, T0, engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("retries on the backoff, then fails ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("fails twice then succeeds on attempt 3, each retry due exactly after exponential({ base: 1s, factor: 2 })", async () => {
    const { tw, clock } = await engine();
    const calls: { attempt: number; at: number }[] = [];
    const q = tw.queue("sync", {
      retry: { maxAttempts: 5, backoff: exponential({ base: "1s", factor: 2 }) },
      handler: (_job, ctx) => {
        calls.push({ attempt: ctx.attempt, at: clock.now() });
        if (ctx.attempt < 3) throw new Error(`upstream 503 on attempt ${ctx.attempt}`);
      },
    });
    const { id } = await q.enqueue({});

    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: T0 + 1 * SECOND });
    expect(await tw.jobs.get(id)).toMatchObject({ status: "pending", attempts: 1, runAt: T0 + SECOND, lastError: expect.stringContaining("upstream 503 on attempt 1") });

    // First retry: 1s after the first failure.
    await clock.set(T0 + SECOND - 1);
    expect((await tw.tick()).ran).toBe(0);
    await clock.advance(1);
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: T0 + 3 * SECOND });
    expect(await tw.jobs.get(id)).toMatchObject({ status: "pending", attempts: 2, runAt: T0 + 3 * SECOND, lastError: expect.stringContaining("upstream 503 on attempt 2") });

    // Second retry: 2s after the second failure.
    await clock.set(T0 + 3 * SECOND - 1);
    expect((await tw.tick()).ran).toBe(0);
    await clock.advance(1);
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: null });

    expect(calls).toEqual([
      { attempt: 1, at: T0 },
      { attempt: 2, at: T0 + SECOND },
      { attempt: 3, at: T0 + 3 * SECOND },
    ]);
    expect(await tw.jobs.get(id)).toMatchObject({ status: "succeeded", attempts: 3, finishedAt: T0 + 3 * SECOND, startedAt: T0 + 3 * SECOND });
  });

  it("schedule([1m, 5m]) ends retries after its last step even though maxAttempts is 10", async () => {
    const { tw, clock } = await engine();
    const attempts: number[] = [];
    const q = tw.queue("sync", {
      retry: { maxAttempts: 10, backoff: schedule(["1m", "5m"]) },
      handler: (_job, ctx) => {
        attempts.push(ctx.attempt);
        throw new Error("still down");
      },
    });
    const { id } = await q.enqueue({});

    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: T0 + MINUTE });
    await clock.set(T0 + MINUTE - 1);
    expect((await tw.tick()).ran).toBe(0);
    await clock.advance(1);
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: T0 + 6 * MINUTE });
    await clock.set(T0 + 6 * MINUTE - 1);
    expect((await tw.tick()).ran).toBe(0);
    await clock.advance(1);
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: null });

    expect(attempts).toEqual([1, 2, 3]);
    expect(await tw.jobs.get(id)).toMatchObject({ status: "failed", attempts: 3, maxAttempts: 10, finishedAt: T0 + 6 * MINUTE, lastError: expect.stringContaining("still down") });
    await clock.advance("1d");
    expect((await tw.tick()).ran).toBe(0);
  });

  it("a function backoff gets the number of failures so far and its delays are used as given", async () => {
    const { tw, clock } = await engine();
    const asked: number[] = [];
    const q = tw.queue("sync", {
      retry: {
        maxAttempts: 4,
        backoff: (failures) => {
          asked.push(failures);
          return failures * 7 * SECOND + 3;
        },
      },
      handler: (_job, ctx) => {
        if (ctx.attempt < 4) throw new Error("nope");
      },
    });
    const { id } = await q.enqueue({});

    expect((await tw.tick()).nextWakeAt).toBe(T0 + 7 * SECOND + 3);
    await clock.set(T0 + 7 * SECOND + 2);
    expect((await tw.tick()).ran).toBe(0);
    await clock.advance(1);
    const second = T0 + 7 * SECOND + 3;
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: second + 14 * SECOND + 3 });
    const third = second + 14 * SECOND + 3;
    await clock.set(third);
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: third + 21 * SECOND + 3 });
    await clock.set(third + 21 * SECOND + 3);
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: null });

    expect(asked).toEqual([1, 2, 3]);
    expect(await tw.jobs.get(id)).toMatchObject({ status: "succeeded", attempts: 4 });
  });

  it("after maxAttempts the job is failed (dead), with the last error kept and attempts = maxAttempts", async () => {
    const { tw, clock, named } = await engine();
    const q = tw.queue("sync", {
      retry: { maxAttempts: 3, backoff: exponential({ base: "1s", factor: 2 }) },
      handler: (_job, ctx) => {
        throw new Error(`gateway refused (attempt ${ctx.attempt})`);
      },
    });
    const { id } = await q.enqueue({ invoice: 42 });

    await tw.tick();
    await clock.advance("1s");
    await tw.tick();
    await clock.advance("2s");
    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: null });

    const job = await tw.jobs.get(id);
    expect(job).toMatchObject({ status: "failed", attempts: 3, maxAttempts: 3, finishedAt: T0 + 3 * SECOND, payload: { invoice: 42 } });
    expect(job!.lastError).toContain("gateway refused (attempt 3)");
    expect(named("job.retry_scheduled").map((e) => e.attempt)).toEqual([1, 2]);
    expect(named("job.failed")).toEqual([expect.objectContaining({ queue: "sync", id, attempt: 3, maxAttempts: 3, error: expect.stringContaining("gateway refused (attempt 3)") })]);

    // Dead means dead: no clock movement brings it back.
    await clock.advance("13d"); // within the failed retention (14 days)
    expect((await tw.tick()).ran).toBe(0);
    expect((await tw.jobs.list({ queue: "sync", status: "failed" })).map((j) => j.id)).toEqual([id]);
  });
});
