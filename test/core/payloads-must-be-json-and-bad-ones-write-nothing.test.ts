import { describe, expect, it } from "vitest";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import { InvalidInputError, InvalidPayloadError } from "../../src/core/errors.js";
import { MAX_JSON_DEPTH } from "../../src/core/bounds.js";
import { serialiseJson } from "../../src/core/json.js";
import { sqlite } from "../../src/store/sqlite.js";
import { engineFor } from "../support/queue-fixtures.js";
import { allStoreCases } from "../support/stores.js";

function cyclic(): unknown {
  const node: Record<string, unknown> = { name: "a" };
  node.self = node;
  return node;
}

/** Values JSON cannot carry faithfully, and the words the refusal should use. */
const REFUSED: Array<[string, () => unknown, RegExp]> = [
  ["a function", () => () => 1, /the payload is a function/],
  ["a function in a field", () => ({ onDone: () => 1 }), /"onDone" is a function/],
  ["a symbol", () => Symbol("s"), /the payload is a symbol/],
  ["a symbol in a field", () => ({ tag: Symbol("s") }), /"tag" is a symbol/],
  ["a BigInt", () => 10n, /the payload is a bigint/],
  ["a BigInt in a field", () => ({ amount: 10n }), /"amount" is a bigint/],
  ["a cycle", cyclic, /circular/],
  ["undefined", () => undefined, /undefined has no JSON form/],
  ["undefined in an array", () => [1, undefined, 3], /"\[1\]" is undefined, which JSON would turn into null/],
  ["NaN", () => Number.NaN, /the payload is NaN, which JSON would turn into null/],
  ["Infinity in a field", () => ({ ratio: Number.POSITIVE_INFINITY }), /"ratio" is Infinity/],
  ["-Infinity in an array", () => [Number.NEGATIVE_INFINITY], /"\[0\]" is -Infinity/],
  // Values JSON.stringify turns into {} without a word: refused, naming the path to them.
  ["a Map", () => new Map([["a", 1]]), /the payload is a Map, which JSON would turn into \{\}/],
  ["a Set deep in a field", () => ({ user: { tags: new Set(["a"]) } }), /"user\.tags" is a Set, which JSON would turn into \{\}/],
  ["an Error in an array", () => ({ errors: [{ at: 1 }, new TypeError("boom")] }), /"errors\[1\]" is an Error, which JSON would turn into \{\}/],
  ["a WeakMap", () => ({ cache: new WeakMap() }), /"cache" is a WeakMap/],
  ["a RegExp", () => ({ pattern: /a+/ }), /"pattern" is a RegExp/],
  ["a Promise (a missing await)", () => ({ price: Promise.resolve(1) }), /"price" is a Promise/],
  ["a Map inside an array inside a Map-free object", () => [{ a: [1, { b: new Map() }] }], /"\[0\]\.a\[1\]\.b" is a Map/],
  ["undefined deep in an array", () => ({ items: [1, undefined] }), /"items\[1\]" is undefined, which JSON would turn into null/],
  ["a BigInt deep in a field", () => ({ order: { lines: [{ amount: 5n }] } }), /"order\.lines\[0\]\.amount" is a bigint/],
  ["a value nested deeper than the bound", () => nested(MAX_JSON_DEPTH + 1), new RegExp(`nested more than ${MAX_JSON_DEPTH} levels deep`)],
  ["a getter that throws", () => ({ get broken() { throw new Error("no value"); } }), /no value/],
];

