import { describe, expect, it } from "vitest";
import { exponential } from "../../../src/core/backoff.js";
import { allStoreCases } from "../../support/stores.js";
import { SECOND, T0, engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("handlers see their attempt, and retries and failures are logged ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("ctx.attempt equals job.attempts on every attempt", async () => {
    const { tw, clock } = await engine();
    const seen: [number, number][] = [];
    const q = tw.queue("hooks", {
      retry: { maxAttempts: 4, backoff: exponential({ base: "1s" }) },
      handler: (job, ctx) => {
        seen.push([ctx.attempt, job.attempts]);
        if (ctx.attempt < 4) throw new Error("again");
      },
    });
    await q.enqueue({});

    await tw.tick();
    for (const wait of ["1s", "2s", "4s"]) {
      await clock.advance(wait);
      await tw.tick();
    }

    expect(seen).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
  });

  it("job.retry_scheduled carries queue, id, attempt and retryAt; job.failed carries queue, id, attempt and the error", async () => {
    const { tw, clock, named } = await engine();
    const q = tw.queue("hooks", {
      retry: { maxAttempts: 3, backoff: exponential({ base: "1s", factor: 3 }) },
      handler: (_job, ctx) => {
        throw new Error(`endpoint returned 500 (attempt ${ctx.attempt})`);
      },
    });
    const { id } = await q.enqueue({ url: "https://example.com/hook" });

    await tw.tick();
    // Each retryAt is the runAt the store holds for the next attempt.
    expect(await tw.jobs.get(id)).toMatchObject({ status: "pending", runAt: T0 + SECOND });
    await clock.advance("1s");
    await tw.tick();
    expect(await tw.jobs.get(id)).toMatchObject({ status: "pending", runAt: T0 + 4 * SECOND });
    await clock.advance("3s");
    await tw.tick();

    expect(named("job.retry_scheduled")).toEqual([
      expect.objectContaining({ level: "warn", time: T0, queue: "hooks", id, attempt: 1, maxAttempts: 3, retryAt: T0 + SECOND, delayMs: SECOND, error: expect.stringContaining("(attempt 1)") }),
      expect.objectContaining({ level: "warn", time: T0 + SECOND, queue: "hooks", id, attempt: 2, maxAttempts: 3, retryAt: T0 + 4 * SECOND, delayMs: 3 * SECOND, error: expect.stringContaining("(attempt 2)") }),
    ]);
    expect(named("job.failed")).toEqual([
      expect.objectContaining({ level: "error", time: T0 + 4 * SECOND, queue: "hooks", id, attempt: 3, attempts: 3, maxAttempts: 3, error: expect.stringContaining("(attempt 3)") }),
    ]);
    expect(await tw.jobs.get(id)).toMatchObject({ status: "failed", attempts: 3, finishedAt: T0 + 4 * SECOND });
  });
});
