import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CacheEntry } from "../../src/cache/index.js";
import { startObjects, type Objects } from "./support/objects.js";

describe.concurrent("tw.cache on Workers KV (seed 003: prices in KV, read by the Worker's routes)", () => {
  let objects: Objects;
  beforeAll(async () => {
    objects = await startObjects();
  });
  afterAll(() => objects?.dispose());

  it("put stores the value as plain JSON under the prefixed key with fetchedAt in the metadata; get returns both", async () => {
    const fetchedAt = await objects.call<number>("KVCACHED", "a", "put", "tenero:price:stx", { price: 1.25, rateLimit: null });
    const kv = await objects.mf.getKVNamespace("CACHE", "objects");
    const stored = await kv.getWithMetadata("prices:tenero:price:stx", "text");
    expect(JSON.parse(stored.value!)).toEqual({ price: 1.25, rateLimit: null });
    expect(stored.metadata).toEqual({ fetchedAt });
    expect(await objects.call<CacheEntry<unknown>>("KVCACHED", "a", "get", "tenero:price:stx")).toEqual({ value: { price: 1.25, rateLimit: null }, fetchedAt });
  });

  it("get with maxAge returns null once the value is older; a missing key is null", async () => {
    await objects.call("KVCACHED", "b", "put", "tenero:price:btc", { price: 97_000 });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(await objects.call("KVCACHED", "b", "get", "tenero:price:btc", "10ms")).toBeNull();
    expect(await objects.call("KVCACHED", "b", "get", "tenero:price:btc", "1h")).toMatchObject({ value: { price: 97_000 } });
    expect(await objects.call("KVCACHED", "b", "get", "tenero:price:none")).toBeNull();
  });

  it("delete says whether the key was there", async () => {
    await objects.call("KVCACHED", "c", "put", "k", 1);
    expect(await objects.call("KVCACHED", "c", "delete", "k")).toBe(true);
    expect(await objects.call("KVCACHED", "c", "delete", "k")).toBe(false);
    expect(await objects.call("KVCACHED", "c", "get", "k")).toBeNull();
  });

  it("bad keys and values are refused before anything is written", async () => {
    await expect(objects.call("KVCACHED", "d", "put", "", 1)).rejects.toThrow(/cache key must be a string of 1 to 512 characters/);
    await expect(objects.call("KVCACHED", "d", "put", "x".repeat(513), 1)).rejects.toThrow(/cache key must be/);
    const kv = await objects.mf.getKVNamespace("CACHE", "objects");
    expect((await kv.list({ prefix: "prices:x" })).keys).toEqual([]);
  });
});
