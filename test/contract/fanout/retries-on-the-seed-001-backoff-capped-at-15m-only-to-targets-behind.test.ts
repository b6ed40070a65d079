import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, SECOND, enginesFor } from "../../support/schedule-fixtures.js";

/** Seed 001: 30s, 1m, 2m, 5m, 15m, then 15m from there on. */
const BACKOFF = [30 * SECOND, MINUTE, 2 * MINUTE, 5 * MINUTE, 15 * MINUTE, 15 * MINUTE, 15 * MINUTE];

describe.each(allStoreCases())("a fan-out with a failing target ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  async function setUp() {
    const engine = await engines.first();
    const down = new Set(["alert-2"]);
    const pushes: { target: string; version: number; at: number }[] = [];
    const symbols = engine.tw.fanout<string[]>("symbols", {
      reconcile: false,
      groups: { collectors: { targets: ["collector-1"] }, alerts: { targets: ["alert-1", "alert-2"] } },
      send: async (target, _payload, ctx) => {
        pushes.push({ target: target as string, version: ctx.version, at: engine.clock.now() });
        if (down.has(target as string)) throw new Error(`${String(target)} unreachable`);
      },
    });
    return { ...engine, down, pushes, symbols };
  }

  it("retries only the target behind at 30s, 1m, 2m, 5m, 15m and every 15m after, never earlier; a success resets the count", async () => {
    const { tw, clock, down, pushes, symbols, named } = await setUp();
    const t0 = clock.now();
    await symbols.push(["BTC"]);
    expect((await tw.tick()).nextWakeAt).toBe(t0 + BACKOFF[0]!);
    expect(pushes.map((p) => p.target).sort()).toEqual(["alert-1", "alert-2", "collector-1"]);

    let due = t0;
    for (const [i, step] of BACKOFF.entries()) {
      due += step;
      await clock.set(due - 1);
      expect((await tw.tick()).outbound.used, `nothing before retry ${i + 1}`).toBe(0);
      await clock.set(due);
      const result = await tw.tick();
      expect(pushes.at(-1), `retry ${i + 1}`).toEqual({ target: "alert-2", version: 1, at: due });
      expect(result.outbound.used).toBe(1);
      const next = BACKOFF[i + 1] ?? 15 * MINUTE;
      expect(result.nextWakeAt, `after retry ${i + 1}`).toBe(due + next);
      expect((await symbols.status()).consecutiveFailures).toBe(i + 2);
    }
    expect(pushes).toHaveLength(3 + BACKOFF.length);
    expect(named("fanout.retry_scheduled").map((e) => Number(e.retryAt) - clock.now()).at(-1)).toBe(15 * MINUTE);

    // Back: the next retry converges, the counter resets, and the next failure starts over at 30s.
    down.clear();
    due += 15 * MINUTE;
    await clock.set(due);
    expect((await tw.tick()).nextWakeAt).toBeNull();
    expect(await symbols.status()).toMatchObject({ converged: true, consecutiveFailures: 0, lastError: null, lastSuccessAt: due });

    down.add("collector-1");
    await symbols.push(["BTC", "ETH"]);
    expect((await tw.tick()).nextWakeAt).toBe(due + 30 * SECOND);
    expect((await symbols.status()).consecutiveFailures).toBe(1);
  });

  it("sends a new push during the backoff at once to every target, not at the retry time", async () => {
    const { tw, clock, pushes, symbols } = await setUp();
    const t0 = clock.now();
    await symbols.push(["BTC"]);
    await tw.tick();
    await clock.set(t0 + 30 * SECOND);
    await tw.tick();
    // Backing off for a minute now; the state changes 10 seconds in.
    await clock.advance("10s");
    pushes.length = 0;
    expect(await symbols.push(["BTC", "SOL"])).toEqual({ version: 2, changed: true });
    await tw.tick();
    expect(pushes.map((p) => [p.target, p.version, p.at]).sort()).toEqual([
      ["alert-1", 2, t0 + 40 * SECOND],
      ["alert-2", 2, t0 + 40 * SECOND],
      ["collector-1", 2, t0 + 40 * SECOND],
    ]);
    const status = await symbols.status();
    expect(status.targets.filter((t) => t.behind).map((t) => t.id)).toEqual(["alert-2"]);
    expect(status.targets.find((t) => t.id === "alert-1")!.version).toBe(2);
  });
});