/** `[[...[0]...]]`, `depth` arrays deep. */
function nested(depth: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** What JSON keeps; the read-back value is the JSON text's, e.g. a Date's ISO string. */
const ACCEPTED: Array<[string, unknown]> = [
  ["null", null],
  ["a nested object", { user: { id: 7, tags: ["a", "b"], address: { city: "Oslo", zip: null } }, flag: true }],
  ["an array", [1, "two", { three: 3 }, [4]]],
  ["a string", "hello"],
  ["a Date (as its ISO text, through toJSON)", { at: new Date(Date.UTC(2026, 0, 1)) }],
  ["an object without a prototype", Object.assign(Object.create(null) as object, { a: 1 })],
  ["an object with its own toJSON", { toJSON: () => ({ shown: true }) }],
  ["a value nested exactly as deep as the bound", nested(MAX_JSON_DEPTH)],
  ["an empty string", ""],
  ["a number", 42.5],
  ["false", false],
];

async function withEngine(run: (tw: Tickwork) => Promise<void>): Promise<void> {
  const tw = await createTickwork({ store: sqlite(":memory:"), logger: () => {} });
  try {
    await run(tw);
  } finally {
    await tw.stop();
  }
}

async function jobsWritten(tw: Tickwork): Promise<number> {
  const counts = await tw.jobs.counts();
  const total = counts.reduce((sum, c) => sum + Object.values(c.counts).reduce((a, b) => a + b, 0), 0);
  expect((await tw.jobs.list()).length).toBe(total);
  return total;
}

describe("serialiseJson", () => {
  it.each(REFUSED)("refuses %s with InvalidPayloadError (TW_INVALID_PAYLOAD)", (_what, make, reason) => {
    let caught: unknown;
    try {
      serialiseJson(make());
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidPayloadError);
    expect(caught).toBeInstanceOf(InvalidInputError);
    expect((caught as InvalidPayloadError).code).toBe("TW_INVALID_PAYLOAD");
    expect((caught as Error).message).toMatch(/^job payload is not JSON-serialisable: /);
    expect((caught as Error).message).toMatch(reason);
  });

  it.each(ACCEPTED)("accepts %s as its JSON text", (_what, payload) => {
    expect(serialiseJson(payload)).toBe(JSON.stringify(payload));
  });

  it("leaves out an object property that is undefined, as JSON does (it reads back as undefined)", () => {
    expect(serialiseJson({ a: 1, b: undefined })).toBe('{"a":1}');
  });
});

describe("queue.enqueue with a payload", () => {
  it.each(REFUSED)("refuses %s, names the queue, and writes nothing", async (_what, make, reason) => {
    await withEngine(async (tw) => {
      const queue = tw.queue("emails");
      const attempt = queue.enqueue(make());
      await expect(attempt).rejects.toBeInstanceOf(InvalidPayloadError);
      await expect(attempt).rejects.toMatchObject({ code: "TW_INVALID_PAYLOAD" });
      await expect(attempt).rejects.toThrow(/^queue "emails".enqueue: job payload is not JSON-serialisable: /);
      await expect(attempt).rejects.toThrow(reason);
      expect(await jobsWritten(tw)).toBe(0);
    });
  });

  it("refuses a batch with one bad payload without writing any of it, naming the item", async () => {
    await withEngine(async (tw) => {
      const queue = tw.queue("emails");
      const attempt = queue.enqueueMany([{ payload: { ok: 1 } }, { payload: { ok: 2 } }, { payload: { when: 1n } }]);
      await expect(attempt).rejects.toBeInstanceOf(InvalidPayloadError);
      await expect(attempt).rejects.toThrow(/^queue "emails".enqueueMany\[2\]: job payload is not JSON-serialisable: "when" is a bigint/);
      expect(await jobsWritten(tw)).toBe(0);
    });
  });

  it("accepts null, nested objects, arrays, strings, numbers and booleans, and stores them as given", async () => {
    await withEngine(async (tw) => {
      const queue = tw.queue("emails");
      for (const [what, payload] of ACCEPTED) {
        const job = await queue.enqueue(payload);
        const asJson: unknown = JSON.parse(JSON.stringify(payload));
        expect(job.payload, what).toEqual(payload);
        expect((await tw.jobs.get(job.id))?.payload, what).toEqual(asJson);
      }
      expect(await jobsWritten(tw)).toBe(ACCEPTED.length);
    });
  });
});

/**
 * JSON text escapes NUL (`\u0000`) and lone surrogates (`\ud800`), so a payload holding them is
 * ASCII in the store: PostgreSQL's `json` column keeps the text as given (a `jsonb` column would
 * refuse `\u0000`), SQLite's text column too. They are accepted, and every store hands back the
 * same strings, in values and in property names.
 */
describe.each(allStoreCases())("payload strings with NUL and lone surrogates ($name)", (storeCase) => {
  const engine = engineFor(storeCase);
  const odd = { nul: "a\u0000b", high: "x\ud800", low: "\udc00y", pair: "😀", ["k\u0000"]: 1, ["\ud800"]: ["\u0000", "\udfff"] };

  it("are stored and read back exactly, in a job's payload", async () => {
    const { tw } = await engine();
    const job = await tw.queue("odd").enqueue(odd);
    const read = await tw.jobs.get(job.id);
    expect(JSON.stringify(read?.payload)).toBe(JSON.stringify(odd));
    expect(read?.payload).toEqual(odd);
  });
});
