import { describe, expect, it } from "vitest";
import { InvalidInputError, InvalidPayloadError } from "../../../src/core/errors.js";
import { EmptyStateError } from "../../../src/fanout/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { enginesFor } from "../../support/schedule-fixtures.js";

describe.each(allStoreCases())("a fan-out's push ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("refuses null, [] and {} with EmptyStateError, and a state JSON cannot carry, before anything is written or sent", async () => {
    const { tw } = await engines.first();
    const pushes: unknown[] = [];
    const symbols = tw.fanout<unknown>("symbols", { groups: { alerts: { targets: ["alert-1", "alert-2"] } }, send: async (_t, payload) => void pushes.push(payload) });

    for (const empty of [null, undefined, [], {}]) {
      await expect(symbols.push(empty), JSON.stringify(empty)).rejects.toThrow(EmptyStateError);
    }
    await expect(symbols.push([])).rejects.toThrow(/fanout "symbols": the state is empty/);
    await expect(symbols.push({ enabled: 1n })).rejects.toThrow(InvalidPayloadError);
    await expect(symbols.push({ enabled: 1n })).rejects.toThrow(/fanout "symbols": state is not JSON-serialisable: "enabled" is a bigint/);
    await expect(symbols.push([() => "BTC"])).rejects.toThrow(/is a function/);
    await expect(symbols.push(["BTC", Number.POSITIVE_INFINITY])).rejects.toThrow(InvalidInputError);
    await expect(tw.tick()).resolves.toMatchObject({ outbound: { used: 0 } });
    expect(pushes).toEqual([]);
    expect(await symbols.status()).toMatchObject({ version: 0, converged: false, lastPushAt: null });

    // After a good state, an empty one is still refused and the good one stays current.
    expect(await symbols.push(["BTC", "ETH"])).toEqual({ version: 1, changed: true });
    await tw.tick();
    await expect(symbols.push([])).rejects.toThrow(EmptyStateError);
    await expect(symbols.push(null)).rejects.toThrow(EmptyStateError);
    expect((await tw.tick()).outbound.used).toBe(0);
    expect(pushes).toEqual([
      ["BTC", "ETH"],
      ["BTC", "ETH"],
    ]);
    expect(await symbols.status()).toMatchObject({ version: 1, converged: true });
    // The same state again changes nothing and sends nothing.
    expect(await symbols.push(["BTC", "ETH"])).toEqual({ version: 1, changed: false });
    expect((await tw.tick()).outbound.used).toBe(0);
  });

  it("takes its own idea of empty from the isEmpty option", async () => {
    const { tw } = await engines.first();
    const symbols = tw.fanout<{ enabled: string[] }>("symbols", {
      groups: { alerts: { targets: ["alert-1"] } },
      send: async () => {},
      isEmpty: (s) => s.enabled.length === 0,
    });
    await expect(symbols.push({ enabled: [] })).rejects.toThrow(EmptyStateError);
    expect(await symbols.push({ enabled: ["BTC"] })).toMatchObject({ changed: true });
  });

  it("refuses bad options and a duplicate name, declaring nothing", async () => {
    const { tw } = await engines.first();
    const send = async () => {};
    const declare = (options: unknown, name = "bad") => () => tw.fanout(name, options as never);
    expect(declare({ send, groups: {} })).toThrow(/fanout "bad": groups: at least one group is needed/);
    expect(declare({ send, groups: { a: { targets: "alert-1" } } })).toThrow(/groups.a.targets: expected an array of targets or a function/);
    expect(declare({ send, groups: { a: { targets: [], project: "names" } } })).toThrow(/groups.a.project: expected a function/);
    expect(declare({ groups: { a: { targets: [] } } })).toThrow(/send: expected a function/);
    expect(declare({ send, groups: { a: { targets: [] } }, reconcile: "often" })).toThrow(/reconcile: expected a duration such as "15m", or false \(got "often"\)/);
    expect(declare({ send, groups: { a: { targets: [] } }, timeout: -1 })).toThrow(/timeout: invalid duration -1/);
    expect(declare({ send, groups: { a: { targets: [] } }, backoff: ["30s"] })).toThrow(/backoff: expected a backoff/);
    expect(declare({ send, groups: { a: { targets: [] } }, retries: 3 })).toThrow(/[Uu]nrecognized key.*"retries"/);
    expect(tw.fanouts.size).toBe(0);
    tw.fanout("symbols", { groups: { a: { targets: ["t"] } }, send });
    expect(declare({ groups: { a: { targets: ["t"] } }, send }, "symbols")).toThrow(new InvalidInputError('fanout "symbols" is already declared'));
  });
});
