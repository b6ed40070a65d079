import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, enginesFor } from "../../support/schedule-fixtures.js";

describe.each(allStoreCases())("a key held by an outstanding item ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("is skipped by emit while its item waits to be sent or retried, and free again once it is delivered", async () => {
    const { tw, clock } = await engines.first();
    const sent: { key: string | null; day: string }[] = [];
    let down = new Set(["daily:u-2"]);
    const daily = tw.delivery<{ day: string }>("daily", {
      send: async (m) => {
        sent.push({ key: m.key, day: m.payload.day });
        if (down.has(m.key!)) throw new Error("portfolio unavailable");
      },
    });
    const day1 = (user: string) => ({ key: `daily:${user}`, payload: { day: "2026-01-01" } });
    const t0 = clock.now();

    // Pending (not sent yet): a second emit of the same key is skipped.
    expect(await daily.emit([day1("u-1"), day1("u-2")])).toEqual({ emitted: 2, skipped: [] });
    expect(await daily.emit([day1("u-1"), day1("u-3")])).toEqual({ emitted: 1, skipped: ["daily:u-1"] });
    // The same key twice in one batch: the first is kept.
    expect(await daily.emit([day1("u-4"), { key: "daily:u-4", payload: { day: "other" } }])).toEqual({ emitted: 1, skipped: ["daily:u-4"] });
    await tw.tick();
    expect(sent.map((s) => s.key).sort()).toEqual(["daily:u-1", "daily:u-2", "daily:u-3", "daily:u-4"]);

    // u-2 failed and waits for its retry: the next day's pass must not emit a duplicate daily callback.
    expect(await daily.emit([day1("u-1"), day1("u-2")])).toEqual({ emitted: 1, skipped: ["daily:u-2"] });
    await tw.tick();
    expect(sent.filter((s) => s.key === "daily:u-2")).toHaveLength(1);

    // Delivered by its retry: the key is free again.
    down = new Set();
    await clock.set(t0 + MINUTE);
    await tw.tick();
    expect(sent.filter((s) => s.key === "daily:u-2")).toHaveLength(2);
    expect(await daily.emit([{ key: "daily:u-2", payload: { day: "2026-01-02" } }])).toEqual({ emitted: 1, skipped: [] });
    await tw.tick();
    expect(sent.filter((s) => s.key === "daily:u-2").map((s) => s.day)).toEqual(["2026-01-01", "2026-01-01", "2026-01-02"]);
    // Items without a key are never deduplicated.
    expect(await daily.emit([{ payload: { day: "x" } }, { payload: { day: "x" } }, { key: null, payload: { day: "x" } }])).toEqual({ emitted: 3, skipped: [] });
  });
});
