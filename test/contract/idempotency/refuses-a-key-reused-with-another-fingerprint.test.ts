import { describe, expect, it } from "vitest";
import { DuplicateRequestError, IdempotencyKeyReuseError } from "../../../src/idempotency/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { deferred, engineFor } from "../../support/queue-fixtures.js";

/** Beyond the seed: a key sent again with a different request is refused rather than answered with another request's result. */
describe.each(allStoreCases())("request fingerprints ($name)", (storeCase) => {
  const engine = engineFor(storeCase);
  const open = { scope: "acct-1", key: "req-1", operation: "OPEN_POSITION" };

  it("the same key with another fingerprint throws IdempotencyKeyReuseError and does not run; the same fingerprint replays", async () => {
    const { tw } = await engine();
    let runs = 0;
    const call = (fingerprint: string | undefined) => tw.idempotency.run({ ...open, fingerprint }, async () => ({ success: true, n: ++runs }));
    expect(await call("sha256:aaa")).toEqual({ success: true, n: 1 });

    const reused = call("sha256:bbb");
    await expect(reused).rejects.toBeInstanceOf(IdempotencyKeyReuseError);
    await expect(reused).rejects.toMatchObject({ code: "TW_IDEMPOTENCY_KEY_REUSED", ref: open });
    expect(runs).toBe(1);

    expect(await call("sha256:aaa")).toEqual({ success: true, n: 1 });
    // A caller that sends no fingerprint is not compared.
    expect(await call(undefined)).toEqual({ success: true, n: 1 });
    expect(runs).toBe(1);
    expect(await tw.idempotency.list("acct-1")).toMatchObject([{ fingerprint: "sha256:aaa" }]);
  });

  it("a key in flight reused with another fingerprint is refused as reused, with the same one as a duplicate", async () => {
    const { tw } = await engine();
    const started = deferred();
    const gate = deferred();
    const first = tw.idempotency.run({ ...open, fingerprint: "sha256:aaa" }, async () => {
      started.resolve();
      await gate.promise;
      return "done";
    });
    await started.promise;
    await expect(tw.idempotency.run({ ...open, fingerprint: "sha256:bbb" }, async () => "other")).rejects.toBeInstanceOf(IdempotencyKeyReuseError);
    await expect(tw.idempotency.run({ ...open, fingerprint: "sha256:aaa" }, async () => "other")).rejects.toBeInstanceOf(DuplicateRequestError);
    gate.resolve();
    expect(await first).toBe("done");
  });

  it("a failure's deleted claim forgets its fingerprint: the retry may carry another request", async () => {
    const { tw } = await engine();
    await expect(tw.idempotency.run({ ...open, fingerprint: "sha256:aaa" }, async () => Promise.reject(new Error("rejected by risk checks")))).rejects.toThrow("risk checks");
    expect(await tw.idempotency.run({ ...open, fingerprint: "sha256:bbb" }, async () => "corrected")).toBe("corrected");
  });
});
