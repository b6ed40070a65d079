import { afterEach, describe, expect, it } from "vitest";
import { EffectsDb, Racers, type Outcome, type RacerConfig } from "./fixtures/idempotency-processes.js";
import { newTarget, type Target } from "./fixtures/target.js";

/**
 * Beyond the seed (whose Durable Object is single-threaded): six processes, each with its own
 * engine and connections, call `tw.idempotency.run` for the same (scope, key, operation) at the same
 * wall-clock moment, for 50 keys. Each operation writes a row to `idempotency_effects` through a
 * connection of its own, with no unique constraint, so an operation run twice shows up as two rows.
 * Every caller must get either DuplicateRequestError (the key was in flight) or the one result.
 */

const PROCESSES = 6;
const KEYS = Array.from({ length: 50 }, (_, i) => `req-${String(i).padStart(2, "0")}`);
const SPACING_MS = 25;
/** Even keys' operations work 40 ms (the others arrive while they run); odd keys' return at once (others may find them completed). */
const HOLD_MS = KEYS.map((_, i) => (i % 2 === 0 ? 40 : 0));

describe.each(["postgres", "sqlite"] as const)("processes racing on the same keys (%s)", (kind) => {
  let teardown: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await teardown?.();
    teardown = undefined;
  });

  async function setup(): Promise<{ target: Target; effects: EffectsDb; racers: Racers }> {
    const { target, cleanup } = newTarget(kind);
    const racers = new Racers();
    const effects = EffectsDb.open(target);
    teardown = async () => {
      await racers.killAll();
      await effects.close();
      await cleanup();
    };
    await effects.prepare(target);
    return { target, effects, racers };
  }

  it("exactly one process runs each key; every other caller gets DuplicateRequestError or that run's result", async () => {
    const { target, effects, racers } = await setup();
    const config: RacerConfig = { target, staleAfter: "1m", scope: "acct-1", operation: "OPEN_POSITION" };
    const all = Array.from({ length: PROCESSES }, () => racers.spawn(config));
    await Promise.all(all.map((r) => r.ready));

    // The barrier: every process tries key i at startAt + i * SPACING_MS by the wall clock.
    const startAt = Date.now() + 500;
    const retryAt = startAt + KEYS.length * SPACING_MS + 1_000;
    for (const r of all) r.send({ kind: "race", keys: KEYS, startAt, spacingMs: SPACING_MS, holdMs: HOLD_MS, retryAt });
    await Promise.all(all.map((r) => r.waitFor((l) => l.event === "fixture.done", "fixture.done", 30_000)));
    expect(await Promise.all(all.map((r) => r.exited))).toEqual(all.map(() => 0));

    const outcomes: Outcome[] = all.flatMap((r) => r.outcomes);
    expect(outcomes.filter((o) => o.kind === "error")).toEqual([]);
    expect(outcomes).toHaveLength(PROCESSES * KEYS.length * 2);

    // One effect per key: no operation ran twice, in any process.
    const rows = await effects.rows();
    expect(rows.map((r) => r.key)).toEqual(KEYS);

    const split = { duplicate: 0, cached: 0 };
    for (const key of KEYS) {
      const race = outcomes.filter((o) => o.key === key && o.pass === 1);
      const ran = race.filter((o) => o.kind === "ran");
      expect(ran, `the calls of ${key} that ran it`).toHaveLength(1);
      const effect = rows.find((r) => r.key === key)!;
      expect(ran[0]!.result).toEqual(effect);
      expect(ran[0]!.pid).toBe(effect.pid);
      for (const other of race.filter((o) => o.kind !== "ran")) {
        expect(["duplicate", "cached"]).toContain(other.kind);
        if (other.kind === "cached") expect(other.result, `a cached answer for ${key}`).toEqual(effect);
        split[other.kind as "duplicate" | "cached"]++;
      }
      // Once the race was over, every process's retry got the one result.
      const retries = outcomes.filter((o) => o.key === key && o.pass === 2);
      expect(retries.map((o) => o.kind)).toEqual(all.map(() => "cached"));
      for (const retry of retries) expect(retry.result).toEqual(effect);
    }
    // Which process ran which key is up to the database; report the spread.
    const perProcess = all.map((r) => r.outcomes.filter((o) => o.kind === "ran").length);
    console.info(`${kind}: keys run per process ${perProcess.join(" / ")}; the other racers got ${split.duplicate} duplicate errors and ${split.cached} cached results`);
    expect(split.duplicate).toBeGreaterThan(0);
    expect(split.duplicate + split.cached).toBe((PROCESSES - 1) * KEYS.length);
  }, 180_000);
});
