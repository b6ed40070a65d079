import { describe, expect, it } from "vitest";
import { exponential } from "../../../src/core/backoff.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, T0, engineFor } from "../../support/queue-fixtures.js";

/**
 * Seed 004 (the subscription processor) documents its retry table as 1, 2, 4, 8, 16 minutes after
 * attempts 1 to 5, then FAILED after attempt 6. Its code computes the delay as
 *
 *     delayMs = (BASE_RETRY_DELAY_MS * 2) ^ retryCount
 *
 * and in JavaScript `^` is bitwise XOR, not a power: (60000 * 2) ^ 1 = 120001 ms, ^ 2 = 120002 ms,
 * ^ 3 = 120003 ms... about 2 minutes every time, never doubling. tickwork implements the table the
 * seed meant, with `exponential({ base: "1m", factor: 2 })` and `maxAttempts: 6`.
 */
const BASE_RETRY_DELAY_MS = 60_000;
const seedFormula = (retryCount: number) => (BASE_RETRY_DELAY_MS * 2) ^ retryCount;

describe("seed 004's retry formula (BASE_RETRY_DELAY_MS * 2) ^ retryCount is an XOR in JavaScript", () => {
  it("gives about 2 minutes for every retry instead of doubling", () => {
    expect([1, 2, 3, 4, 5].map(seedFormula)).toEqual([120_001, 120_002, 120_003, 120_004, 120_005]);
    expect([1, 2, 3, 4, 5].map((n) => BASE_RETRY_DELAY_MS * 2 ** (n - 1))).toEqual([1, 2, 4, 8, 16].map((m) => m * MINUTE));
  });
});

describe.each(allStoreCases())("seed 004's intended schedule: 1, 2, 4, 8, 16 minutes, then failed, not the XOR's ~2 minutes ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("maxAttempts 6 with exponential({ base: 1m, factor: 2 }) retries after 1, 2, 4, 8, 16 minutes (not (120000 ^ n) ms) and then fails", async () => {
    const { tw, clock, named } = await engine();
    const startedAt: number[] = [];
    const payments = tw.queue("payments", {
      retry: { maxAttempts: 6, backoff: exponential({ base: "1m", factor: 2 }) },
      handler: () => {
        startedAt.push(clock.now());
        throw new Error("Solana RPC timeout");
      },
    });
    const { id } = await payments.enqueue({ subscriptionId: "abc-123" }, { key: "abc-123:2025-10-29" });

    expect((await tw.tick()).ran).toBe(1);
    let failedAt = T0;
    for (const [n, minutes] of [1, 2, 4, 8, 16].entries()) {
      const due = failedAt + minutes * MINUTE;
      expect((await tw.jobs.get(id))?.runAt).toBe(due);
      // Where the seed's XOR would have retried: about 2 minutes after each failure. Nothing runs there
      // once the real delay has grown past it.
      if (minutes > 2) {
        await clock.set(failedAt + seedFormula(n + 1));
        expect((await tw.tick()).ran).toBe(0);
      }
      await clock.set(due - 1);
      expect((await tw.tick()).ran).toBe(0);
      await clock.advance(1);
      expect((await tw.tick()).ran).toBe(1);
      failedAt = due;
    }

    const gaps = startedAt.slice(1).map((at, i) => (at - startedAt[i]!) / MINUTE);
    expect(gaps).toEqual([1, 2, 4, 8, 16]);
    expect(await tw.jobs.get(id)).toMatchObject({ status: "failed", attempts: 6, maxAttempts: 6, finishedAt: T0 + 31 * MINUTE, lastError: expect.stringContaining("Solana RPC timeout") });
    expect(named("job.retry_scheduled").map((e) => e.delayMs)).toEqual([1, 2, 4, 8, 16].map((m) => m * MINUTE));
    expect(named("job.failed")).toEqual([expect.objectContaining({ queue: "payments", id, attempt: 6 })]);
    expect((await tw.tick()).nextWakeAt).toBeNull();
  });
});
