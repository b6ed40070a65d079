import { describe, expect, it } from "vitest";
import { EmptyStateError } from "../../../src/fanout/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, SECOND, enginesFor } from "../../support/schedule-fixtures.js";

const TARGETS = ["collector-1", "alert-1", "alert-2"];

describe.each(allStoreCases())("reconciliation ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  async function setUp(options: { state?: () => string[]; reconcile?: string } = {}) {
    const engine = await engines.first();
    const down = new Set<string>();
    const pushes: { target: string; payload: unknown; version: number; at: number }[] = [];
    const symbols = engine.tw.fanout<string[]>("symbols", {
      ...options,
      groups: { collectors: { targets: [TARGETS[0]!] }, alerts: { targets: TARGETS.slice(1) } },
      send: async (target, payload, ctx) => {
        pushes.push({ target: target as string, payload, version: ctx.version, at: engine.clock.now() });
        if (down.has(target as string)) throw new Error(`${String(target)} unreachable`);
      },
    });
    const at = (time: number) => pushes.filter((p) => p.at === time);
    return { ...engine, down, pushes, symbols, at };
  }

  it("re-pushes the current state to every target every 15 minutes by default, changed or not", async () => {
    const { tw, clock, symbols, at, named } = await setUp();
    const t0 = clock.now();
    await symbols.push(["BTC"]);
    expect((await tw.tick()).nextWakeAt).toBe(t0 + 15 * MINUTE);
    await clock.set(t0 + 15 * MINUTE - 1);
    expect((await tw.tick()).outbound.used).toBe(0);
    for (const round of [1, 2]) {
      await clock.set(t0 + round * 15 * MINUTE);
      const result = await tw.tick();
      expect(at(t0 + round * 15 * MINUTE).map((p) => [p.target, p.version, p.payload]).sort()).toEqual(TARGETS.map((t) => [t, 1, ["BTC"]]).sort());
      expect(result.nextWakeAt).toBe(t0 + (round + 1) * 15 * MINUTE);
    }
    expect(named("fanout.reconciled")).toHaveLength(2);
    expect(await symbols.status()).toMatchObject({ version: 1, converged: true, nextReason: "reconcile" });
  });

  it("does nothing at its time while a sooner wake-up (a push, a retry) took its place; it comes 15 minutes after that", async () => {
    const { tw, clock, symbols, down, pushes, at } = await setUp();
    const t0 = clock.now();
    await symbols.push(["BTC"]);
    await tw.tick();
    await clock.set(t0 + 5 * MINUTE);
    down.add("alert-2");
    await symbols.push(["BTC", "ETH"]);
    expect((await tw.tick()).nextWakeAt).toBe(t0 + 5 * MINUTE + 30 * SECOND);
    down.clear();
    await clock.set(t0 + 5 * MINUTE + 30 * SECOND);
    expect((await tw.tick()).nextWakeAt).toBe(t0 + 20 * MINUTE + 30 * SECOND);
    const before = pushes.length;
    await clock.set(t0 + 15 * MINUTE);
    expect((await tw.tick()).outbound.used).toBe(0);
    await clock.set(t0 + 20 * MINUTE);
    expect((await tw.tick()).outbound.used).toBe(0);
    expect(pushes).toHaveLength(before);
    await clock.set(t0 + 20 * MINUTE + 30 * SECOND);
    await tw.tick();
    expect(at(t0 + 20 * MINUTE + 30 * SECOND).map((p) => p.target).sort()).toEqual([...TARGETS].sort());
  });

  it("with the state option, reads the state at each round and pushes a changed one as a new version", async () => {
    let current = ["BTC"];
    let reads = 0;
    const { tw, clock, symbols, at } = await setUp({
      state: () => {
        reads++;
        return current;
      },
    });
    const t0 = clock.now();
    // With a state source there is something to push from the start: the first tick reconciles.
    await tw.tick();
    expect(at(t0).map((p) => [p.target, p.version, p.payload]).sort()).toEqual(TARGETS.map((t) => [t, 1, ["BTC"]]).sort());
    expect(reads).toBe(1);

    current = ["BTC", "ETH"];
    await clock.set(t0 + 15 * MINUTE);
    await tw.tick();
    expect(at(t0 + 15 * MINUTE).map((p) => [p.target, p.version, p.payload]).sort()).toEqual(TARGETS.map((t) => [t, 2, ["BTC", "ETH"]]).sort());
    expect(await symbols.status()).toMatchObject({ version: 2, converged: true });
    expect(reads).toBe(2);
  });

  it("with the state option, sends nothing when the state reads empty and schedules a retry that reads it again", async () => {
    let current: string[] = ["BTC"];
    const { tw, clock, symbols, pushes, at, named } = await setUp({ state: () => current });
    const t0 = clock.now();
    await tw.tick();
    expect(pushes).toHaveLength(3);

    // A transient empty read (seed 001): nothing is pushed, and every receiver keeps its symbols.
    current = [];
    await clock.set(t0 + 15 * MINUTE);
    const empty = await tw.tick();
    expect(pushes).toHaveLength(3);
    expect(empty.nextWakeAt).toBe(t0 + 15 * MINUTE + 30 * SECOND);
    const status = await symbols.status();
    expect(status).toMatchObject({ version: 1, nextReason: "retry", consecutiveFailures: 1 });
    expect(status.lastError).toMatch(/empty/);
    expect(named("fanout.retry_scheduled").at(-1)).toMatchObject({ fanout: "symbols", consecutiveFailures: 1 });
    await expect(symbols.push([])).rejects.toThrow(EmptyStateError);

    current = ["BTC", "SOL"];
    await clock.set(t0 + 15 * MINUTE + 30 * SECOND);
    await tw.tick();
    expect(at(t0 + 15 * MINUTE + 30 * SECOND).map((p) => [p.target, p.version, p.payload]).sort()).toEqual(TARGETS.map((t) => [t, 2, ["BTC", "SOL"]]).sort());
    expect(await symbols.status()).toMatchObject({ version: 2, consecutiveFailures: 0, converged: true });
  });

  it("retries a target whose reconciliation push failed, though it already had the version", async () => {
    const { tw, clock, symbols, down, at } = await setUp();
    const t0 = clock.now();
    await symbols.push(["BTC"]);
    await tw.tick();
    // An evicted receiver that lost its config fails the reconciliation push: it is retried at 30s.
    down.add("alert-1");
    await clock.set(t0 + 15 * MINUTE);
    expect((await tw.tick()).nextWakeAt).toBe(t0 + 15 * MINUTE + 30 * SECOND);
    down.clear();
    await clock.set(t0 + 15 * MINUTE + 30 * SECOND);
    const retried = await tw.tick();
    expect(at(t0 + 15 * MINUTE + 30 * SECOND).map((p) => p.target)).toEqual(["alert-1"]);
    expect(retried.nextWakeAt).toBe(t0 + 30 * MINUTE + 30 * SECOND);
    expect(await symbols.status()).toMatchObject({ consecutiveFailures: 0, lastError: null });
  });
});
