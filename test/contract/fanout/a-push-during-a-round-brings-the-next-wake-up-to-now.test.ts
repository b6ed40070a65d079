import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, SECOND, deferred, enginesFor, until } from "../../support/schedule-fixtures.js";

/**
 * A new state pushed while a round is in flight is stored as due at once, and the round's end keeps
 * that wake-up. `tick().nextWakeAt` must say so too: code that sleeps until it (a Durable Object's
 * alarm) would otherwise send the new state only at the round's retry or reconciliation.
 */
describe.each(allStoreCases())("a push made while a fan-out round is in flight ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  for (const outcome of ["fails", "succeeds"] as const) {
    it(`is the tick's next wake-up when the round ${outcome} (not its ${outcome === "fails" ? "30 s retry" : "15 min reconciliation"})`, async () => {
      const { tw, clock } = await engines.first();
      const held = deferred();
      const pushes: { target: string; payload: unknown; at: number }[] = [];
      let holding = true;
      const symbols = tw.fanout<string[]>("symbols", {
        groups: { alerts: { targets: ["alert-1", "alert-2"] } },
        send: async (target, payload) => {
          pushes.push({ target: target as string, payload, at: clock.now() });
          if (target === "alert-2" && holding) {
            await held.promise;
            if (outcome === "fails") throw new Error("alert-2 refused");
          }
        },
      });
      const t0 = clock.now();
      await symbols.push(["BTC"]);
      const ticking = tw.tick();
      await until(() => pushes.length === 2, "both pushes of the first round");
      await clock.advance(5 * SECOND);
      // The round holds its lease; the new state waits for it, due now.
      expect(await symbols.push(["BTC", "ETH"])).toEqual({ version: 2, changed: true });
      holding = false;
      held.resolve();
      const result = await ticking;

      expect(result.nextWakeAt).toBe(t0 + 5 * SECOND);
      expect(await symbols.status()).toMatchObject({ version: 2, nextAt: t0 + 5 * SECOND, nextReason: "push" });
      // And the wake-up it names delivers the new state to both targets.
      const next = await tw.tick();
      expect(pushes.slice(2).map((p) => [p.target, p.payload])).toEqual([
        ["alert-1", ["BTC", "ETH"]],
        ["alert-2", ["BTC", "ETH"]],
      ]);
      expect(next.nextWakeAt).toBe(t0 + 5 * SECOND + 15 * MINUTE);
      expect(await symbols.status()).toMatchObject({ version: 2, converged: true });
    });
  }

  it("keeps a reconciliation asked for while a round is in flight, rather than the round's own next wake-up", async () => {
    const { tw, clock } = await engines.first();
    const held = deferred();
    const pushes: { target: string; at: number }[] = [];
    let holding = true;
    const symbols = tw.fanout<string[]>("symbols", {
      groups: { alerts: { targets: ["alert-1", "alert-2"] } },
      send: async (target) => {
        pushes.push({ target: target as string, at: clock.now() });
        if (target === "alert-2" && holding) await held.promise;
      },
    });
    const t0 = clock.now();
    await symbols.push(["BTC"]);
    const ticking = tw.tick();
    await until(() => pushes.length === 2, "both pushes of the first round");
    await clock.advance(5 * SECOND);
    await symbols.reconcileNow();
    holding = false;
    held.resolve();
    expect((await ticking).nextWakeAt).toBe(t0 + 5 * SECOND);
    expect(await symbols.status()).toMatchObject({ nextAt: t0 + 5 * SECOND, nextReason: "reconcile" });
    await tw.tick();
    expect(pushes.filter((p) => p.at === t0 + 5 * SECOND).map((p) => p.target).sort()).toEqual(["alert-1", "alert-2"]);
  });
});
