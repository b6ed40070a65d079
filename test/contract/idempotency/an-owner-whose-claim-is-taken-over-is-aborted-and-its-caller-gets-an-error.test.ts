import { describe, expect, it } from "vitest";
import { TickworkError } from "../../../src/core/errors.js";
import { IdempotencyClaimLostError } from "../../../src/idempotency/errors.js";
import { allStoreCases, durableObjectCase, postgresCase, sqliteFileCase } from "../../support/stores.js";
import { SECOND, deferred, engineFor, until, type Engine } from "../../support/queue-fixtures.js";
import { enginesFor } from "../../support/schedule-fixtures.js";

/**
 * An owner that stops renewing its claim for `staleAfter` (a frozen process, a long pause) may be
 * taken over while its `fn` still runs. One execution's result is stored; the other's caller gets
 * `TW_IDEMPOTENCY_CLAIM_LOST`, never a result, and its `fn`'s signal is aborted as soon as the loss
 * is known: at the renewal that is refused, or at the completion that is refused.
 */
const open = { scope: "acct-1", key: "req-1", operation: "OPEN_POSITION" };
const second = { success: true, by: "second owner" };

/** Another process takes the claim over and completes it (as it would once this owner went stale). */
async function takeOver({ tw, clock }: Engine, complete = true): Promise<void> {
  const [claimed] = await tw.idempotency.list("acct-1");
  expect(await tw.store.idempotency.reclaim({ ...open, expectedClaimId: claimed!.claimId, claimId: "second-owner", fingerprint: null, now: clock.now() })).toBe(true);
  if (complete) expect(await tw.store.idempotency.complete({ ...open, claimId: "second-owner", result: JSON.stringify(second), now: clock.now() })).toBe(true);
}

/** An owner whose `fn` waits for `gate`, then does `then`; the signal it was given is kept. */
function owner(e: Engine, then: () => unknown = () => ({ success: true, by: "first owner" })) {
  const started = deferred();
  const gate = deferred();
  let signal: AbortSignal | undefined;
  const result = e.tw.idempotency.run(open, async (ctx) => {
    signal = ctx.signal;
    started.resolve();
    await gate.promise;
    return then();
  });
  // fn failing before it started (a test that fails) ends the wait for it at once.
  result.then(() => started.reject(new Error("run settled before fn started")), (error: unknown) => started.reject(error));
  return { result, started: started.promise, gate, signal: () => signal! };
}

