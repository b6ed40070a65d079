import { describe, expect, it } from "vitest";
import { schedule } from "../../../src/core/backoff.js";
import { allStoreCases } from "../../support/stores.js";
import { SECOND, enginesFor, until } from "../../support/schedule-fixtures.js";

/**
 * A retry is due its backoff after the send failed, not after the pass began: in a pass whose sends
 * take 9 s, a 2 s retry timed from the pass's start is overdue before it is written, and with the
 * 30 s send timeout a 1 m retry would come 30 s early.
 */
describe.each(allStoreCases())("a failed delivery's retry ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("is due the backoff after its own failure, for a fast failure, a slow one and a timeout in one pass", async () => {
    const { tw, clock, named } = await engines.first();
    const calls: string[] = [];
    const callbacks = tw.delivery<string>("callbacks", {
      retry: schedule(["2s", "1m"]),
      timeout: "30s",
      send: async (m) => {
        calls.push(m.payload);
        // Refused after 9 s on the engine's clock.
        if (m.payload === "slow") return new Promise((_, reject) => clock.setTimeout(() => reject(new Error("slow refusal")), 9 * SECOND));
        if (m.payload === "hangs") return new Promise(() => {});
        throw new Error("fast refusal");
      },
    });
    const t0 = clock.now();
    await callbacks.emit([
      { key: "fast", payload: "fast" },
      { key: "slow", payload: "slow" },
      { key: "hangs", payload: "hangs" },
    ]);
    const ticking = tw.tick();
    await until(() => calls.length === 3, "the three sends");
    await clock.advance(30 * SECOND);
    const result = await ticking;

    const runAt = Object.fromEntries((await callbacks.outstanding()).map((o) => [o.key, o.runAt - t0]));
    expect(runAt).toEqual({ fast: 2 * SECOND, slow: 9 * SECOND + 2 * SECOND, hangs: 30 * SECOND + 2 * SECOND });
    // The tick wakes for the soonest of them, which is already due: it failed 28 s ago.
    expect(result.nextWakeAt).toBe(t0 + 2 * SECOND);
    const failed = Object.fromEntries(named("delivery.failed").map((e) => [e.key, { failedAt: Number(e.failedAt) - t0, retryAt: Number(e.retryAt) - t0 }]));
    expect(failed).toEqual({
      fast: { failedAt: 0, retryAt: 2 * SECOND },
      slow: { failedAt: 9 * SECOND, retryAt: 11 * SECOND },
      hangs: { failedAt: 30 * SECOND, retryAt: 32 * SECOND },
    });

  });
});
