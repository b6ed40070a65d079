import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, SECOND, enginesFor } from "../../support/schedule-fixtures.js";

/** Seed 001's 77 receivers: 7 PriceCollectors and 70 PriceAlerts. */
const collectors = Array.from({ length: 7 }, (_, i) => `collector-${i}`);
const alerts = Array.from({ length: 70 }, (_, i) => `alert-${String(i).padStart(2, "0")}`);

describe.each(allStoreCases())("a fan-out with more targets than the tick budget ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  async function setUp(down = new Set<string>()) {
    const engine = await engines.first({ tickBudget: 30 });
    const pushes: { target: string; version: number; at: number }[] = [];
    const symbols = engine.tw.fanout<string[]>("symbols", {
      groups: { collectors: { targets: collectors }, alerts: { targets: alerts, project: (s) => s.length } },
      send: async (target, _payload, ctx) => {
        pushes.push({ target: target as string, version: ctx.version, at: engine.clock.now() });
        if (down.has(target as string)) throw new Error(`${String(target)} unreachable`);
      },
    });
    return { ...engine, pushes, symbols, down };
  }

  it("pushes at most the budget per tick and carries the rest with a 100 ms wake-up, each target once", async () => {
    const { tw, clock, pushes, symbols } = await setUp();
    await symbols.push(["BTC"]);
    const used: number[] = [];
    for (;;) {
      const result = await tw.tick();
      used.push(result.outbound.used);
      if (!result.carried) break;
      expect(result.nextWakeAt).toBe(clock.now() + 100);
      await clock.advance(100);
    }
    expect(used).toEqual([30, 30, 17]);
    expect(new Set(pushes.map((p) => p.target)).size).toBe(77);
    expect(pushes).toHaveLength(77);
    expect(await symbols.status()).toMatchObject({ converged: true, consecutiveFailures: 0 });
  });

  it("reaches every target in a reconciliation, each once, though each tick holds only 30", async () => {
    const { tw, clock, pushes, symbols } = await setUp();
    const t0 = clock.now();
    await symbols.push(["BTC"]);
    for (let i = 0; i < 3; i++) {
      await tw.tick();
      await clock.advance(100);
    }
    pushes.length = 0;
    await clock.set(t0 + 15 * MINUTE + 300);
    const used: number[] = [];
    for (let i = 0; i < 10; i++) {
      const result = await tw.tick();
      used.push(result.outbound.used);
      if (!result.carried) break;
      await clock.advance(100);
    }
    expect(used).toEqual([30, 30, 17]);
    expect(pushes).toHaveLength(77);
    expect(new Set(pushes.map((p) => p.target)).size).toBe(77);
    expect((await symbols.status()).nextReason).toBe("reconcile");
  });

  it("does not let targets that keep failing hold the budget from the others; the round's failures schedule a retry", async () => {
    // The first 30 targets in order are down: a round that started over at each carried tick would never get past them.
    const { tw, clock, pushes, symbols } = await setUp(new Set([...collectors, ...alerts.slice(0, 23)]));
    const t0 = clock.now();
    await symbols.push(["BTC"]);
    const used: number[] = [];
    let last;
    for (let i = 0; i < 10; i++) {
      last = await tw.tick();
      used.push(last.outbound.used);
      if (!last.carried) break;
      await clock.advance(100);
    }
    expect(used).toEqual([30, 30, 17]);
    expect(new Set(pushes.map((p) => p.target)).size).toBe(77);
    const status = await symbols.status();
    expect(status.targets.filter((t) => t.behind)).toHaveLength(30);
    expect(status).toMatchObject({ consecutiveFailures: 1, nextReason: "retry" });
    expect(last!.nextWakeAt).toBe(t0 + 200 + 30 * SECOND);
    expect(status.lastError).toMatch(/30 of 77 pushes failed/);
  });
});
