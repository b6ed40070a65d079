import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, SECOND, T0, enginesFor } from "../../support/schedule-fixtures.js";

describe.each(allStoreCases())("tw.cache: values with fetchedAt, read with a maximum age ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("put then get returns the value and fetchedAt, which defaults to the clock's now", async () => {
    const { tw, clock } = await engines.first();
    await clock.set(T0 + 42 * SECOND);
    const price = { price: 1.2345, fetchedAt: "ignored: this is part of the value", rateLimit: { remaining: 97, limit: 100 } };
    expect(await tw.cache.put("tenero:price:SP2C2YFP12AJZB4MABJBAJ55XECVS7E4PMMZ89YZR.usda-token", price)).toEqual({ value: price, fetchedAt: T0 + 42 * SECOND });
    expect(await tw.cache.get("tenero:price:SP2C2YFP12AJZB4MABJBAJ55XECVS7E4PMMZ89YZR.usda-token")).toEqual({ value: price, fetchedAt: T0 + 42 * SECOND });
    expect(await tw.cache.get("tenero:price:unknown")).toBeNull();
  });

  it("an explicit fetchedAt, as a Date or epoch ms, is stored as given", async () => {
    const { tw } = await engines.first();
    await tw.cache.put("a", 1, { fetchedAt: new Date(T0 - MINUTE) });
    await tw.cache.put("b", 2, { fetchedAt: T0 - 2 * MINUTE });
    expect(await tw.cache.get("a")).toEqual({ value: 1, fetchedAt: T0 - MINUTE });
    expect(await tw.cache.get("b")).toEqual({ value: 2, fetchedAt: T0 - 2 * MINUTE });
  });

  it("JSON values of every kind round-trip: objects, arrays, strings, numbers, booleans, null", async () => {
    const { tw } = await engines.first();
    const values: [string, unknown][] = [
      ["object", { nested: { list: [1, "two", { three: 3 }] }, unicode: "ünïcødé ✓", empty: {} }],
      ["array", [0, -1.5, 1e21, true, null]],
      ["string", "plain text with 'quotes' and \"double quotes\""],
      ["number", 0.1 + 0.2],
      ["boolean", false],
      ["null", null],
    ];
    for (const [key, value] of values) await tw.cache.put(key, value);
    for (const [key, value] of values) expect(await tw.cache.get(key)).toEqual({ value, fetchedAt: T0 });
  });

  it("putting a key again overwrites the value and fetchedAt", async () => {
    const { tw, clock } = await engines.first();
    await tw.cache.put("tenero:price:stx", { price: 1 });
    await clock.advance("5m");
    await tw.cache.put("tenero:price:stx", { price: 2 });
    expect(await tw.cache.get("tenero:price:stx")).toEqual({ value: { price: 2 }, fetchedAt: T0 + 5 * MINUTE });
  });

  it('get(key, { maxAge: "5m" }) returns the entry up to exactly 5 minutes old, and null 1 ms later', async () => {
    const { tw, clock } = await engines.first();
    await tw.cache.put("tenero:price:stx", { price: 1 });
    await clock.set(T0 + 5 * MINUTE);
    expect(await tw.cache.get("tenero:price:stx", { maxAge: "5m" })).toEqual({ value: { price: 1 }, fetchedAt: T0 });
    await clock.set(T0 + 5 * MINUTE + 1);
    expect(await tw.cache.get("tenero:price:stx", { maxAge: "5m" })).toBeNull();
    expect(await tw.cache.get("tenero:price:stx", { maxAge: 5 * MINUTE })).toBeNull();
    // Too old for that reader, not gone: a reader that accepts more staleness, or any, still gets it.
    expect(await tw.cache.get("tenero:price:stx", { maxAge: "10m" })).toEqual({ value: { price: 1 }, fetchedAt: T0 });
    expect(await tw.cache.get("tenero:price:stx")).toEqual({ value: { price: 1 }, fetchedAt: T0 });
    // A fresh put makes it fresh again.
    await tw.cache.put("tenero:price:stx", { price: 1.1 });
    expect(await tw.cache.get("tenero:price:stx", { maxAge: "5m" })).toEqual({ value: { price: 1.1 }, fetchedAt: T0 + 5 * MINUTE + 1 });
  });

  it("delete removes the entry and says whether there was one", async () => {
    const { tw } = await engines.first();
    await tw.cache.put("tenero:price:stx", 1);
    await tw.cache.put("tenero:price:btc", 2);
    expect(await tw.cache.delete("tenero:price:stx")).toBe(true);
    expect(await tw.cache.get("tenero:price:stx")).toBeNull();
    expect(await tw.cache.delete("tenero:price:stx")).toBe(false);
    expect(await tw.cache.get("tenero:price:btc")).toEqual({ value: 2, fetchedAt: T0 });
  });

  it("a periodic task fills the cache and a reader gets it with the staleness it accepts (seed 003)", async () => {
    const { tw, clock } = await engines.first();
    let price = 1;
    tw.task("tenero", {
      every: "5m",
      run: async () => {
        await tw.cache.put("tenero:price:stx", { price: price++ });
        return { succeeded: 1 };
      },
    });
    await clock.set(T0 + 5 * MINUTE);
    await tw.tick();
    await clock.set(T0 + 9 * MINUTE);
    expect(await tw.cache.get("tenero:price:stx", { maxAge: "5m" })).toEqual({ value: { price: 1 }, fetchedAt: T0 + 5 * MINUTE });
    await clock.set(T0 + 10 * MINUTE);
    await tw.tick();
    expect(await tw.cache.get("tenero:price:stx", { maxAge: "5m" })).toEqual({ value: { price: 2 }, fetchedAt: T0 + 10 * MINUTE });
  });
});
