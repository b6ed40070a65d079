import { describe, expect, it } from "vitest";
import { InvalidPayloadError } from "../../../src/core/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("a result that is not JSON ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("is refused with a clear error and frees the key instead of leaving it processing", async () => {
    const { tw } = await engine();
    const ref = { scope: "acct", key: "r1", operation: "OPEN" };
    const error = await tw.idempotency.run(ref, async () => ({ amount: 10n })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidPayloadError);
    expect((error as Error).message).toBe('idempotency OPEN: the result is not JSON-serialisable: "amount" is a bigint');
    expect(await tw.store.idempotency.find(ref)).toBeNull();
    expect(await tw.idempotency.run(ref, async () => ({ amount: "10" }))).toEqual({ amount: "10" });
  });
});
