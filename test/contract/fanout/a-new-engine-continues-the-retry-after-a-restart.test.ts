import { describe, expect, it } from "vitest";
import type { Tickwork } from "../../../src/tickwork.js";
import { allStoreCases } from "../../support/stores.js";
import { SECOND, enginesFor } from "../../support/schedule-fixtures.js";

// Every store that can be opened again (SQLite in memory cannot): the new engine is a restarted process.
const reopenable = allStoreCases().filter((c) => c.name !== "sqlite-memory");

describe.each(reopenable)("a fan-out across a restart ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("keeps its state, versions and failure count, and the new engine retries only the target still behind", async () => {
    const pushes: { target: string; version: number; payload: unknown }[] = [];
    let down = new Set(["alert-2"]);
    const declare = (tw: Tickwork) =>
      tw.fanout<{ symbol: string; decimals: number }[]>("symbols", {
        groups: { collectors: { targets: ["collector-1"] }, alerts: { targets: ["alert-1", "alert-2"], project: (s) => s.map((x) => x.symbol) } },
        send: async (target, payload, ctx) => {
          pushes.push({ target: target as string, version: ctx.version, payload });
          if (down.has(target as string)) throw new Error(`${String(target)} unreachable`);
        },
      });

    const before = await engines.first();
    const t0 = before.clock.now();
    await declare(before.tw).push([{ symbol: "BTC", decimals: 8 }]);
    expect((await before.tw.tick()).nextWakeAt).toBe(t0 + 30 * SECOND);
    await before.tw.stop();

    const after = await engines.another({ clock: before.clock });
    const symbols = declare(after.tw);
    const status = await symbols.status();
    expect(status).toMatchObject({ version: 1, consecutiveFailures: 1, nextReason: "retry", nextAt: t0 + 30 * SECOND, converged: false });
    expect(status.targets.filter((t) => t.behind).map((t) => t.id)).toEqual(["alert-2"]);
    // Not before the retry time, although the process is new.
    expect((await after.tw.tick()).outbound.used).toBe(0);

    down = new Set();
    pushes.length = 0;
    await after.clock.set(t0 + 30 * SECOND);
    await after.tw.tick();
    expect(pushes).toEqual([{ target: "alert-2", version: 1, payload: ["BTC"] }]);
    expect(await symbols.status()).toMatchObject({ version: 1, consecutiveFailures: 0, converged: true });
  });
});
