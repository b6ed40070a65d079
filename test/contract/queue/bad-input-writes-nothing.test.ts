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
