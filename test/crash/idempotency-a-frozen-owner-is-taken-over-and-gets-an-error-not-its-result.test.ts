import { afterEach, describe, expect, it } from "vitest";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import type { LogEvent } from "../../src/core/logger.js";
import { DuplicateRequestError } from "../../src/idempotency/errors.js";
import { EffectsDb, Racers, type RacerProcess } from "./fixtures/idempotency-processes.js";
import { newTarget, openStore, type CrashDb, type Target } from "./fixtures/target.js";

/**
 * The lease's limit, with real processes: a child process claims a key and is frozen with SIGSTOP
 * inside the operation, past staleAfter, so it misses its renewals. This process then takes the key
 * over and runs the operation: two executions of one key, which no lease can prevent for an owner
 * that cannot be told. What tickwork does guarantee: when the owner thaws, its first renewal finds
 * the claim gone and aborts its operation's signal; when its operation returns anyway, its caller
 * gets TW_IDEMPOTENCY_CLAIM_LOST naming the stored result, never its own; one result is stored.
 *
 * A real-time test: staleAfter is 2s on the wall clock.
 */

const STALE_MS = 2_000;
const scope = "acct-1";
const operation = "OPEN_POSITION";
const key = "req-frozen";

describe.each<Target["kind"]>(["postgres", "sqlite"])("an idempotency owner frozen past staleAfter (%s)", (kind) => {
  let teardown: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await teardown?.();
    teardown = undefined;
  });

  it("is taken over; thawed, its signal is aborted and its caller gets the stored result's error, not its own result", async () => {
    const { target, cleanup } = newTarget(kind);
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
    owner.send({ kind: "hold", key, finishable: true });
    await owner.waitFor((l) => l.event === "operation.entered", "operation.entered");
    await freezeHoldingNoLock(owner, effects.db);
    const frozenAt = Date.now();

    // Refused while the frozen owner's last renewal is fresh, then taken over and run here.
    let ran = 0;
    for (;;) {
      try {
        const result = await engine.idempotency.run({ scope, key, operation }, async () => {
          ran++;
          await effects.record({ key, pid: process.pid, token: "takeover" });
          return { key, pid: process.pid, token: "takeover" };
        });
        expect(result).toEqual({ key, pid: process.pid, token: "takeover" });
        break;
      } catch (error) {
        if (!(error instanceof DuplicateRequestError)) throw error;
      }
      expect(Date.now() - frozenAt, "time from the freeze to the takeover").toBeLessThan(STALE_MS + 10_000);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(ran).toBe(1);
    expect(events.filter((e) => e.event === "idempotency.reclaimed")).toMatchObject([{ scope, key, operation }]);

    // Thawed: its overdue renewal runs first, finds the claim taken and aborts the operation's signal.
    owner.thaw();
    const thawedAt = Date.now();
    expect(await owner.waitFor((l) => l.event === "operation.aborted", "operation.aborted")).toMatchObject({ key, code: "TW_IDEMPOTENCY_CLAIM_LOST" });
    const abortedAfterMs = Date.now() - thawedAt;
    expect(owner.named("idempotency.claim_lost")).toMatchObject([{ key, detectedBy: "renewal" }]);

    // The operation ignores its signal and returns: its caller gets an error naming the stored result.
    owner.send({ kind: "finish", key });
    const outcome = await owner.waitFor((l) => l.event === "outcome", "outcome");
    expect(outcome).toMatchObject({ kind: "error", code: "TW_IDEMPOTENCY_CLAIM_LOST", stored: { status: "completed", result: { key, pid: process.pid, token: "takeover" } } });
    expect(outcome.result).toBeUndefined();

    // Two executions ran (the lease cannot stop a frozen one), one answer is stored and given to all.
    expect((await effects.rows()).map((r) => r.token).sort()).toEqual(["held", "takeover"]);
    expect(await engine.store.idempotency.find({ scope, key, operation })).toMatchObject({ status: "completed", result: JSON.stringify({ key, pid: process.pid, token: "takeover" }) });
    expect(await engine.idempotency.run({ scope, key, operation }, () => ({ key, pid: 0, token: "never" }))).toEqual({ key, pid: process.pid, token: "takeover" });
    expect(abortedAfterMs, "from SIGCONT to the aborted signal").toBeLessThan(10_000);
  }, 60_000);
});

/**
 * SIGSTOP, retried until the frozen racer holds no write lock: a SQLite process frozen inside one of
 * its own (sub-millisecond) writes would block every other writer until it thaws.
 */
async function freezeHoldingNoLock(racer: RacerProcess, db: CrashDb): Promise<void> {
  for (let tries = 0; tries < 20; tries++) {
    await racer.freeze();
    if (await db.writable()) return;
    racer.thaw();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`racer ${racer.pid} kept holding the write lock`);
}
