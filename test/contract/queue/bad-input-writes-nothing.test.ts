import { describe, expect, it } from "vitest";
import { InvalidInputError, InvalidPayloadError } from "../../../src/core/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("bad input writes nothing ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("an enqueueMany batch whose item 5 has a non-JSON payload writes none of the batch", async () => {
    const { tw } = await engine();
    const q = tw.queue("imports", { handler: () => {} });
    const items: { payload: unknown; key?: string }[] = Array.from({ length: 10 }, (_, n) => ({ payload: { row: n }, key: `row-${n}` }));
    items[4] = { payload: { row: 4, parse: () => 4 }, key: "row-4" };

    const attempt = q.enqueueMany(items);

    await expect(attempt).rejects.toBeInstanceOf(InvalidPayloadError);
    await expect(attempt).rejects.toMatchObject({ code: "TW_INVALID_PAYLOAD", message: expect.stringContaining("enqueueMany[4]") });
    expect(await tw.jobs.list({ queue: "imports" })).toEqual([]);
    expect(await tw.jobs.counts()).toEqual([]);
    // None of the keys was taken: the valid items go in as new jobs afterwards.
    const valid = items.filter((_, i) => i !== 4);
    const written = await q.enqueueMany(valid);
    expect(written.map((j) => j.duplicate)).toEqual(valid.map(() => false));
    expect(await tw.jobs.list({ queue: "imports" })).toHaveLength(9);
  });

  it("other non-JSON payloads and bad options are refused before anything is written", async () => {
    const { tw } = await engine();
    const q = tw.queue("imports", { handler: () => {} });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;

    for (const payload of [undefined, cyclic, { n: Number.NaN }, { big: 10n }, { s: Symbol("x") }]) {
      await expect(q.enqueue(payload)).rejects.toBeInstanceOf(InvalidPayloadError);
    }
    await expect(q.enqueueMany([{ payload: 1 }, { payload: 2, priority: 1.5 }])).rejects.toBeInstanceOf(InvalidInputError);
    await expect(q.enqueueMany([{ payload: 1 }, { payload: 2, runAt: Number.NaN }])).rejects.toBeInstanceOf(InvalidInputError);
    await expect(q.enqueueMany([{ payload: 1, key: "" }])).rejects.toBeInstanceOf(InvalidInputError);
    await expect(q.enqueueMany([{ payload: 1 }, { payload: 2, runAt: 0, delay: "1m" }])).rejects.toBeInstanceOf(InvalidInputError);
    await expect(q.enqueueMany([{ payload: 1 }, { payload: 2, maxAttempts: 0 }])).rejects.toBeInstanceOf(InvalidInputError);

    expect(await tw.jobs.counts()).toEqual([]);
    expect((await tw.tick()).ran).toBe(0);
  });
});

