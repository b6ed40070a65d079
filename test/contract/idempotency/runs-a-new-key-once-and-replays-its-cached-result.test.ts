import { describe, expect, it } from "vitest";
import { DuplicateRequestError } from "../../../src/idempotency/errors.js";
import { HOUR, T0, deferred, engineFor } from "../../support/queue-fixtures.js";
import { allStoreCases } from "../../support/stores.js";

/**
 * Seed 002's check-claim-complete lifecycle: NEW -> claim, run, cache the result; COMPLETED -> the
 * cached result without running; PROCESSING -> DUPLICATE_REQUEST.
 */
describe.each(allStoreCases())("a new key runs once and its result is replayed ($name)", (storeCase) => {
  const engine = engineFor(storeCase);
  const open = { scope: "acct-1", key: "req-1", operation: "OPEN_POSITION" };

  it("runs a new key and caches its result; the same key returns the cached result without running", async () => {
    const { tw, clock } = await engine();
    let runs = 0;
    const first = await tw.idempotency.run(open, async () => {
      runs++;
      return { success: true, orderId: "o-1", fills: [{ price: 1.5, size: 2 }], note: null };
    });
    expect(first).toEqual({ success: true, orderId: "o-1", fills: [{ price: 1.5, size: 2 }], note: null });
    expect(runs).toBe(1);

    await clock.advance(HOUR);
    const retry = await tw.idempotency.run(open, async () => {
      runs++;
      return { success: true, orderId: "o-2", fills: [], note: "a second order" };
    });
    expect(retry).toEqual(first);
    expect(runs).toBe(1);

    const records = await tw.idempotency.list("acct-1");
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ ...open, status: "completed", createdAt: T0, completedAt: T0, result: JSON.stringify(first) });
  });

  it("caches a void result: the second call returns undefined without running (and a null result stays null)", async () => {
    const { tw } = await engine();
    let runs = 0;
    const reset = { scope: "acct-1", key: "req-void", operation: "RESET" };
    const voidOp = async (): Promise<void> => {
      runs++;
    };
    expect(await tw.idempotency.run(reset, voidOp)).toBeUndefined();
    expect(await tw.idempotency.run(reset, voidOp)).toBeUndefined();
    expect(runs).toBe(1);
    expect((await tw.idempotency.list("acct-1"))[0]).toMatchObject({ status: "completed", result: null });

    const nullOp = { scope: "acct-1", key: "req-null", operation: "CANCEL" };
    expect(await tw.idempotency.run(nullOp, () => (runs++, null))).toBeNull();
    expect(await tw.idempotency.run(nullOp, () => (runs++, null))).toBeNull();
    expect(runs).toBe(2);
  });

  it("a synchronous fn is run and cached the same way", async () => {
    const { tw } = await engine();
    let runs = 0;
    expect(await tw.idempotency.run(open, () => ++runs)).toBe(1);
    expect(await tw.idempotency.run(open, () => ++runs)).toBe(1);
    expect(runs).toBe(1);
  });

  it("rejects the same key while it is processing with DuplicateRequestError and does not run it", async () => {
    const { tw } = await engine();
    const started = deferred();
    const gate = deferred();
    let runs = 0;
    const first = tw.idempotency.run(open, async () => {
      runs++;
      started.resolve();
      await gate.promise;
      return { success: true, orderId: "o-1" };
    });
    await started.promise;

    const duplicate = tw.idempotency.run(open, async () => {
      runs++;
      return { success: true, orderId: "o-2" };
    });
    await expect(duplicate).rejects.toBeInstanceOf(DuplicateRequestError);
    await expect(duplicate).rejects.toMatchObject({ code: "TW_DUPLICATE_REQUEST", ref: open });
    expect((await tw.idempotency.list("acct-1"))[0]).toMatchObject({ status: "processing", completedAt: null, result: null });

    gate.resolve();
    expect(await first).toEqual({ success: true, orderId: "o-1" });
    // Once it completed, the client's retry gets the first request's answer.
    expect(await tw.idempotency.run(open, async () => ({ success: true, orderId: "o-3" }))).toEqual({ success: true, orderId: "o-1" });
    expect(runs).toBe(1);
  });
});
