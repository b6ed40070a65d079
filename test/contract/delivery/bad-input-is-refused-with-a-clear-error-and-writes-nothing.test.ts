import { describe, expect, it } from "vitest";
import { InvalidInputError, InvalidPayloadError } from "../../../src/core/errors.js";
import type { Delivery } from "../../../src/delivery/delivery.js";
import { allStoreCases } from "../../support/stores.js";
import { enginesFor } from "../../support/schedule-fixtures.js";

const send = async () => {};

describe.each(allStoreCases())("bad input to a delivery ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  async function expectNothingWritten(delivery: Delivery<unknown>, tick: () => Promise<{ outbound: { used: number } }>) {
    expect(await delivery.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 0 });
    expect((await tick()).outbound.used).toBe(0);
  }

  it("emit refuses a non-array, an item without a payload, a payload JSON cannot carry and a bad key, writing nothing", async () => {
    const { tw } = await engines.first();
    const hourly = tw.delivery("hourly", { send }) as Delivery<unknown>;
    const emit = (items: unknown) => hourly.emit(items as never);

    for (const notArray of [undefined, null, "items", { payload: 1 }, 42]) {
      await expect(emit(notArray), String(notArray)).rejects.toThrow(InvalidInputError);
    }
    await expect(emit({ payload: 1 })).rejects.toThrow(/emit takes an array of \{ key\?, payload \}/);
    await expect(emit([{ key: "a" }])).rejects.toThrow(/item 0 must be \{ key\?, payload \}/);
    await expect(emit([{ payload: 1 }, null])).rejects.toThrow(/item 1 must be/);
    await expect(emit([{ payload: 1 }, "text"])).rejects.toThrow(InvalidInputError);

    await expect(emit([{ payload: 1 }, { payload: 10n }])).rejects.toThrow(InvalidPayloadError);
    await expect(emit([{ payload: 1 }, { payload: 10n }])).rejects.toThrow(/item 1: payload is not JSON-serialisable: the payload is a bigint/);
    await expect(emit([{ payload: { peak: 1n } }])).rejects.toThrow(/"peak" is a bigint/);
    await expect(emit([{ payload: () => 1 }])).rejects.toThrow(/is a function/);
    await expect(emit([{ payload: { notify: () => 1 } }])).rejects.toThrow(/"notify" is a function/);
    await expect(emit([{ payload: undefined }])).rejects.toThrow(/undefined has no JSON form/);
    await expect(emit([{ payload: Number.NaN }])).rejects.toThrow(InvalidPayloadError);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    await expect(emit([{ payload: cycle }])).rejects.toThrow(InvalidPayloadError);

    for (const key of ["", 7, "k".repeat(501), { id: 1 }]) {
      await expect(emit([{ key: "fine", payload: 1 }, { key, payload: 1 }]), JSON.stringify(key)).rejects.toThrow(/item 1: key must be a string of 1 to 500 characters/);
    }
    // A NUL no store can hold, a lone surrogate PostgreSQL would store as U+FFFD (two keys colliding).
    await expect(emit([{ key: "fine", payload: 1 }, { key: "order-\u0000", payload: 1 }])).rejects.toThrow(/item 1: key contains a NUL character/);
    await expect(emit([{ key: "order-\ud800", payload: 1 }])).rejects.toThrow(/item 0: key is not well-formed Unicode/);
    await expect(emit([{ key: "\udc00order", payload: 1 }])).rejects.toThrow(InvalidInputError);
    await expectNothingWritten(hourly, () => tw.tick());
    // A key of exactly 500 characters (of three UTF-8 bytes each, the widest per UTF-16 unit), a key
    // with a well-formed pair, and a null key, are fine.
    expect(await emit([{ key: "€".repeat(500), payload: 1 }, { key: "😀", payload: 1 }, { key: null, payload: null }])).toEqual({ emitted: 3, skipped: [] });
  });

  it("refuses bad options and a duplicate name, declaring nothing", async () => {
    const { tw } = await engines.first();
    const declare = (options: unknown, name = "bad") => () => tw.delivery(name, options as never);
    expect(declare({ send, budget: 0 })).toThrow(/delivery "bad": budget: .*>=\s?1.* \(got 0\)/);
    expect(declare({ send, budget: 2.5 })).toThrow(/budget: .*int.* \(got 2.5\)/);
    expect(declare({ send, retryBatch: -1 })).toThrow(/retryBatch: .* \(got -1\)/);
    expect(declare({ send, retryBatch: 0 })).toThrow(/retryBatch: .* \(got 0\)/);
    expect(declare({ send, timeout: "soon" })).toThrow(/timeout: invalid duration "soon"/);
    expect(declare({ send, timeout: -5 })).toThrow(/timeout: invalid duration -5/);
    expect(declare({ send, batch: 10 })).toThrow(/delivery "bad": .*[Uu]nrecognized key.*"batch"/);
    expect(declare({})).toThrow(/send: expected a function \(message, ctx\) => Promise/);
    expect(declare({ send: "https://example.com" })).toThrow(/send: expected a function/);
    expect(declare({ send, retry: ["1m"] })).toThrow(/retry: expected a backoff/);
    expect(declare({ send, onDelivered: true })).toThrow(/onDelivered: expected a function/);
    expect(declare({ send, budget: 2 ** 31 })).toThrow(/budget: .*\(got 2147483648\)/);
    expect(declare({ send, retryBatch: 1e12 })).toThrow(/retryBatch: .*\(got 1000000000000\)/);
    expect(declare({ send, timeout: "99999999999999999999d" })).toThrow(/timeout: invalid duration "99999999999999999999d"/);
    expect(declare({ send, timeout: 1e300 })).toThrow(/timeout: invalid duration/);
    expect(declare({ send, timeout: 0 })).toThrow(/timeout: .*from 1 ms to 2147483647 ms .*\(got 0\)/);
    expect(declare({ send, timeout: "30d" })).toThrow(/timeout: .*from 1 ms to 2147483647 ms .*\(got "30d"\)/);
    for (const options of [{ send, budget: 0 }, { send, retryBatch: -1 }, { send, nope: 1 }, { send, timeout: "soon" }, { send, timeout: 0 }]) {
      expect(declare(options)).toThrow(InvalidInputError);
    }
    expect(tw.deliveries.has("bad")).toBe(false);

    for (const name of ["", "a\u0000b", "x\ud800", "n".repeat(101), 7, null]) {
      expect(declare({ send }, name as string), JSON.stringify(name)).toThrow(/delivery name (must be a string of 1 to 100 characters|contains a NUL|is not well-formed Unicode)/);
    }
    expect(tw.deliveries.size).toBe(0);

    tw.delivery("hourly", { send });
    expect(declare({ send }, "hourly")).toThrow(new InvalidInputError('delivery "hourly" is already declared'));
    expect(tw.deliveries.size).toBe(1);
  });

  it("replay, dropped and outstanding refuse a bad id, since or limit and move nothing", async () => {
    const { tw } = await engines.first();
    const doomed = tw.delivery<number>("doomed", {
      retry: () => null,
      send: async () => {
        throw new Error("gone");
      },
    });
    await doomed.emit([{ key: "a", payload: 1 }]);
    await tw.tick();
    const [dead] = await doomed.dropped();
    const replay = (target: unknown) => doomed.replay(target as never);

    for (const id of [5, "", "x".repeat(101), null]) {
      await expect(replay({ id }), JSON.stringify(id)).rejects.toThrow(/replay: id must be a string of 1 to 100 characters/);
    }
    await expect(replay({ id: `${dead!.id}\u0000` })).rejects.toThrow(/replay: id contains a NUL character/);
    await expect(replay({ id: "\ud800" })).rejects.toThrow(/replay: id is not well-formed Unicode/);
    for (const since of ["yesterday", Number.NaN, Number.POSITIVE_INFINITY, undefined, {}]) {
      await expect(replay({ since }), String(since)).rejects.toThrow(/since: expected a Date or epoch milliseconds/);
    }
    for (const since of [1e20, -1, new Date(8.64e15)]) {
      await expect(replay({ since }), String(since)).rejects.toThrow(/since must be a time from 1970 to 9999/);
    }
    await expect(doomed.outstanding({ after: "a\u0000" })).rejects.toThrow(/outstanding: after contains a NUL character/);
    await expect(doomed.outstanding({ after: "x".repeat(101) })).rejects.toThrow(/outstanding: after must be a string of 0 to 100 characters/);
    await expect(doomed.dropped({ before: { droppedAt: 1e20, id: dead!.id } })).rejects.toThrow(/dropped: before.droppedAt must be a time from 1970 to 9999/);
    await expect(doomed.dropped({ before: { droppedAt: dead!.droppedAt, id: "\ud800" } })).rejects.toThrow(/dropped: before.id is not well-formed Unicode/);
    await expect(doomed.dropped({ before: "yesterday" as never })).rejects.toThrow(/dropped: before must be \{ droppedAt, id \}/);
    await expect(replay({ since: new Date("not a date") })).rejects.toThrow(/since: invalid Date/);
    for (const limit of [0, -1, 1.5, 10_001]) {
      await expect(replay({ since: 0, limit }), String(limit)).rejects.toThrow(/limit must be an integer from 1 to 10000/);
    }
    for (const target of [null, undefined, "id", 7]) {
      await expect(replay(target), String(target)).rejects.toThrow(InvalidInputError);
    }
    await expect(doomed.dropped({ limit: 0 })).rejects.toThrow(/limit must be an integer from 1 to 1000/);
    await expect(doomed.outstanding({ limit: 1_001 })).rejects.toThrow(/limit must be an integer from 1 to 1000/);

    expect(await doomed.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 1 });
    expect((await doomed.dropped()).map((d) => d.id)).toEqual([dead!.id]);
  });

  it("drops an item whose retry policy answers a delay past the 100-year bound, rather than storing a time the store cannot hold", async () => {
    const { tw, named } = await engines.first();
    const far = tw.delivery<number>("far", {
      retry: () => 1e300,
      send: async () => {
        throw new Error("down");
      },
    });
    await far.emit([{ payload: 1 }, { payload: 2 }]);
    const result = await tw.tick();
    expect(result.nextWakeAt).toBeNull();
    expect(await far.status()).toMatchObject({ retrying: 0, dropped: 2 });
    expect(named("delivery.dropped").map((e) => e.reason)).toEqual([expect.stringMatching(/retry policy answered 1e\+300 ms/), expect.any(String)]);
  });

  it("drops an item whose retry policy answers neither milliseconds nor null, rather than storing a time that is not one", async () => {
    const { tw, named } = await engines.first();
    const odd = tw.delivery<number>("odd", {
      retry: (() => undefined) as never,
      send: async () => {
        throw new Error("down");
      },
    });
    await odd.emit([{ payload: 1 }]);
    const result = await tw.tick();
    expect(result.nextWakeAt).toBeNull();
    expect(await odd.status()).toMatchObject({ retrying: 0, dropped: 1 });
    expect(named("delivery.dropped")).toHaveLength(1);
  });
});
