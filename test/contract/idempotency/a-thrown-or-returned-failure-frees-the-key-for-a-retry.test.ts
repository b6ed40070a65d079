import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { engineFor } from "../../support/queue-fixtures.js";

/**
 * Seed 002's FAIL branch: a failed operation's claim is deleted at once, so the client may retry
 * with the same key and the retry runs.
 */
describe.each(allStoreCases())("a failure frees the key for a retry ($name)", (storeCase) => {
  const engine = engineFor(storeCase);
  const close = { scope: "acct-1", key: "req-close", operation: "CLOSE_POSITION" };

  it("a thrown error is rethrown, the claim is deleted, and the same key runs again", async () => {
    const { tw, named } = await engine();
    let runs = 0;
    const failing = tw.idempotency.run(close, async () => {
      runs++;
      throw new Error("price feed unavailable");
    });
    await expect(failing).rejects.toThrow("price feed unavailable");
    expect(await tw.idempotency.list("acct-1")).toEqual([]);
    expect(named("idempotency.released")).toMatchObject([{ level: "info", ...close, reason: "the operation threw" }]);

    const retried = await tw.idempotency.run(close, async () => {
      runs++;
      return { success: true, closed: 1 };
    });
    expect(retried).toEqual({ success: true, closed: 1 });
    expect(runs).toBe(2);
    expect(await tw.idempotency.list("acct-1")).toMatchObject([{ ...close, status: "completed" }]);
  });

  it("a returned { success: false } is returned to the caller, not cached, and the same key runs again", async () => {
    const { tw, named } = await engine();
    let runs = 0;
    const answer = await tw.idempotency.run(close, async () => {
      runs++;
      return { success: false, error: "no open position" };
    });
    expect(answer).toEqual({ success: false, error: "no open position" });
    expect(await tw.idempotency.list("acct-1")).toEqual([]);
    expect(named("idempotency.released")).toMatchObject([{ reason: "the operation returned a failure" }]);

    const again = await tw.idempotency.run(close, async () => {
      runs++;
      return { success: true, closed: 1 };
    });
    expect(again).toEqual({ success: true, closed: 1 });
    expect(runs).toBe(2);
    // `success: true` and values without a success field are results to keep.
    expect(await tw.idempotency.run(close, async () => ({ success: false }))).toEqual({ success: true, closed: 1 });
  });

  it("a custom isFailure decides which returned values are failures", async () => {
    const { tw } = await engine({ idempotency: { isFailure: (result) => typeof result === "object" && result !== null && "error" in result } });
    let runs = 0;
    const place = { scope: "acct-1", key: "req-limit", operation: "PLACE_LIMIT_ORDER" };

    // `{ success: false }` is no failure under this rule: it is cached like any result.
    const kept = { scope: "acct-1", key: "req-kept", operation: "PLACE_LIMIT_ORDER" };
    expect(await tw.idempotency.run(kept, async () => (runs++, { success: false }))).toEqual({ success: false });
    expect(await tw.idempotency.run(kept, async () => (runs++, { success: true }))).toEqual({ success: false });
    expect(runs).toBe(1);

    // `{ error }` is: the claim is deleted and the next call runs.
    expect(await tw.idempotency.run(place, async () => (runs++, { error: "price out of range" }))).toEqual({ error: "price out of range" });
    expect(await tw.idempotency.run(place, async () => (runs++, { orderId: "l-1" }))).toEqual({ orderId: "l-1" });
    expect(await tw.idempotency.run(place, async () => (runs++, { orderId: "l-2" }))).toEqual({ orderId: "l-1" });
    expect(runs).toBe(3);
    expect((await tw.idempotency.list("acct-1")).map((r) => r.key).sort()).toEqual(["req-kept", "req-limit"]);
  });
});
