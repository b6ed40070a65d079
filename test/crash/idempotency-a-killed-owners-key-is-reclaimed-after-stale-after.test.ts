import { afterEach, describe, expect, it } from "vitest";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import type { LogEvent } from "../../src/core/logger.js";
import { DuplicateRequestError } from "../../src/idempotency/errors.js";
import { EffectsDb, Racers } from "./fixtures/idempotency-processes.js";
import { newTarget, openStore } from "./fixtures/target.js";

/**
 * Seed 002's stale PROCESSING key (a DO evicted mid-operation), with real processes on PostgreSQL: a
 * child process claims a key and is SIGKILLed inside the operation. This process's requests with
 * the same key get DuplicateRequestError while the claim is fresh, including for longer than
 * staleAfter while the owner is alive and renewing it; once the dead owner's last renewal is
 * staleAfter old, the next request re-claims the key and runs the operation, once.
 *
 * A real-time test: staleAfter is 2s on the wall clock, and requests are polled every 100 ms.
 */

const STALE_MS = 2_000;
const scope = "acct-1";
const operation = "OPEN_POSITION";
const key = "req-crash";

interface Attempt {
  /** The claim's renewedAt as read just before the request. */
  renewedAt: number;
  claimId: string;
  before: number;
  after: number;
  kind: "duplicate" | "ran" | "cached";
}

describe("a claim left by a killed process (postgres)", () => {
  let teardown: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await teardown?.();
    teardown = undefined;
  });

  it("is refused as a duplicate until staleAfter after its owner's last renewal, then re-claimed and run once", async () => {
    const { target, cleanup } = newTarget("postgres");
    const racers = new Racers();
    const effects = EffectsDb.open(target);
    const engines: Tickwork[] = [];
    teardown = async () => {
      await racers.killAll();
      for (const tw of engines) await tw.stop();
      await effects.close();
      await cleanup();
    };
    await effects.prepare(target);
    const events: LogEvent[] = [];
    const engine = await createTickwork({ store: openStore(target), logger: (e) => events.push(e), migrate: false, handleSignals: false, idempotency: { staleAfter: "2s" } });
    engines.push(engine);

    const owner = racers.spawn({ target, staleAfter: "2s", scope, operation });
    await owner.ready;
    owner.send({ kind: "hold", key });
    await owner.waitFor((l) => l.event === "operation.entered", "operation.entered");

    let runs = 0;
    const attempts: Attempt[] = [];
    const attempt = async (): Promise<Attempt> => {
      const record = await engine.store.idempotency.find({ scope, key, operation });
      const before = Date.now();
      let kind: Attempt["kind"];
      try {
        let ran = false;
        await engine.idempotency.run({ scope, key, operation }, async () => {
          ran = true;
          runs++;
          await effects.record({ key, pid: process.pid, token: "rerun" });
          return { by: process.pid };
        });
        kind = ran ? "ran" : "cached";
      } catch (error) {
        if (!(error instanceof DuplicateRequestError)) throw error;
        kind = "duplicate";
      }
      const seen = { renewedAt: record?.renewedAt ?? Number.NaN, claimId: record?.claimId ?? "", before, after: Date.now(), kind };
      attempts.push(seen);
      return seen;
    };
    const pause = () => new Promise((resolve) => setTimeout(resolve, 100));

    // The owner is alive: for longer than staleAfter, every request is a duplicate, as it renews.
    const aliveUntil = Date.now() + STALE_MS + 1_000;
    while (Date.now() < aliveUntil) {
      expect((await attempt()).kind).toBe("duplicate");
      await pause();
    }
    const ownerClaim = attempts[0]!.claimId;
    expect(attempts.every((a) => a.claimId === ownerClaim)).toBe(true);
    expect(attempts.at(-1)!.renewedAt, "the owner renewed its claim while it ran").toBeGreaterThan(attempts[0]!.renewedAt);

    // Killed between claim and complete: the claim stays, processing, never renewed again.
    await owner.kill();
    const killedAt = Date.now();
    const alive = attempts.length;
    for (;;) {
      const a = await attempt();
      if (a.kind !== "duplicate") break;
      expect(Date.now() - killedAt, "time from the kill to a successful re-claim").toBeLessThan(STALE_MS + 10_000);
      await pause();
    }

    const afterKill = attempts.slice(alive);
    const success = afterKill.at(-1)!;
    expect(success.kind).toBe("ran");
    expect(runs).toBe(1);
    for (const a of afterKill.slice(0, -1)) {
      // Refused only while the claim was fresh: started no later than staleAfter after its last renewal.
      expect(a.claimId).toBe(ownerClaim);
      expect(a.before - a.renewedAt).toBeLessThanOrEqual(STALE_MS);
    }
    // Re-claimed once the dead owner's last renewal was more than staleAfter old, and not before.
    expect(success.after - success.renewedAt).toBeGreaterThan(STALE_MS);
    const reclaimed = events.filter((e) => e.event === "idempotency.reclaimed");
    expect(reclaimed).toHaveLength(1);
    expect(reclaimed[0]).toMatchObject({ level: "warn", scope, key, operation });
    expect(reclaimed[0]!.staleForMs).toBeGreaterThan(STALE_MS);

    // The killed operation's effect, then the one re-run; from now on the key answers from the cache.
    expect((await effects.rows()).map((r) => [r.pid, r.token])).toEqual([
      [owner.pid, "held"],
      [process.pid, "rerun"],
    ]);
    expect((await attempt()).kind).toBe("cached");
    expect(await engine.store.idempotency.find({ scope, key, operation })).toMatchObject({ status: "completed", result: JSON.stringify({ by: process.pid }) });
  }, 60_000);
});
