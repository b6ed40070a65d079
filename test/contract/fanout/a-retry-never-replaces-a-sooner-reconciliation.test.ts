import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { SECOND, enginesFor } from "../../support/schedule-fixtures.js";

describe.each(allStoreCases())("a fan-out's next wake-up ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("is the reconciliation, not the retry, once the backoff step is longer than the reconcile interval", async () => {
    const { tw, clock } = await engines.first();
    const pushes: { target: string; at: number }[] = [];
    const symbols = tw.fanout<string[]>("symbols", {
      reconcile: "90s",
      groups: { alerts: { targets: ["alert-1", "alert-2", "alert-3"] } },
      send: async (target) => {
        pushes.push({ target: target as string, at: clock.now() });
        if (target === "alert-2") throw new Error("alert-2 unreachable");
      },
    });
    const t0 = clock.now();
    await symbols.push(["BTC"]);
    // 30s and 1m come before the 90s reconciliation: they are retries, to the target behind.
    expect((await tw.tick()).nextWakeAt).toBe(t0 + 30 * SECOND);
    expect((await symbols.status()).nextReason).toBe("retry");
    await clock.set(t0 + 30 * SECOND);
    expect((await tw.tick()).nextWakeAt).toBe(t0 + 90 * SECOND);
    expect(await symbols.status()).toMatchObject({ nextReason: "retry", consecutiveFailures: 2 });
    await clock.set(t0 + 90 * SECOND);
    // The third retry would wait 2m; the reconciliation, 90s from now, is sooner and stays first.
    expect((await tw.tick()).nextWakeAt).toBe(t0 + 180 * SECOND);
    expect(await symbols.status()).toMatchObject({ nextReason: "reconcile", nextAt: t0 + 180 * SECOND, consecutiveFailures: 3 });
    expect(pushes.filter((p) => p.target === "alert-2").map((p) => p.at - t0)).toEqual([0, 30 * SECOND, 90 * SECOND]);

    await clock.set(t0 + 180 * SECOND - 1);
    expect((await tw.tick()).outbound.used).toBe(0);
    await clock.set(t0 + 180 * SECOND);
    const reconciled = await tw.tick();
    // A reconciliation goes to every target, and the next one again beats the 5m retry.
    expect(pushes.filter((p) => p.at === t0 + 180 * SECOND).map((p) => p.target).sort()).toEqual(["alert-1", "alert-2", "alert-3"]);
    expect(reconciled.nextWakeAt).toBe(t0 + 270 * SECOND);
    expect(await symbols.status()).toMatchObject({ nextReason: "reconcile", consecutiveFailures: 4 });
  });
});
