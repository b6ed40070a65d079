import { describe, expect, it } from "vitest";
import { textProblem } from "../../../src/core/bounds.js";
import { InvalidInputError } from "../../../src/core/errors.js";
import { Idempotency } from "../../../src/idempotency/idempotency.js";
import type { IdempotencyRunOptions } from "../../../src/idempotency/index.js";
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
      [{ claimScope: "", key: "req-1", operation: "RESET" }, "claimScope"],
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

  it("a scope, key, operation, claimScope or fingerprint past its bound, with a NUL or a lone surrogate is refused by name, before anything is written", async () => {
    const { tw } = await engine();
    let runs = 0;
    const fn = async () => ({ success: true, n: ++runs });
    const base = { scope: "acct-1", key: "req-1", operation: "OPEN_POSITION" };
    const megabyte = "s".repeat(1_000_000);
    const bad: [IdempotencyRunOptions, string][] = [
      // A 1 MB scope once reached PostgreSQL and came back as "index row size ... exceeds" (54000).
      [{ ...base, scope: megabyte }, "scope must be a string of 1 to 255 characters"],
      [{ ...base, scope: "s".repeat(256) }, "scope must be a string of 1 to 255 characters"],
      [{ ...base, operation: "o".repeat(256) }, "operation must be a string of 1 to 255 characters"],
      [{ ...base, claimScope: "c".repeat(256), scope: undefined }, "claimScope must be a string of 1 to 255 characters"],
      [{ ...base, fingerprint: "f".repeat(501) }, "fingerprint must be a string of 1 to 500 characters"],
      [{ ...base, scope: "acct-\u0000" }, "scope contains a NUL character"],
      [{ ...base, key: "req-\u0000" }, "key contains a NUL character"],
      [{ ...base, operation: "OPEN\u0000" }, "operation contains a NUL character"],
      [{ ...base, claimScope: "\u0000", scope: undefined }, "claimScope contains a NUL character"],
      [{ ...base, fingerprint: "ab\u0000" }, "fingerprint contains a NUL character"],
      // PostgreSQL would store a lone surrogate as U+FFFD: two different keys would be one row.
      [{ ...base, key: "order-\ud800" }, "key is not well-formed Unicode"],
      [{ ...base, key: "order-\udc00x" }, "key is not well-formed Unicode"],
      [{ ...base, scope: "acct-\ud83d" }, "scope is not well-formed Unicode"],
      [{ ...base, operation: "\udfffOPEN" }, "operation is not well-formed Unicode"],
      [{ ...base, fingerprint: "\ud800" }, "fingerprint is not well-formed Unicode"],
      [{ ...base, fingerprint: 42 as unknown as string }, "fingerprint must be a string"],
    ];
    for (const [options, says] of bad) {
      const error = await tw.idempotency.run(options, fn).then(() => null, (e: unknown) => e);
      expect(error, JSON.stringify(options).slice(0, 120)).toBeInstanceOf(InvalidInputError);
      expect(error).toMatchObject({ code: "TW_INVALID_INPUT", message: expect.stringContaining(`idempotency.run: ${says}`) });
      // A huge value is previewed in the message, not repeated.
      expect((error as Error).message.length).toBeLessThan(400);
    }
    expect(runs).toBe(0);
    // Looked up only where the store can be asked (a NUL would be refused by PostgreSQL itself).
    const storable = (v: unknown) => typeof v === "string" && v.length <= 255 && textProblem(v) === undefined;
    for (const [{ key, operation }] of bad) {
      if (storable(key) && storable(operation)) expect(await tw.store.idempotency.findByKey({ key: key!, operation })).toBeNull();
    }
    expect(await tw.idempotency.list("acct-1")).toEqual([]);

    // At every bound at once, in the characters that take the most bytes per unit of length (3 for
    // one unit of the Basic Multilingual Plane, 4 for a surrogate pair), a key fits every store,
    // PostgreSQL's primary-key index row included, and is replayed as given.
    const widest = { scope: "€".repeat(255), key: "\u{1F600}".repeat(127) + "k", operation: "語".repeat(255), fingerprint: "€".repeat(500) };
    expect([widest.scope.length, widest.key.length, widest.operation.length]).toEqual([255, 255, 255]);
    expect(await tw.idempotency.run(widest, fn)).toEqual({ success: true, n: 1 });
    expect(await tw.idempotency.run(widest, fn)).toEqual({ success: true, n: 1 });
    expect(await tw.idempotency.list(widest.scope)).toMatchObject([{ scope: widest.scope, key: widest.key, operation: widest.operation, fingerprint: widest.fingerprint }]);
  });

  it("list() refuses an empty, overlong or NUL scope and a limit that is not a positive 32-bit integer", async () => {
    const { tw } = await engine();
    for (const [scope, limit, says] of [
      ["", 50, "scope"],
      ["s".repeat(256), 50, "scope"],
      ["acct-\u0000", 50, "scope"],
      ["acct-\ud800", 50, "scope"],
      ["acct-1", 0, "limit"],
      ["acct-1", 1.5, "limit"],
      ["acct-1", 1e20, "limit"],
      ["acct-1", Number.NaN, "limit"],
    ] as const) {
      await expect(tw.idempotency.list(scope, limit)).rejects.toMatchObject({ code: "TW_INVALID_INPUT", message: expect.stringContaining(`idempotency.list: ${says}`) });
    }
  });

  it("ttl and staleAfter past 100 years, malformed, or a ttl shorter than staleAfter are refused by name when the engine is created", async () => {
    const refused: [Record<string, unknown>, string][] = [
      [{ ttl: "99999999999999999999d" }, "ttl"],
      [{ ttl: 1e300 }, "ttl"],
      [{ ttl: "36501d" }, "ttl"],
      [{ ttl: -1 }, "ttl"],
      [{ staleAfter: "1e300s" }, "staleAfter"],
      [{ staleAfter: 1e20 }, "staleAfter"],
      [{ staleAfter: "500ms" }, "staleAfter: must be at least 1s"],
      [{ ttl: "30s" }, "ttl: must be at least staleAfter"],
      [{ ttl: "1h", staleAfter: "2h" }, "ttl: must be at least staleAfter"],
      [{ isFailure: "yes" }, "isFailure"],
      [{ staleafter: "10s" }, "staleafter"],
    ];
    const { tw, clock } = await engine();
    const deps = { store: tw.store.idempotency, clock, logger: tw.logger };
    for (const [idempotency, says] of refused) {
      // createTickwork builds its Idempotency with the options it was given, before it migrates.
      expect(() => new Idempotency(deps, idempotency as never), JSON.stringify(idempotency)).toThrow(
        expect.objectContaining({ code: "TW_INVALID_INPUT", message: expect.stringMatching(new RegExp(`^idempotency options: .*${says}`)) }),
      );
    }
    // The bounds themselves are accepted.
    expect(new Idempotency(deps, { ttl: "36500d", staleAfter: "1s" }).ttlMs).toBe(36_500 * 86_400_000);
  });
});
