import { describe, expect, it } from "vitest";
import { InvalidInputError, PayloadTooLargeError } from "../../../src/core/errors.js";
import { DEFAULT_PAYLOAD_BYTES } from "../../../src/core/bounds.js";
import { DURABLE_OBJECT_MAX_PAYLOAD_BYTES } from "../../../src/runtime/cloudflare/store.js";
import { allStoreCases } from "../../support/stores.js";
import { engineFor, runUntilIdle } from "../../support/queue-fixtures.js";

/** A payload `{ text }` whose JSON is exactly `bytes` bytes of UTF-8, of `unit` (1 to 4 bytes each) and padding. */
function payloadOf(bytes: number, unit = "a"): { text: string } {
  const frame = JSON.stringify({ text: "" }).length;
  const unitBytes = new TextEncoder().encode(unit).length;
  const units = Math.floor((bytes - frame) / unitBytes);
  const payload = { text: unit.repeat(units) + "a".repeat(bytes - frame - units * unitBytes) };
  expect(new TextEncoder().encode(JSON.stringify(payload)).length).toBe(bytes);
  return payload;
}

describe.each(allStoreCases())("a payload over its queue's maxPayloadBytes is refused, naming its size, and writes nothing ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("the default bound is 1 MiB of UTF-8 JSON: one at the bound is kept whole, one byte over is refused on every enqueue path", async () => {
    const e = await engine();
    const seen: unknown[] = [];
    const q = e.tw.queue<{ text: string }>("docs", { handler: (job) => void seen.push(job.payload) });
    e.tw.queue("summary", { handler: () => {} });
    // Two-byte characters: the bound counts bytes, not characters.
    const atBound = payloadOf(DEFAULT_PAYLOAD_BYTES, "é");
    const over = payloadOf(DEFAULT_PAYLOAD_BYTES + 1, "é");
    expect(over.text.length).toBeLessThan(DEFAULT_PAYLOAD_BYTES / 2 + 1);

    const refusals: [string, () => Promise<unknown>][] = [
      ["enqueue", () => q.enqueue(over)],
      ["enqueueMany", () => q.enqueueMany([{ payload: { text: "small" } }, { payload: over }])],
      ["debounce", () => q.enqueue(over, { key: "doc-1", debounce: "30s" })],
      ["enqueueAndWait", () => q.enqueueAndWait(over, { timeout: "1s" })],
      ["a flow's child", () => q.enqueueFlow({ payload: { text: "root" }, children: [{ queue: "docs", payload: { text: "a" } }, { queue: "docs", payload: over }] })],
      ["a batch's item", () => e.tw.batch([{ text: "a" }, over], { queue: "docs", onComplete: { queue: "summary", payload: {} } })],
      ["a batch's completion", () => e.tw.batch([{ text: "a" }], { queue: "docs", onComplete: { queue: "summary", payload: over } })],
    ];
    for (const [path, call] of refusals) {
      const error = await call().then(() => null, (error: unknown) => error);
      expect(error, path).toBeInstanceOf(PayloadTooLargeError);
      expect(error, path).toBeInstanceOf(InvalidInputError);
      expect(error, path).toMatchObject({ code: "TW_PAYLOAD_TOO_LARGE", bytes: DEFAULT_PAYLOAD_BYTES + 1, limit: DEFAULT_PAYLOAD_BYTES });
      expect((error as Error).message, path).toMatch(/payload is 1048577 bytes as JSON, over queue "(docs|summary)"'s maxPayloadBytes of 1048576/);
    }
    expect(await e.tw.jobs.list({})).toEqual([]);

    const kept = await q.enqueue(atBound);
    await runUntilIdle(e.tw);
    expect(seen).toEqual([atBound]);
    expect((await e.tw.jobs.get(kept.id))!.payload).toEqual(atBound);
  });

  it("a queue sets its own bound, and the error names where in a bulk enqueue the payload was", async () => {
    const e = await engine();
    const q = e.tw.queue<{ text: string }>("small", { maxPayloadBytes: 100 });
    await q.enqueue(payloadOf(100));
    await expect(q.enqueueMany([{ payload: payloadOf(50) }, { payload: payloadOf(50) }, { payload: payloadOf(101, "😀") }])).rejects.toThrow(
      /queue "small"\.enqueueMany\[2\]: payload is 101 bytes as JSON, over queue "small"'s maxPayloadBytes of 100/,
    );
    // A bulk enqueue large enough to be written a slice at a time (where a store does) is refused whole.
    const many = Array.from({ length: 800 }, (_, i) => ({ payload: i === 777 ? payloadOf(101) : payloadOf(60) }));
    await expect(q.enqueueMany(many)).rejects.toThrow(/enqueueMany\[777\]: payload is 101 bytes/);
    expect(await e.tw.jobs.list({})).toHaveLength(1);
  });

  it("maxPayloadBytes is an integer of at least 1 and at most the store's ceiling (64 MiB; 1.5 MiB on a Durable Object)", async () => {
    const e = await engine();
    for (const bad of [0, -1, 1.5, "1MB", 64 * 1024 * 1024 + 1]) {
      expect(() => e.tw.queue(`q${String(bad).replace(/\W/g, "")}`, { maxPayloadBytes: bad as number }), String(bad)).toThrow(/maxPayloadBytes/);
    }
    const ceiling = storeCase.name === "durable-object" ? DURABLE_OBJECT_MAX_PAYLOAD_BYTES : 64 * 1024 * 1024;
    expect(() => e.tw.queue("at-ceiling", { maxPayloadBytes: ceiling })).not.toThrow();
    if (storeCase.name === "durable-object") {
      expect(() => e.tw.queue("past-ceiling", { maxPayloadBytes: ceiling + 1 })).toThrow(/maxPayloadBytes 1572865 is over this store's ceiling of 1572864 bytes/);
    }
  });
});
