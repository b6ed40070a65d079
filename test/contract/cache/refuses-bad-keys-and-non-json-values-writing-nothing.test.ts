import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { T0, enginesFor } from "../../support/schedule-fixtures.js";

/** A key as untyped callers can pass it. */
const key = (value: unknown) => value as string;

const badKeys: [string, unknown, RegExp][] = [
  ["an empty key", "", /cache key must be a string of 1 to 512 characters, got ""/],
  ["a key of 513 characters", "k".repeat(513), /cache key must be a string of 1 to 512 characters, got a string of 513 characters starting "k{80}"/],
  ["a number", 42, /cache key must be a string .*got 42/],
  ["undefined", undefined, /cache key must be a string .*got undefined/],
  ["an object", { id: 1 }, /cache key must be a string .*got \{"id":1\}/],
  // PostgreSQL refuses NUL in text (22021) and stores a lone surrogate as U+FFFD, where two keys would meet.
  ["a key with NUL", "price:\u0000stx", /cache key contains a NUL character/],
  ["a key with a lone high surrogate", "price:\ud800", /cache key is not well-formed Unicode \(a lone surrogate at index 6\)/],
  ["a key with a lone low surrogate", "\udc00", /cache key is not well-formed Unicode \(a lone surrogate at index 0\)/],
];

const cyclic: Record<string, unknown> = { a: 1 };
cyclic["self"] = cyclic;

const badValues: [string, unknown, RegExp][] = [
  ["undefined", undefined, /undefined has no JSON form/],
  ["a function", () => 1, /is a function/],
  ["a BigInt field", { price: 10n }, /"price" is a bigint/],
  ["NaN", { price: Number.NaN }, /"price" is NaN/],
  ["Infinity", Number.POSITIVE_INFINITY, /Infinity/],
  ["a symbol", Symbol("x"), /symbol/],
  ["a cycle", cyclic, /circular/i],
  ["an array with a hole of undefined", [1, undefined], /"\[1\]" is undefined, which JSON would turn into null/],
];

describe.each(allStoreCases())("tw.cache refuses bad keys and values before writing anything ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);

  it.each(badKeys)("put, get and delete refuse %s", async (_what, bad, message) => {
    const { tw } = await engines.first();
    for (const call of [() => tw.cache.put(key(bad), 1), () => tw.cache.get(key(bad)), () => tw.cache.delete(key(bad))]) {
      await expect(call()).rejects.toThrow(InvalidInputError);
      await expect(call()).rejects.toThrow(message);
    }
  });

  it("a key with a surrogate pair (an emoji) is accepted and kept apart from U+FFFD", async () => {
    const { tw } = await engines.first();
    await tw.cache.put("price:😀", 1);
    await tw.cache.put("price:\ufffd", 2);
    expect(await tw.cache.get("price:😀")).toEqual({ value: 1, fetchedAt: T0 });
    expect(await tw.cache.get("price:\ufffd")).toEqual({ value: 2, fetchedAt: T0 });
  });

  it("values with NUL and lone surrogates in their strings are stored and read back exactly", async () => {
    const { tw } = await engines.first();
    const value = { nul: "a\u0000b", high: "\ud800", low: "x\udc00", ["k\u0000"]: ["\udfff"] };
    await tw.cache.put("odd", value);
    const read = await tw.cache.get("odd");
    expect(JSON.stringify(read?.value)).toBe(JSON.stringify(value));
  });

  it("a key of exactly 512 characters is accepted", async () => {
    const { tw } = await engines.first();
    await tw.cache.put("k".repeat(512), "ok");
    expect(await tw.cache.get("k".repeat(512))).toEqual({ value: "ok", fetchedAt: T0 });
  });

  it.each(badValues)("put refuses %s as a value, naming the problem, and keeps the old value", async (_what, bad, message) => {
    const { tw } = await engines.first();
    await tw.cache.put("tenero:price:stx", { price: 1 });
    await expect(tw.cache.put("tenero:price:stx", bad)).rejects.toThrow(InvalidInputError);
    await expect(tw.cache.put("tenero:price:stx", bad)).rejects.toThrow(message);
    await expect(tw.cache.put("tenero:price:new", bad)).rejects.toThrow(/cache\.put\("tenero:price:new"\): the value is not JSON-serialisable/);
    expect(await tw.cache.get("tenero:price:stx")).toEqual({ value: { price: 1 }, fetchedAt: T0 });
    expect(await tw.cache.get("tenero:price:new")).toBeNull();
  });

  it("put refuses a fetchedAt that is not a time, and get refuses a maxAge that is not a duration", async () => {
    const { tw } = await engines.first();
    for (const fetchedAt of [Number.NaN, new Date("yesterday"), 1.5, "2026-01-01" as unknown as number]) {
      await expect(tw.cache.put("a", 1, { fetchedAt })).rejects.toThrow(/cache\.put: fetchedAt must be a Date or epoch milliseconds/);
    }
    expect(await tw.cache.get("a")).toBeNull();
    await tw.cache.put("a", 1);
    await expect(tw.cache.get("a", { maxAge: "soon" })).rejects.toThrow(/^cache\.get: maxAge: invalid duration "soon"/);
    for (const fetchedAt of [1e20, Date.UTC(10_000, 0, 1), -1]) {
      await expect(tw.cache.put("b", 1, { fetchedAt })).rejects.toThrow(/^cache\.put: fetchedAt must be a time from 1970 to 9999/);
    }
    await expect(tw.cache.put("b", 1, { fetchedAt: "x".repeat(100_000) as unknown as number })).rejects.toThrow(/^cache\.put: fetchedAt must be a Date or epoch milliseconds \(an integer\), got a string of 100000 characters starting "x{80}"$/);
    expect(await tw.cache.get("b")).toBeNull();
    await expect(tw.cache.get("a", { maxAge: -1 })).rejects.toThrow(InvalidInputError);
  });
});
