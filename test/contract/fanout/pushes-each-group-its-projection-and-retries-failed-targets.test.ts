import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { SECOND, enginesFor } from "../../support/schedule-fixtures.js";

describe.each(allStoreCases())("a fan-out pushes projections and retries ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("pushes full metadata to collectors and names to alerts, retries only the failed target after 30s", async () => {
    const { tw, clock } = await engines.first();
    const got = new Map<string, unknown>();
    let failing = new Set(["alert-2"]);
    const symbols = tw.fanout<{ symbol: string; decimals: number }[]>("symbols", {
      groups: {
        collectors: { targets: ["collector-1"] },
        alerts: { targets: ["alert-1", "alert-2"], project: (s) => s.map((x) => x.symbol) },
      },
      send: async (target, payload) => {
        if (failing.has(target as string)) throw new Error(`${String(target)} is down`);
        got.set(target as string, payload);
      },
    });
    await symbols.push([{ symbol: "BTC", decimals: 8 }]);
    const first = await tw.tick();
    expect(got.get("collector-1")).toEqual([{ symbol: "BTC", decimals: 8 }]);
    expect(got.get("alert-1")).toEqual(["BTC"]);
    expect(got.has("alert-2")).toBe(false);
    expect(first.nextWakeAt).toBe(clock.now() + 30 * SECOND);
    got.clear();
    failing = new Set();
    await clock.advance("30s");
    await tw.tick();
    expect([...got.keys()]).toEqual(["alert-2"]);
    expect((await symbols.status()).converged).toBe(true);
    await expect(symbols.push([])).rejects.toThrow(/empty/);
  });
});
