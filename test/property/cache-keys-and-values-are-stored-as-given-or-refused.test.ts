import fc from "fast-check";
import { beforeAll, describe, it } from "vitest";
import type { Tickwork } from "../../src/tickwork.js";
import { duration, instant, oddString, oddValue, payload } from "./support/arbitraries.js";
import { CHECKS, PROPERTY_TIMEOUT, assertProperty, judge, lossyAt } from "./support/outcome.js";
import { STORE_KINDS, propertyStore, runEngine, uniqueName } from "./support/stores.js";

/** Keys: ordinary (made unique per run), at and past 512 characters, NUL, lone surrogates, other types. */
const key = fc.oneof(
  fc.string({ minLength: 1, maxLength: 8 }).map((k) => `${uniqueName("c")}:${k}`),
  oddString.map((k) => (k.length > 0 && k.length < 100 ? `${uniqueName("c")}:${k}` : k)),
  oddString,
  oddValue,
);

describe.each(STORE_KINDS)("cache at the input boundary ($name)", { timeout: PROPERTY_TIMEOUT }, (kind) => {
  const ps = propertyStore(kind);
  let tw: Tickwork;

  beforeAll(async () => {
    ({ tw } = await runEngine(ps));
  });

  it.each(CHECKS)("put stores the value under the key as given, or refuses it ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(key, payload, fc.option(instant, { nil: undefined }), async (k, value, fetchedAt) => {
        const options = fetchedAt === undefined ? {} : { fetchedAt: fetchedAt as number };
        await judge(ps, check, () => tw.cache.put(k as string, value, options), {
          names: ["key", "value", ...(fetchedAt === undefined ? [] : ["fetchedAt"])],
          accepted: async (entry) => {
            const lost = lossyAt(value, "value");
            if (lost) throw new Error(`put accepted a value that JSON changes, at ${lost}`);
            const read = await tw.cache.get(k as string);
            if (!read) throw new Error("get does not find the key just put");
            if (JSON.stringify(read.value) !== JSON.stringify(value)) throw new Error(`get answered ${JSON.stringify(read.value)?.slice(0, 200)}, not the value put`);
            if (read.fetchedAt !== entry.fetchedAt) throw new Error(`get answered fetchedAt ${read.fetchedAt}, put ${entry.fetchedAt}`);
          },
        });
      }),
      check,
    );
  });

  it.each(CHECKS)("get and delete answer or refuse any key and maxAge ($says)", async ({ check }) => {
    await assertProperty(
      fc.asyncProperty(fc.constantFrom("get", "delete"), key, fc.option(duration, { nil: undefined }), async (method, k, maxAge) => {
        const call: () => Promise<unknown> = method === "get" ? () => tw.cache.get(k as string, maxAge === undefined ? {} : { maxAge: maxAge as number }) : () => tw.cache.delete(k as string);
        await judge(ps, check, call, { names: ["key", "maxAge"] });
      }),
      check,
    );
  });
});
