import { describe, expect, it } from "vitest";
import { exponential } from "../../../src/core/backoff.js";
import { RetryAfterError } from "../../../src/core/errors.js";
import { PermanentJobError } from "../../../src/queue/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { HOUR, SECOND, T0, engineFor, type Engine } from "../../support/queue-fixtures.js";

/** A queue whose backoff (1h) is far from every retryAfter below, so a match cannot be an accident. */
async function queueFailingOnceWith(engine: Engine, error: () => unknown) {
  const { tw } = engine;
  const attempts: { attempt: number; at: number }[] = [];
  const q = tw.queue("api", {
    retry: { maxAttempts: 5, backoff: exponential({ base: "1h" }) },
    handler: (_job, ctx) => {
      attempts.push({ attempt: ctx.attempt, at: engine.clock.now() });
      if (ctx.attempt === 1) throw error();
    },
  });
  const { id } = await q.enqueue({});
  return { id, attempts };
}

async function expectRetriedExactlyAt(engine: Engine, id: string, attempts: { attempt: number; at: number }[], at: number) {
  const { tw, clock } = engine;
  expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: at });
  expect(await tw.jobs.get(id)).toMatchObject({ status: "pending", attempts: 1, runAt: at });
  await clock.set(at - 1);
  expect((await tw.tick()).ran).toBe(0);
  await clock.advance(1);
  expect((await tw.tick()).ran).toBe(1);
  expect(attempts).toEqual([{ attempt: 1, at: T0 }, { attempt: 2, at }]);
  expect(await tw.jobs.get(id)).toMatchObject({ status: "succeeded", attempts: 2 });
}

describe.each(allStoreCases())("a handler chooses its retry time, or fails for good ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it('RetryAfterError("rate limited", "90s") retries exactly 90 s later, not on the backoff', async () => {
    const e = await engine();
    const { id, attempts } = await queueFailingOnceWith(e, () => new RetryAfterError("rate limited", "90s"));
    await expectRetriedExactlyAt(e, id, attempts, T0 + 90 * SECOND);
    expect(e.named("job.retry_scheduled")).toEqual([expect.objectContaining({ queue: "api", id, attempt: 1, retryAt: T0 + 90 * SECOND, delayMs: 90 * SECOND })]);
  });

  it('RetryAfterError with a Retry-After header\'s delay-seconds, "120", retries 120 s later (not at the year 120, at once)', async () => {
    const e = await engine();
    const { id, attempts } = await queueFailingOnceWith(e, () => new RetryAfterError("rate limited", "120"));
    await expectRetriedExactlyAt(e, id, attempts, T0 + 120 * SECOND);
  });

  it("RetryAfterError with a Retry-After header's HTTP date retries at that date", async () => {
    const e = await engine();
    const at = T0 + 3 * HOUR;
    const { id, attempts } = await queueFailingOnceWith(e, () => new RetryAfterError("rate limited", new Date(at).toUTCString()));
    await expectRetriedExactlyAt(e, id, attempts, at);
  });

  it("any error with a numeric retryAfter (ms) retries that many ms later", async () => {
    const e = await engine();
    const { id, attempts } = await queueFailingOnceWith(e, () => Object.assign(new Error("429 Too Many Requests"), { retryAfter: 12_345 }));
    await expectRetriedExactlyAt(e, id, attempts, T0 + 12_345);
  });

  it("any error with a Date retryAfter retries at that date", async () => {
    const e = await engine();
    const at = T0 + 2 * HOUR + 17 * SECOND;
    const { id, attempts } = await queueFailingOnceWith(e, () => Object.assign(new Error("quota resets later"), { retryAfter: new Date(at) }));
    await expectRetriedExactlyAt(e, id, attempts, at);
  });

  it("PermanentJobError fails the job at once with attempts left, its message kept", async () => {
    const e = await engine();
    const { tw, clock } = e;
    const { id, attempts } = await queueFailingOnceWith(e, () => new PermanentJobError("card number is invalid"));

    expect(await tw.tick()).toMatchObject({ ran: 1, nextWakeAt: null });

    const job = await tw.jobs.get(id);
    expect(job).toMatchObject({ status: "failed", attempts: 1, maxAttempts: 5, finishedAt: T0 });
    expect(job!.lastError).toContain("card number is invalid");
    expect(e.named("job.retry_scheduled")).toEqual([]);
    expect(e.named("job.failed")).toEqual([expect.objectContaining({ queue: "api", id, attempt: 1 })]);
    await clock.advance("1d");
    expect((await tw.tick()).ran).toBe(0);
    expect(attempts).toHaveLength(1);
  });
});
