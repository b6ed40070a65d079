import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import type { IdempotencyRunOptions } from "../../../src/index.js";
import { allStoreCases } from "../../support/stores.js";
import { engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("bad input is refused before anything is written ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("a key over 255 characters, an empty operation or a missing scope throws InvalidInputError, runs nothing and writes nothing", async () => {
    const { tw } = await engine();
    let runs = 0;
    const fn = async () => ({ success: true, n: ++runs });
    const long = "k".repeat(256);
    const bad: [IdempotencyRunOptions, string][] = [
      [{ scope: "acct-1", key: long, operation: "OPEN_POSITION" }, "255"],
      [{ scope: "acct-1", key: "req-1", operation: "" }, "operation"],
      [{ scope: "acct-1", key: "req-1", operation: undefined as unknown as string }, "operation"],
      [{ key: "req-1", operation: "OPEN_POSITION" }, "scope"],
      [{ scope: "", key: "req-1", operation: "OPEN_POSITION" }, "scope"],
      [{ claimScope: "", key: "req-1", operation: "RESET" }, "scope"],
      [{ scope: "acct-1", key: 42 as unknown as string, operation: "OPEN_POSITION" }, "key"],
    ];
    for (const [options, names] of bad) {
      const attempt = tw.idempotency.run(options, fn);
      await expect(attempt, JSON.stringify(options)).rejects.toBeInstanceOf(InvalidInputError);
      await expect(attempt).rejects.toMatchObject({ code: "TW_INVALID_INPUT", message: expect.stringContaining(names) });
    }
    expect(runs).toBe(0);
    expect(await tw.idempotency.list("acct-1")).toEqual([]);
    for (const [key, operation] of [[long, "OPEN_POSITION"], ["req-1", ""], ["req-1", "OPEN_POSITION"], ["req-1", "RESET"]] as const) {
      expect(await tw.store.idempotency.findByKey({ key, operation })).toBeNull();
    }

    // 255 characters is the limit, not over it.
    const longest = "k".repeat(255);
    expect(await tw.idempotency.run({ scope: "acct-1", key: longest, operation: "OPEN_POSITION" }, fn)).toEqual({ success: true, n: 1 });
    expect(await tw.idempotency.run({ scope: "acct-1", key: longest, operation: "OPEN_POSITION" }, fn)).toEqual({ success: true, n: 1 });
  });

  it("list() refuses an empty scope", async () => {
    const { tw } = await engine();
    await expect(tw.idempotency.list("")).rejects.toBeInstanceOf(InvalidInputError);
  });
});
