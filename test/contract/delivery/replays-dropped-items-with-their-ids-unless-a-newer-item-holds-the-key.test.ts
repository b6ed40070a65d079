import { describe, expect, it } from "vitest";
import type { DeliveryMessage } from "../../../src/delivery/options.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, enginesFor } from "../../support/schedule-fixtures.js";

describe.each(allStoreCases())("replaying dropped deliveries ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  /** A delivery whose receiver is down until `up`; one failure drops an item (retry policy: none). */
  async function setUp() {
    const engine = await engines.first();
    const state = { up: false, received: [] as DeliveryMessage<{ n: number }>[] };
    const hourly = engine.tw.delivery<{ n: number }>("hourly", {
      retry: () => null,
      send: async (m) => {
        if (!state.up) throw new Error("receiver down");
        state.received.push(m);
      },
    });
    return { ...engine, state, hourly };
  }

  it("sends one dropped item again by id, with the same id, counting attempts from 1 again", async () => {
    const { tw, clock, state, hourly, named } = await setUp();
    await hourly.emit([
      { key: "h-1", payload: { n: 1 } },
      { key: "h-2", payload: { n: 2 } },
    ]);
    await tw.tick();
    const dropped = await hourly.dropped();
    expect(dropped.map((d) => d.key).sort()).toEqual(["h-1", "h-2"]);
    const one = dropped.find((d) => d.key === "h-1")!;

    await clock.advance("1h");
    state.up = true;
    expect(await hourly.replay({ id: one.id })).toEqual([one.id]);
    expect(named("delivery.replayed")[0]).toMatchObject({ delivery: "hourly", count: 1, ids: [one.id] });
    expect(await hourly.status()).toMatchObject({ pending: 1, dropped: 1 });
    await tw.tick();
    expect(state.received.map((m) => [m.id, m.key, m.attempt, m.payload])).toEqual([[one.id, "h-1", 1, { n: 1 }]]);
    expect((await hourly.dropped()).map((d) => d.key)).toEqual(["h-2"]);
    // An id that is no longer (or never was) dropped replays nothing.
    expect(await hourly.replay({ id: one.id })).toEqual([]);
    expect(await hourly.replay({ id: "no-such-id" })).toEqual([]);
  });

  it("sends everything dropped since a time again, and keeps what was dropped before it", async () => {
    const { tw, clock, state, hourly } = await setUp();
    await hourly.emit([{ key: "old", payload: { n: 0 } }]);
    await tw.tick();
    await clock.advance("10m");
    const since = clock.now();
    await hourly.emit([
      { key: "new-1", payload: { n: 1 } },
      { key: "new-2", payload: { n: 2 } },
    ]);
    await tw.tick();
    const droppedIds = new Map((await hourly.dropped()).map((d) => [d.key, d.id]));

    state.up = true;
    const replayed = await hourly.replay({ since: new Date(since) });
    expect(replayed.sort()).toEqual([droppedIds.get("new-1"), droppedIds.get("new-2")].sort());
    await tw.tick();
    expect(state.received.map((m) => [m.key, m.id]).sort()).toEqual([
      ["new-1", droppedIds.get("new-1")],
      ["new-2", droppedIds.get("new-2")],
    ]);
    expect((await hourly.dropped()).map((d) => d.key)).toEqual(["old"]);
    // Epoch milliseconds work as well as a Date.
    expect(await hourly.replay({ since: since - 11 * MINUTE })).toEqual([droppedIds.get("old")]);
  });

  it("does not replay an item whose key a newer item now holds", async () => {
    const { tw, state, hourly } = await setUp();
    await hourly.emit([{ key: "daily:u-1", payload: { n: 1 } }]);
    await tw.tick();
    const [old] = await hourly.dropped();

    // The key is free once its item is dropped: a newer value is emitted and waits in the outbox.
    expect(await hourly.emit([{ key: "daily:u-1", payload: { n: 2 } }])).toEqual({ emitted: 1, skipped: [] });
    expect(await hourly.replay({ id: old!.id })).toEqual([]);
    expect(await hourly.replay({ since: 0 })).toEqual([]);
    expect((await hourly.dropped()).map((d) => d.id)).toEqual([old!.id]);

    state.up = true;
    await tw.tick();
    expect(state.received.map((m) => m.payload)).toEqual([{ n: 2 }]);
    // With the key free again, the old item can be replayed (the caller's choice).
    expect(await hourly.replay({ id: old!.id })).toEqual([old!.id]);
  });
});
