import { describe, expect, it } from "vitest";
import { durableObjectCase, postgresCase, sqliteFileCase } from "../../support/stores.js";
import { MINUTE, T0, enginesFor } from "../../support/schedule-fixtures.js";

describe.each([sqliteFileCase(), postgresCase(), durableObjectCase()])("cached values are in the store ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("values and fetchedAt survive a restart; a delete is seen by another engine on the same store", async () => {
    const first = await engines.first();
    await first.tw.cache.put("tenero:price:stx", { price: 1.25, rateLimit: { remaining: 3 } });
    await first.tw.cache.put("tenero:price:btc", { price: 97000 });
    await first.tw.stop();

    const second = await engines.another();
    await second.clock.set(T0 + 3 * MINUTE);
    expect(await second.tw.cache.get("tenero:price:stx", { maxAge: "5m" })).toEqual({ value: { price: 1.25, rateLimit: { remaining: 3 } }, fetchedAt: T0 });

    const third = await engines.another({ clock: second.clock });
    expect(await third.tw.cache.delete("tenero:price:btc")).toBe(true);
    expect(await second.tw.cache.get("tenero:price:btc")).toBeNull();
    await third.tw.cache.put("tenero:price:stx", { price: 1.3 });
    expect(await second.tw.cache.get("tenero:price:stx")).toEqual({ value: { price: 1.3 }, fetchedAt: T0 + 3 * MINUTE });
  });
});
