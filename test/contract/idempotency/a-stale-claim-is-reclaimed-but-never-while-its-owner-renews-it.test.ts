import { describe, expect, it } from "vitest";
import { DuplicateRequestError } from "../../../src/idempotency/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, SECOND, T0, deferred, engineFor, until, type Engine } from "../../support/queue-fixtures.js";

/**
 * Seed 002's INSERT OR REPLACE: a PROCESSING key left by a crashed execution may be claimed again.
 * Here only once its owner has stopped renewing it for `staleAfter`: a live owner renews it every
 * quarter of that, so it is never taken from under a running operation.
 */
describe.each(allStoreCases())("stale claims ($name)", (storeCase) => {
  const engine = engineFor(storeCase);
  const open = { scope: "acct-1", key: "req-1", operation: "OPEN_POSITION" };

  /** A claim as a process that crashed inside fn leaves it: processing, never renewed, never completed. */
  const crashedClaim = ({ tw, clock }: Engine) => tw.store.idempotency.claim({ ...open, claimId: "crashed-owner", fingerprint: null, now: clock.now() });

  it("a claim not renewed for staleAfter (default 1 min) is re-claimed and run, once", async () => {
    const e = await engine();
    const { tw, clock } = e;
    expect(await crashedClaim(e)).toBe(true);
    let runs = 0;
    const call = () => tw.idempotency.run(open, async () => ({ success: true, n: ++runs }));

    await clock.advance(MINUTE - SECOND);
    await expect(call()).rejects.toBeInstanceOf(DuplicateRequestError);
    expect(runs).toBe(0);

    await clock.advance(2 * SECOND);
    expect(await call()).toEqual({ success: true, n: 1 });
    expect(e.named("idempotency.reclaimed")).toMatchObject([{ level: "warn", ...open, staleForMs: MINUTE + SECOND }]);
    const [record] = await tw.idempotency.list("acct-1");
    expect(record).toMatchObject({ status: "completed", createdAt: T0 + MINUTE + SECOND });
    expect(record!.claimId).not.toBe("crashed-owner");
    // Re-claimed once: from now on it is an ordinary completed key.
    expect(await call()).toEqual({ success: true, n: 1 });
    expect(runs).toBe(1);
  });

  it("staleAfter is configurable, and must be at least 1s", async () => {
    const e = await engine({ idempotency: { staleAfter: "10s" } });
    await crashedClaim(e);
    await e.clock.advance(9 * SECOND);
    await expect(e.tw.idempotency.run(open, async () => "late")).rejects.toBeInstanceOf(DuplicateRequestError);
    await e.clock.advance(2 * SECOND);
    expect(await e.tw.idempotency.run(open, async () => "late")).toBe("late");

    await expect(engine({ idempotency: { staleAfter: "500ms" } })).rejects.toMatchObject({ code: "TW_INVALID_INPUT", message: expect.stringContaining("staleAfter") });
  });

  it("a claim whose owner is still running and renewing it is never re-claimed, however long it runs", async () => {
    const e = await engine({ idempotency: { staleAfter: "20s" } });
    const { tw, clock } = e;
    const started = deferred();
    const gate = deferred();
    let runs = 0;
    const owner = tw.idempotency.run(open, async () => {
      runs++;
      started.resolve();
      await gate.promise;
      return { success: true, by: "owner" };
    });
    await started.promise;
    // The owner's heartbeat is the one timer on the clock (the engine is not started).
    expect(clock.pending).toBe(1);

    // 5 minutes in steps of 4s (a fifth of staleAfter, less than the 5s between renewals), letting
    // each renewal's write land before the clock moves on.
    for (let elapsed = 0; elapsed < 5 * MINUTE; elapsed += 4 * SECOND) {
      await clock.advance(4 * SECOND);
      await until(() => clock.pending === 1, "the owner's renewal to be written and the next one scheduled");
      await expect(tw.idempotency.run(open, async () => (runs++, { success: true, by: "intruder" }))).rejects.toBeInstanceOf(DuplicateRequestError);
    }
    const [record] = await tw.idempotency.list("acct-1");
    expect(record).toMatchObject({ status: "processing", createdAt: T0 });
    expect(record!.renewedAt).toBeGreaterThan(clock.now() - 20 * SECOND);
    expect(e.named("idempotency.reclaimed")).toEqual([]);

    gate.resolve();
    expect(await owner).toEqual({ success: true, by: "owner" });
    expect(runs).toBe(1);
    // The heartbeat stopped with the operation.
    expect(clock.pending).toBe(0);
    await clock.advance(MINUTE);
    expect(await tw.idempotency.run(open, async () => ({ success: true, by: "later" }))).toEqual({ success: true, by: "owner" });
  });

  it("an owner whose claim was taken over does not overwrite the new owner's result, and its caller gets an error", async () => {
    const e = await engine();
    const { tw, clock } = e;
    const started = deferred();
    const gate = deferred();
    const owner = tw.idempotency.run(open, async () => {
      started.resolve();
      await gate.promise;
      return { success: true, by: "first owner" };
    });
    await started.promise;
    // Another process takes the claim over (as it would if this owner had been frozen past staleAfter).
    const [claimed] = await tw.idempotency.list("acct-1");
    expect(await tw.store.idempotency.reclaim({ ...open, expectedClaimId: claimed!.claimId, claimId: "second-owner", fingerprint: null, now: clock.now() })).toBe(true);
    expect(await tw.store.idempotency.complete({ ...open, claimId: "second-owner", result: JSON.stringify({ success: true, by: "second owner" }), now: clock.now() })).toBe(true);

    gate.resolve();
    // The stored answer is not replaced, and the first owner's caller gets an error, not its own answer.
    await expect(owner).rejects.toMatchObject({ code: "TW_IDEMPOTENCY_CLAIM_LOST", stored: { status: "completed", result: { success: true, by: "second owner" } } });
    expect(e.named("idempotency.claim_lost")).toMatchObject([{ level: "warn", ...open, detectedBy: "completion" }]);
    expect(await tw.idempotency.run(open, async () => ({ success: true, by: "third" }))).toEqual({ success: true, by: "second owner" });
  });
});
