import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { enginesFor } from "../../support/schedule-fixtures.js";

describe.each(allStoreCases())("dead letters are pruned after their retention and purged by hand ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  /** A delivery whose receiver is always down; one failure drops an item (retry policy: none). */
  async function setUp(deadLetterRetention?: string | false) {
    const engine = await engines.first();
    const hourly = engine.tw.delivery<{ n: number }>("hourly", {
      retry: () => null,
      ...(deadLetterRetention === undefined ? {} : { deadLetterRetention }),
      send: async () => {
        throw new Error("receiver down");
      },
    });
    return { ...engine, hourly };
  }

  async function dropAt(engine: Awaited<ReturnType<typeof setUp>>, keys: string[]) {
    await engine.hourly.emit(keys.map((key, n) => ({ key, payload: { n } })));
    await engine.tw.tick();
  }

  it("by default a dead letter is kept 14 days, then the upkeep deletes it and logs delivery.pruned", async () => {
    const engine = await setUp();
    await dropAt(engine, ["old"]);
    await engine.clock.advance("7d");
    await dropAt(engine, ["new"]);
    expect((await engine.hourly.status()).dropped).toBe(2);

    await engine.clock.advance("7d");
    await engine.clock.advance("1m");
    await engine.tw.tick();
    expect((await engine.hourly.dropped()).map((d) => d.key)).toEqual(["new"]);
    expect(engine.named("delivery.pruned")).toEqual([expect.objectContaining({ delivery: "hourly", count: 1, olderThanMs: 14 * 86_400_000 })]);
  });

  it("deadLetterRetention: '1h' deletes them after an hour; false keeps them however long", async () => {
    const engine = await setUp("1h");
    const keeper = engine.tw.delivery<{ n: number }>("keeper", { retry: () => null, deadLetterRetention: false, send: async () => Promise.reject(new Error("down")) });
    await keeper.emit([{ key: "k", payload: { n: 1 } }]);
    await dropAt(engine, ["a", "b"]);
    await engine.clock.advance("59m");
    await engine.tw.tick();
    expect((await engine.hourly.status()).dropped).toBe(2);
    await engine.clock.advance("2m");
    await engine.tw.tick();
    expect((await engine.hourly.status()).dropped).toBe(0);
    await engine.clock.advance("400d");
    await engine.tw.tick();
    expect((await keeper.status()).dropped).toBe(1);
  });

  it("purge({ id }) deletes one dead letter, purge({ before }) those dropped earlier; purged items cannot be replayed", async () => {
    const engine = await setUp(false);
    await dropAt(engine, ["a", "b"]);
    await engine.clock.advance("1h");
    const cut = engine.clock.now();
    await dropAt(engine, ["c"]);
    const byKey = new Map((await engine.hourly.dropped()).map((d) => [d.key, d.id]));

    expect(await engine.hourly.purge({ id: byKey.get("a")! })).toEqual([byKey.get("a")]);
    expect(await engine.hourly.purge({ id: byKey.get("a")! })).toEqual([]);
    expect(await engine.hourly.replay({ id: byKey.get("a")! })).toEqual([]);
    expect(await engine.hourly.purge({ before: cut })).toEqual([byKey.get("b")]);
    expect((await engine.hourly.dropped()).map((d) => d.key)).toEqual(["c"]);
    expect(engine.named("delivery.purged").map((e) => e.count)).toEqual([1, 1]);
  });

  it("a bad purge or retention is refused naming the field, and deletes nothing", async () => {
    const engine = await setUp(false);
    await dropAt(engine, ["a"]);
    const bad: unknown[] = [undefined, {}, { id: "x", before: 0 }, { id: "" }, { id: "x".repeat(101) }, { before: "yesterday" }, { before: 0, limit: 0 }, { before: 0, limit: 10_001 }];
    for (const target of bad) await expect(engine.hourly.purge(target as never), JSON.stringify(target)).rejects.toBeInstanceOf(InvalidInputError);
    expect((await engine.hourly.status()).dropped).toBe(1);
    expect(() => engine.tw.delivery("other", { send: async () => {}, deadLetterRetention: "forever" as never })).toThrow(/deadLetterRetention/);
    expect(() => engine.tw.delivery("other", { send: async () => {}, deadLetterRetention: true as never })).toThrow(/deadLetterRetention/);
  });
});