describe.each(allStoreCases())("an owner whose claim is taken over ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("has its signal aborted at the renewal that is refused, while fn still runs; its caller then rejects with the stored result", async () => {
    const e = await engine({ idempotency: { staleAfter: "20s" } });
    const first = owner(e);
    await first.started;
    expect(first.signal().aborted).toBe(false);
    await takeOver(e);

    // The next renewal (a quarter of staleAfter) finds the claim gone: fn is told before it returns.
    await e.clock.advance(5 * SECOND);
    await until(() => first.signal().aborted, "the first owner's signal to be aborted");
    const reason = first.signal().reason as unknown;
    expect(reason).toBeInstanceOf(IdempotencyClaimLostError);
    expect(reason).toMatchObject({ code: "TW_IDEMPOTENCY_CLAIM_LOST", ref: open });
    expect(e.named("idempotency.claim_lost")).toMatchObject([{ level: "warn", ...open, detectedBy: "renewal" }]);
    // No more renewals once the claim is known to be lost.
    expect(e.clock.pending).toBe(0);

    first.gate.resolve();
    const error = await first.result.then(() => null, (error: unknown) => error);
    expect(error).toBeInstanceOf(IdempotencyClaimLostError);
    expect(error).toBeInstanceOf(TickworkError);
    expect(error).toMatchObject({ code: "TW_IDEMPOTENCY_CLAIM_LOST", ref: open, stored: { status: "completed", result: second } });
    expect((error as Error).message).toContain("another execution");
    expect(await e.tw.idempotency.run(open, async () => ({ success: true, by: "third" }))).toEqual(second);
  });

  it("has its signal aborted at the completion that is refused when fn finishes first; its caller rejects, the stored result stays", async () => {
    const e = await engine();
    const first = owner(e);
    await first.started;
    await takeOver(e);
    let abortedBeforeSettling = false;
    first.signal().addEventListener("abort", () => (abortedBeforeSettling = true));

    first.gate.resolve();
    await expect(first.result).rejects.toMatchObject({ code: "TW_IDEMPOTENCY_CLAIM_LOST", stored: { status: "completed", result: second } });
    expect(abortedBeforeSettling).toBe(true);
    expect(e.named("idempotency.claim_lost")).toMatchObject([{ level: "warn", ...open, detectedBy: "completion" }]);
    expect(await e.tw.idempotency.run(open, async () => ({ success: true, by: "third" }))).toEqual(second);
  });

  it("says the key is still being processed when the other execution has not finished", async () => {
    const e = await engine();
    const first = owner(e);
    await first.started;
    await takeOver(e, false);
    first.gate.resolve();
    const error = (await first.result.then(() => null, (error: unknown) => error)) as IdempotencyClaimLostError;
    expect(error).toMatchObject({ code: "TW_IDEMPOTENCY_CLAIM_LOST", stored: { status: "processing" } });
    expect(error.message).toContain("still");
    expect((await e.tw.idempotency.list("acct-1"))[0]).toMatchObject({ status: "processing", claimId: "second-owner" });
  });

  const failures: [string, () => unknown, string | undefined][] = [
    ["throws", () => { throw new Error("aborted by its signal"); }, "aborted by its signal"],
    ["returns a failure", () => ({ success: false, error: "rejected" }), undefined],
  ];
  it.each(failures)("a loser that %s gets the same error (its own error as the cause), and frees nothing", async (_, then, cause) => {
    const e = await engine();
    const first = owner(e, then);
    await first.started;
    await takeOver(e);
    first.gate.resolve();
    const error = (await first.result.then(() => null, (error: unknown) => error)) as IdempotencyClaimLostError;
    expect(error).toMatchObject({ code: "TW_IDEMPOTENCY_CLAIM_LOST", stored: { status: "completed", result: second } });
    expect((error.cause as Error | undefined)?.message).toBe(cause);
    expect(first.signal().aborted).toBe(true);
    // The winner's record is untouched: the loser's failure does not free the key.
    expect(await e.tw.idempotency.run(open, async () => ({ success: true, by: "third" }))).toEqual(second);
  });

  it("an owner that keeps its claim is never aborted, and calls without a key get a signal too", async () => {
    const e = await engine({ idempotency: { staleAfter: "20s" } });
    const first = owner(e);
    await first.started;
    for (let i = 0; i < 10; i++) {
      await e.clock.advance(5 * SECOND);
      await until(() => e.clock.pending === 1, "the owner's renewal to be written and the next one scheduled");
    }
    first.gate.resolve();
    expect(await first.result).toEqual({ success: true, by: "first owner" });
    expect(first.signal().aborted).toBe(false);
    expect(e.named("idempotency.claim_lost")).toEqual([]);

    let unkeyed: AbortSignal | undefined;
    expect(await e.tw.idempotency.run({ ...open, key: null }, (ctx) => ((unkeyed = ctx.signal), "ran"))).toBe("ran");
    expect(unkeyed).toBeInstanceOf(AbortSignal);
    expect(unkeyed!.aborted).toBe(false);
  });
});

describe.each([sqliteFileCase(), postgresCase(), durableObjectCase()])("two engines on one store, the first frozen past staleAfter ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it("the second takes over and its result is stored; the first, thawed, is aborted and its caller rejects", async () => {
    // Each engine has its own clock: A's standing still is A frozen (no renewals), B's moving is time passing.
    const a = await engines.first({ idempotency: { staleAfter: "20s" } });
    const b = await engines.another({ idempotency: { staleAfter: "20s" } });
    const first = owner(a, () => ({ success: true, by: "A" }));
    await first.started;

    await b.clock.advance(21 * SECOND);
    let bSignal: AbortSignal | undefined;
    const bResult = await b.tw.idempotency.run(open, async (ctx) => ((bSignal = ctx.signal), { success: true, by: "B" }));
    expect(bResult).toEqual({ success: true, by: "B" });
    expect(bSignal!.aborted).toBe(false);
    expect(b.named("idempotency.reclaimed")).toMatchObject([{ ...open }]);

    // A thaws: its overdue renewal runs first, finds the claim gone and aborts fn's signal.
    expect(first.signal().aborted).toBe(false);
    await a.clock.advance(5 * SECOND);
    await until(() => first.signal().aborted, "A's signal to be aborted");
    first.gate.resolve();
    await expect(first.result).rejects.toMatchObject({ code: "TW_IDEMPOTENCY_CLAIM_LOST", stored: { status: "completed", result: { success: true, by: "B" } } });

    // One stored answer for the key, in both engines.
    for (const e of [a, b]) expect(await e.tw.idempotency.run(open, async () => ({ success: true, by: "later" }))).toEqual({ success: true, by: "B" });
  });
});
