import { describe, expect, it } from "vitest";
import { DuplicateRequestError } from "../../../src/idempotency/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { deferred, engineFor, type Engine } from "../../support/queue-fixtures.js";

/**
 * Seed 002's account-changing operations: RESET creates a new account, so a client retrying after
 * the reset sends the new account id. The key is looked up by (key, operation) alone and claimed,
 * completed and failed under the account current when the operation started (`claimScope`).
 */
describe.each(allStoreCases())("scope-changing operations ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  /** A paper-trading account service whose reset replaces the account by a new one. */
  function accounts({ tw }: Engine) {
    const ids = ["acct-1"];
    let resets = 0;
    return {
      get current() {
        return ids.at(-1)!;
      },
      get resets() {
        return resets;
      },
      reset(requestId: string, options: { scope?: string; claimScope: string }, during?: () => Promise<void>) {
        return tw.idempotency.run({ ...options, key: requestId, operation: "RESET" }, async () => {
          resets++;
          const next = `acct-${ids.length + 1}`;
          ids.push(next);
          await during?.();
          return { success: true, accountId: next };
        });
      },
    };
  }

  it("a retry sent for the new account with the same key returns the cached result and creates no second account", async () => {
    const e = await engine();
    const acct = accounts(e);

    const first = await acct.reset("req-reset", { claimScope: acct.current });
    expect(first).toEqual({ success: true, accountId: "acct-2" });
    expect(acct.current).toBe("acct-2");

    // The client's retry now names the new account, as claimScope and as scope.
    expect(await acct.reset("req-reset", { claimScope: "acct-2" })).toEqual(first);
    expect(await acct.reset("req-reset", { scope: "acct-2", claimScope: "acct-2" })).toEqual(first);
    expect(acct.resets).toBe(1);
    expect(acct.current).toBe("acct-2");

    // The row was claimed and completed under the account current at the claim.
    expect(await e.tw.idempotency.list("acct-1")).toMatchObject([{ scope: "acct-1", key: "req-reset", operation: "RESET", status: "completed" }]);
    expect(await e.tw.idempotency.list("acct-2")).toEqual([]);

    // Another key resets again, from the new account.
    expect(await acct.reset("req-reset-2", { claimScope: acct.current })).toEqual({ success: true, accountId: "acct-3" });
    expect(acct.resets).toBe(2);
  });

  it("a retry for the new account while the reset is still running gets DuplicateRequestError", async () => {
    const e = await engine();
    const acct = accounts(e);
    const inside = deferred();
    const gate = deferred();
    const first = acct.reset("req-reset", { claimScope: "acct-1" }, async () => {
      inside.resolve();
      await gate.promise;
    });
    await inside.promise;
    expect(acct.current).toBe("acct-2");

    await expect(acct.reset("req-reset", { claimScope: "acct-2" })).rejects.toBeInstanceOf(DuplicateRequestError);
    gate.resolve();
    expect(await first).toEqual({ success: true, accountId: "acct-2" });
    expect(acct.resets).toBe(1);
  });

  it("a reset that fails after the account changed deletes the claim it made under the old account", async () => {
    const e = await engine();
    const acct = accounts(e);
    await expect(
      acct.reset("req-reset", { claimScope: "acct-1" }, async () => {
        throw new Error("could not archive the old account");
      }),
    ).rejects.toThrow("could not archive");
    expect(acct.current).toBe("acct-2");
    expect(await e.tw.idempotency.list("acct-1")).toEqual([]);

    // The retry (from whichever account the client now names) runs.
    expect(await acct.reset("req-reset", { claimScope: acct.current })).toEqual({ success: true, accountId: "acct-3" });
    expect(acct.resets).toBe(2);
    expect(await e.tw.idempotency.list("acct-2")).toMatchObject([{ key: "req-reset", status: "completed" }]);
  });

  it("without claimScope the key is scoped as usual: the same key under another scope is a new key", async () => {
    const e = await engine();
    const acct = accounts(e);
    await acct.reset("req-reset", { claimScope: "acct-1" });
    const plain = await e.tw.idempotency.run({ scope: "acct-2", key: "req-reset", operation: "RESET" }, async () => ({ success: true, plain: true }));
    expect(plain).toEqual({ success: true, plain: true });
  });
});
