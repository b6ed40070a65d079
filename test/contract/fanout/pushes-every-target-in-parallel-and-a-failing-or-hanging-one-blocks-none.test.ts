import { describe, expect, it } from "vitest";
import { CallTimeoutError } from "../../../src/core/errors.js";
import type { PushContext } from "../../../src/fanout/options.js";
import { allStoreCases } from "../../support/stores.js";
import { SECOND, deferred, enginesFor } from "../../support/schedule-fixtures.js";

interface Symbol {
  symbol: string;
  ticker: string;
  decimals: number;
  priceScale: number;
}

const SYMBOLS: Symbol[] = [
  { symbol: "BTC", ticker: "BTC-USD", decimals: 8, priceScale: 2 },
  { symbol: "ETH", ticker: "ETH-USD", decimals: 18, priceScale: 2 },
];

/** Seed 001: PriceCollectors get the full metadata, PriceAlerts the symbol names, in each geo-location. */
const collectors = ["collector-eu", "collector-us", "collector-ap"];
const alerts = ["eu", "us", "ap"].flatMap((geo) => [1, 2, 3].map((n) => ({ id: `alert-${geo}-${n}`, geo })));

describe.each(allStoreCases())("pushing to every target ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("starts every push before any finishes, and each group gets its own projection", async () => {
    const { tw } = await engines.first();
    const gate = deferred();
    const allStarted = deferred();
    const started: string[] = [];
    const got = new Map<string, { payload: unknown; group: string; version: number }>();
    const symbols = tw.fanout<Symbol[], string | { id: string; geo: string }>("symbols", {
      groups: {
        collectors: { targets: collectors },
        alerts: { targets: () => alerts, project: (s) => s.map((x) => x.symbol) },
      },
      send: async (target, payload, ctx: PushContext) => {
        const id = typeof target === "string" ? target : target.id;
        started.push(id);
        if (started.length === 12) allStarted.resolve();
        await gate.promise;
        got.set(id, { payload, group: ctx.group, version: ctx.version });
      },
    });
    await symbols.push(SYMBOLS);
    const ticking = tw.tick();
    await allStarted.promise;
    // Let the healthy sends' promise chains settle (a turn of the event loop) before time moves.
    await new Promise((resolve) => setImmediate(resolve));
    expect(got.size).toBe(0);
    gate.resolve();
    expect((await ticking).outbound.used).toBe(12);

    for (const c of collectors) expect(got.get(c)).toEqual({ payload: SYMBOLS, group: "collectors", version: 1 });
    for (const a of alerts) expect(got.get(a.id)).toEqual({ payload: ["BTC", "ETH"], group: "alerts", version: 1 });
    const status = await symbols.status();
    expect(status.converged).toBe(true);
    expect(status.targets.map((t) => [t.id, t.group, t.version, t.behind])).toContainEqual(["alert-us-2", "alerts", 1, false]);
  });

  it("delivers to all the others when one target throws and one never answers; those two are retried", async () => {
    const { tw, clock, named } = await engines.first();
    const started = new Set<string>();
    const allStarted = deferred();
    const done = new Map<string, number>();
    let hung: AbortSignal | undefined;
    let broken = true;
    const symbols = tw.fanout<Symbol[]>("symbols", {
      timeout: "5s",
      groups: { collectors: { targets: collectors }, alerts: { targets: alerts.map((a) => a.id), project: (s) => s.map((x) => x.symbol) } },
      send: async (target, _payload, ctx) => {
        const id = target as string;
        started.add(id);
        if (started.size === 12) allStarted.resolve();
        if (broken && id === "alert-eu-1") throw new Error("alert-eu-1 evicted");
        if (broken && id === "collector-us") {
          hung = ctx.signal;
          return new Promise<never>(() => {});
        }
        done.set(id, clock.now());
      },
    });
    const t0 = clock.now();
    await symbols.push(SYMBOLS);
    const ticking = tw.tick();
    await allStarted.promise;
    // Let the healthy sends' promise chains settle (a turn of the event loop) before time moves.
    await new Promise((resolve) => setImmediate(resolve));
    expect(done.size).toBe(10);
    await clock.advance("5s");
    const result = await ticking;
    expect(hung?.reason).toBeInstanceOf(CallTimeoutError);
    expect(result.nextWakeAt).toBe(t0 + 30 * SECOND);

    const status = await symbols.status();
    expect(status.converged).toBe(false);
    expect(status.targets.filter((t) => t.behind).map((t) => t.id).sort()).toEqual(["alert-eu-1", "collector-us"]);
    expect(status.targets.find((t) => t.id === "alert-eu-1")!.lastError).toMatch(/evicted/);
    expect(status.targets.find((t) => t.id === "collector-us")!.lastError).toMatch(/no answer within 5000 ms/);
    expect(named("fanout.push_failed").map((e) => e.target).sort()).toEqual(["alert-eu-1", "collector-us"]);

    broken = false;
    done.clear();
    await clock.set(t0 + 30 * SECOND);
    await tw.tick();
    expect([...done.keys()].sort()).toEqual(["alert-eu-1", "collector-us"]);
    expect((await symbols.status()).converged).toBe(true);
  });
});
