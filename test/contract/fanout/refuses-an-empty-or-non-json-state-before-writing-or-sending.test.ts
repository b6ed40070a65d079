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
    expect(declare({ send, groups: { a: { targets: [] } }, reconcile: "often" })).toThrow(/reconcile: invalid duration "often"/);
    expect(declare({ send, groups: { a: { targets: [] } }, timeout: -1 })).toThrow(/timeout: invalid duration -1/);
    expect(declare({ send, groups: { a: { targets: [] } }, backoff: ["30s"] })).toThrow(/backoff: expected a backoff/);
    expect(declare({ send, groups: { a: { targets: [] } }, retries: 3 })).toThrow(/[Uu]nrecognized key.*"retries"/);
    expect(declare({ send, groups: { a: { targets: [] } }, reconcile: "99999999999999999999d" })).toThrow(/reconcile: invalid duration "99999999999999999999d"/);
    expect(declare({ send, groups: { a: { targets: [] } }, reconcile: 1e300 })).toThrow(/reconcile: invalid duration/);
    expect(declare({ send, groups: { a: { targets: [] } }, timeout: 0 })).toThrow(/timeout: .*from 1 ms to 2147483647 ms .*\(got 0\)/);
    expect(declare({ send, groups: { a: { targets: [] } }, timeout: "99999999999999999999d" })).toThrow(/timeout: invalid duration/);
    // Names, group names and target ids are stored and indexed: bounded, no NUL, well-formed Unicode.
    for (const name of ["", "a\u0000b", "x\ud800", "n".repeat(101), 7]) {
      expect(declare({ send, groups: { a: { targets: ["t"] } } }, name as string), JSON.stringify(name)).toThrow(/fanout name (must be a string of 1 to 100 characters|contains a NUL|is not well-formed Unicode)/);
    }
    expect(declare({ send, groups: { "a\u0000": { targets: ["t"] } } })).toThrow(/fanout "bad": group name "a\\u0000" contains a NUL character/);
    expect(declare({ send, groups: { ["g".repeat(101)]: { targets: ["t"] } } })).toThrow(/group name .* must be a string of 1 to 100 characters/);
    expect(declare({ send, groups: { a: { targets: ["t", "alert-\ud800"] } } })).toThrow(/fanout "bad": group "a": target 1: id is not well-formed Unicode/);
    expect(declare({ send, groups: { a: { targets: [{ id: "t\u0000" }] } } })).toThrow(/group "a": target 0: id contains a NUL character/);
    expect(declare({ send, groups: { a: { targets: ["x".repeat(501)] } } })).toThrow(/group "a": target 0: id must be a string of 1 to 500 characters/);
    expect(declare({ send, groups: { a: { targets: [7] } } })).toThrow(/group "a": target 0 is neither a string nor \{ id: string \}/);
    expect(declare({ send, groups: { a: { targets: ["t"] }, b: { targets: ["t"] } } })).toThrow(/target id "t" appears twice/);
    expect(tw.fanouts.size).toBe(0);
    tw.fanout("symbols", { groups: { a: { targets: ["t"] } }, send });
    expect(declare({ groups: { a: { targets: ["t"] } }, send }, "symbols")).toThrow(new InvalidInputError('fanout "symbols" is already declared'));
  });

  it("fails a round whose target function answers an id no store can hold: nothing sent, no driver error, retried on the backoff", async () => {
    const { tw, clock, named } = await engines.first();
    const pushes: string[] = [];
    let ids = ["alert-1", "alert-\u0000"];
    const symbols = tw.fanout<string[]>("symbols", { groups: { alerts: { targets: () => ids } }, send: async (t) => void pushes.push(t as string) });
    const t0 = clock.now();
    await symbols.push(["BTC"]);
    const result = await tw.tick();
    expect(pushes).toEqual([]);
    expect(result.nextWakeAt).toBe(t0 + 30_000);
    expect(named("fanout.retry_scheduled")[0]).toMatchObject({ error: expect.stringMatching(/group "alerts": target 1: id contains a NUL character/) });
    ids = ["alert-1", "alert-2"];
    await clock.set(t0 + 30_000);
    await tw.tick();
    expect(pushes.sort()).toEqual(["alert-1", "alert-2"]);
  });

  it("keeps a backoff answering past the 100-year bound within it, so the wake-up is still a time the store holds", async () => {
    const { tw, clock } = await engines.first();
    const symbols = tw.fanout<string[]>("symbols", {
      reconcile: false,
      backoff: () => 1e300,
      groups: { alerts: { targets: ["alert-1"] } },
      send: async () => {
        throw new Error("down");
      },
    });
    await symbols.push(["BTC"]);
    const result = await tw.tick();
    expect(result.nextWakeAt).toBe(clock.now() + 100 * 365 * 86_400_000);
    expect(await symbols.status()).toMatchObject({ nextReason: "retry", consecutiveFailures: 1 });
  });
});