describe.each(allStoreCases())("values out of a store's range are refused naming the field and the bound, and write nothing ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("enqueue options: delay, runAt, maxAttempts, priority and key beyond what a store can hold", async () => {
    const { tw } = await engine();
    const q = tw.queue("orders", { handler: () => {} });
    const refused: [Record<string, unknown>, RegExp][] = [
      [{ delay: "99999999999999999999d" }, /delay.*100 years/],
      [{ delay: 1e300 }, /delay.*100 years/],
      [{ delay: Number.POSITIVE_INFINITY }, /delay.*100 years/],
      [{ runAt: 1e20 }, /runAt.*9999/],
      [{ runAt: new Date(8.64e15) }, /runAt.*9999/],
      [{ runAt: -1 }, /runAt.*1970/],
      [{ maxAttempts: 2 ** 31 }, /maxAttempts.*2147483647/],
      [{ maxAttempts: 1e300 }, /maxAttempts.*2147483647/],
      [{ priority: 2 ** 31 }, /priority.*2147483647/],
      [{ priority: -(2 ** 31) - 1 }, /priority.*-2147483647/],
      [{ key: "order-\ud800" }, /key.*(lone surrogate|well-formed)/],
      [{ key: "order-\udc00-x" }, /key.*(lone surrogate|well-formed)/],
      [{ key: "order-\u0000" }, /key.*NUL/],
      [{ key: "k".repeat(256) }, /key.*255/],
    ];
    for (const [options, message] of refused) {
      const attempt = q.enqueue({ n: 1 }, options);
      await expect(attempt, JSON.stringify(options)).rejects.toBeInstanceOf(InvalidInputError);
      await expect(attempt, JSON.stringify(options)).rejects.toThrow(message);
    }
    expect(await tw.jobs.counts()).toEqual([]);

    // The bounds themselves are accepted, and a well-formed pair of surrogates is a character like any other.
    const fine = await q.enqueueMany([
      { payload: 1, key: "order-\ud83d\ude00", priority: 2 ** 31 - 1, maxAttempts: 2 ** 31 - 1 },
      { payload: 2, runAt: Date.UTC(9999, 11, 31, 23, 59, 59, 999), priority: -(2 ** 31) + 1 },
      { payload: 3, delay: "36500d" },
    ]);
    expect(fine.map((j) => j.duplicate)).toEqual([false, false, false]);
    expect(await tw.jobs.get(fine[0]!.id)).toMatchObject({ key: "order-\ud83d\ude00", priority: 2 ** 31 - 1, maxAttempts: 2 ** 31 - 1 });
    expect((await tw.jobs.get(fine[1]!.id))?.runAt).toBe(Date.UTC(9999, 11, 31, 23, 59, 59, 999));
  });

  it("an enqueueMany with one key that is not well-formed Unicode among good ones writes none of them", async () => {
    const { tw } = await engine();
    const q = tw.queue("orders", { handler: () => {} });
    const items = Array.from({ length: 5 }, (_, n) => ({ payload: { n }, key: `order-${n}` }));
    items[3] = { payload: { n: 3 }, key: "order-\ud800" };

    const attempt = q.enqueueMany(items);

    await expect(attempt).rejects.toBeInstanceOf(InvalidInputError);
    await expect(attempt).rejects.toThrow(/enqueueMany\[3\]: key/);
    expect(await tw.jobs.counts()).toEqual([]);
    // "order-\ud800" and "order-\udbff" would both be stored as "order-\ufffd": neither gets in, so they cannot collide.
    await expect(q.enqueue({}, { key: "order-\udbff" })).rejects.toBeInstanceOf(InvalidInputError);
    expect(await tw.jobs.counts()).toEqual([]);
  });

  it("job ids beyond 2^63-1 or malformed, and list filters with NUL or lone surrogates, are refused by get, cancel, retry and list", async () => {
    const { tw } = await engine();
    tw.queue("orders", { handler: () => {} });
    const { id } = await tw.enqueue("orders", {});
    for (const bad of ["9223372036854775808", "9999999999999999999", "99999999999999999999", "0", "-1", "1e3", "12 ", "", "\u0000"]) {
      for (const call of [() => tw.jobs.get(bad), () => tw.jobs.cancel(bad), () => tw.jobs.retry(bad), () => tw.jobs.list({ before: bad })]) {
        const attempt = call();
        await expect(attempt, bad).rejects.toBeInstanceOf(InvalidInputError);
        await expect(attempt, bad).rejects.toThrow(/id.*9223372036854775807/);
      }
    }
    // The largest id is a valid id that no job has.
    expect(await tw.jobs.get("9223372036854775807")).toBeNull();
    expect((await tw.jobs.list({ before: "9223372036854775807" })).map((j) => j.id)).toEqual([id]);

    for (const key of ["a\u0000b", "order-\ud800", "k".repeat(501)]) {
      await expect(tw.jobs.list({ key }), JSON.stringify(key)).rejects.toBeInstanceOf(InvalidInputError);
    }
    for (const queue of ["orders\u0000", "orders-\ud800"]) {
      await expect(tw.jobs.list({ queue }), JSON.stringify(queue)).rejects.toBeInstanceOf(InvalidInputError);
      await expect(tw.jobs.counts(queue), JSON.stringify(queue)).rejects.toBeInstanceOf(InvalidInputError);
      await expect(tw.jobs.retryFailed(queue), JSON.stringify(queue)).rejects.toBeInstanceOf(InvalidInputError);
    }
    expect(await tw.jobs.get(id)).toMatchObject({ status: "pending" });
  });

  it("queue options beyond their bounds are refused at declaration, naming the option", async () => {
    const { tw } = await engine();
    const refused: [Record<string, unknown>, RegExp][] = [
      [{ lease: 1e300 }, /lease.*100 years/],
      [{ lease: "99999999999999999999d" }, /lease.*100 years/],
      [{ timeout: 1e300 }, /timeout.*100 years/],
      [{ timeout: "30d" }, /timeout.*2147483647/],
      [{ rateLimit: { max: 2 ** 31, per: "1s" } }, /rateLimit\.max.*2147483647/],
      [{ rateLimit: { max: 5, per: 0 } }, /rateLimit\.per/],
      [{ rateLimit: { max: 5, per: 1e300 } }, /rateLimit\.per.*100 years/],
      [{ retry: { maxAttempts: 2 ** 31 } }, /retry\.maxAttempts/],
      [{ concurrency: 1e300 }, /concurrency/],
      [{ batchSize: 2 ** 31 }, /batchSize/],
    ];
    for (const [i, [options, message]] of refused.entries()) {
      let error: unknown;
      try {
        tw.queue(`bounded-${i}`, { handler: () => {}, ...options });
      } catch (thrown) {
        error = thrown;
      }
      expect(error, JSON.stringify(options)).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message, JSON.stringify(options)).toMatch(message);
    }
    for (const name of ["orders\u0000", "orders-\ud800", "o".repeat(129)]) {
      expect(() => tw.queue(name, { handler: () => {} }), JSON.stringify(name)).toThrow(InvalidInputError);
    }
    // The longest lease and timeout that fit are accepted.
    expect(() => tw.queue("longest", { handler: () => {}, lease: "36500d", timeout: 2_147_483_647 })).not.toThrow();
  });
});
