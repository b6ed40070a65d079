import fc from "fast-check";
import { INT32_MAX, MAX_DURATION_MS, MAX_TIME_MS } from "../../../src/core/bounds.js";
import { T0 } from "../../support/queue-fixtures.js";

/**
 * Values an adversarial caller passes: every option and argument of the properties is drawn from a
 * mix of values the API takes and values at and beyond its bounds, of every JavaScript type.
 */

/** Any UTF-16 code unit: NUL and lone surrogates included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

export const loneSurrogate = fc.constantFrom("\ud800", "\udbff", "\udc00", "\udfff");

/** Strings of the lengths that bounds sit at (255 keys, 500 indexed text, 512 cache keys) and far past them. */
const longString = fc
  .tuple(fc.constantFrom("k", "é", "😀", "\u0000"), fc.constantFrom(100, 128, 129, 200, 255, 256, 500, 501, 512, 513, 2_000, 3_000, 100_000))
  .map(([ch, n]) => ch.repeat(n));

export const oddString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "a\u0000b",
    "\ud800",
    "order-\ud800",
    "\udc00x",
    "\ud83d\ude00",
    "'; DROP TABLE tickwork_jobs; --",
    "%",
    "%00",
    "\\",
    "\n",
    "null",
    "0",
    "-1",
    "1e400",
    "NaN",
    "all",
    "__proto__",
    "constructor",
  ),
  fc.string({ unit: codeUnit, maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.tuple(fc.string({ maxLength: 6 }), loneSurrogate, fc.string({ maxLength: 6 })).map(([a, s, b]) => a + s + b),
  longString,
);

export const oddNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    1,
    -1,
    0.5,
    1.5,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    INT32_MAX,
    INT32_MAX + 1,
    -INT32_MAX - 1,
    -INT32_MAX - 2,
    2 ** 32,
    2 ** 53,
    2 ** 53 + 2,
    2 ** 63,
    2 ** 64,
    1e20,
    1e300,
    -1e300,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    MAX_TIME_MS,
    MAX_TIME_MS + 1,
    MAX_DURATION_MS,
    MAX_DURATION_MS + 1,
    8.64e15,
    8.64e15 + 1,
  ),
  fc.double(),
  fc.integer(),
  fc.maxSafeInteger(),
);

const oddObject: fc.Arbitrary<unknown> = fc.constantFrom<unknown>(
  {},
  [],
  [1, 2],
  { a: 1 },
  new Date(Number.NaN),
  new Date(8.64e15),
  new Map([["a", 1]]),
  new Set([1]),
  new Error("boom"),
  Object.create(null),
  Symbol("odd"),
  () => 1,
);

/** A value of any type; strings and numbers at the bounds are the likeliest. */
export const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: oddString, weight: 4 },
  { arbitrary: oddNumber, weight: 4 },
  { arbitrary: fc.constantFrom<unknown>(null, undefined, true, false), weight: 1 },
  { arbitrary: fc.bigInt(), weight: 1 },
  { arbitrary: oddObject, weight: 2 },
);

/** An argument that should be an object (options, a filter, an item) given as something else: null first. */
export const notAnObject: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom<unknown>(null, "x", 42, true, [], [1], new Map([["queue", "mail"]]), Symbol("odd"), Object.create(null)), weight: 2 },
  { arbitrary: oddValue, weight: 1 },
);

/** A well-formed name (queues, tasks, deliveries...), or an odd value. */
export function nameOr(valid: fc.Arbitrary<string> = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,20}$/)): fc.Arbitrary<unknown> {
  return fc.oneof(valid, oddValue);
}

/** Durations: the strings and milliseconds the API takes, malformed ones, and ones past 100 years. */
export const duration: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>("500ms", "1s", "30s", "5m", "1h", "1h30m", "2d", "36500d", 1_000, 60_000, 0),
  fc.constantFrom<unknown>("99999999999999999999d", "36501d", "1e300s", "5", "5 m", " 5m ", "-5m", "5x", "1.5.5s", "ms", "1h 30m", "Infinityms", "0x10s"),
  fc.tuple(fc.nat({ max: 1_000_000 }), fc.constantFrom("ms", "s", "m", "h", "d")).map(([n, unit]) => `${n}${unit}`),
  oddValue,
);

/** Absolute times: Dates and epoch ms inside 1970..9999, at its edges, past them, and other types. */
export const instant: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(T0, T0 + 60_000, new Date(T0 + 3_600_000), 0, MAX_TIME_MS, MAX_TIME_MS + 1, -1, 1e20, -1e20, 8.64e15, new Date(MAX_TIME_MS + 1), new Date(-1), "2026-01-01T00:00:00Z", "1h"),
  fc.integer({ min: 0, max: MAX_TIME_MS }),
  fc.date({ noInvalidDate: false }),
  oddValue,
);

/** Integers of a 32-bit column: inside, at the edges, past them, fractional, and other types. */
export const int32: fc.Arbitrary<unknown> = fc.oneof(fc.integer({ min: -5, max: 10 }), fc.integer(), oddNumber, oddValue);

/** Row ids: the decimal strings the API takes, ones past 2^63-1, malformed ones, and numbers. */
export const rowId: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>("1", "2", "42", "9223372036854775807", "9223372036854775808", "99999999999999999999", "18446744073709551616", "0", "-1", "01", "1e3", " 1", "1 ", "1\u0000", "1.0", "+1", "0x10", "１"),
  fc.bigInt({ min: 1n, max: 2n ** 70n }).map(String),
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 70n }),
  oddValue,
);

/** Cron expressions: valid, impossible (31 February), with no future slot, malformed, and odd. */
export const cronExpression: fc.Arbitrary<unknown> = fc.oneof(
  // Slots that never come (31 February, a 30th of February, 31 April) are a third of the draws.
  { arbitrary: fc.constantFrom<unknown>("0 0 31 2 *", "0 0 30 2 *", "0 0 31 4 *", "0 0 31 2,4,6 *", "0 0 30,31 2 *"), weight: 2 },
  {
    arbitrary: fc.constantFrom<unknown>(
      ...["* * * * *", "*/15 * * * *", "0 0 * * *", "0 0 29 2 *", "0 0 31 11 *", "0 0 31 2 1", "0 0 * * 8", "60 * * * *", "* * * *", "* * * * * * *"],
      ...["@yearly", "@reboot", "0 0 1 1 * 1970", "0 0 1 1 * 2020", "L * * * *", "0 0 L 2 *", "0 0 ? * *"],
    ),
    weight: 2,
  },
  {
    arbitrary: fc
      .tuple(fc.constantFrom("*", "0", "59", "*/7", "1-5"), fc.constantFrom("*", "0", "23"), fc.constantFrom("*", "1", "15", "28", "29", "30", "31", "32", "0"), fc.constantFrom("*", "1", "2", "4", "6", "9", "11", "12", "13"), fc.constantFrom("*", "0", "6", "7"))
      .map((parts) => parts.join(" ")),
    weight: 1,
  },
  { arbitrary: oddValue, weight: 1 },
);

/** IANA timezones, made-up ones and odd values. */
export const timezone: fc.Arbitrary<unknown> = fc.oneof(fc.constantFrom<unknown>("UTC", "Europe/Paris", "America/New_York", "Mars/Olympus", "", "UTC\u0000", "+99:00"), oddValue);

/**
 * Payloads: JSON values with odd strings (NUL, lone surrogates) and numbers (1e308, -0), values JSON
 * loses (Map, Set, Error, undefined in arrays, NaN, BigInt, functions), and nesting 10 to 100,000 deep.
 */
export const payload: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 3 },
  {
    arbitrary: fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        oddString,
        oddNumber,
        fc.constantFrom<unknown>(null, true, undefined, new Map([["a", 1]]), new Set([1]), new Error("boom"), 1n, () => 1),
        fc.array(tie("value"), { maxLength: 3 }),
        fc.dictionary(fc.oneof(fc.string({ maxLength: 4 }), oddString), tie("value"), { maxKeys: 3 }),
      ),
    })).value,
    weight: 3,
  },
  { arbitrary: fc.constantFrom(10, 1_000, 5_000, 20_000, 100_000).map(nested), weight: 1 },
);

/**
 * `[[[...[0]...]]]`, `depth` arrays deep; shown as `nested(depth)` in a report, since printing it
 * in full would overflow the reporter's stack.
 */
export function nested(depth: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = [value];
  Object.defineProperty(value, fc.toStringMethod, { value: () => `nested(${depth})` });
  return value;
}

/**
 * An options object: each of `fields` present or not (with a value from its arbitrary), sometimes
 * with a misspelt extra option. `given` lists the options present, for the refusal to name one.
 */
export function optionsOf(fields: Record<string, fc.Arbitrary<unknown>>, extra = true): fc.Arbitrary<{ options: Record<string, unknown>; given: string[] }> {
  const present = Object.fromEntries(Object.entries(fields).map(([k, arb]) => [k, fc.option(arb, { nil: NONE, freq: 2 })]));
  const misspelt = fc.constantFrom<string | undefined>("delai", "priorty", "maxAttempt", "timeOut", "__proto__x");
  const unknownKey = extra ? fc.oneof({ arbitrary: fc.constant(undefined), weight: 9 }, { arbitrary: misspelt, weight: 1 }) : fc.constant(undefined);
  return fc.tuple(fc.record(present), unknownKey).map(([record, misspelt]) => {
    const options: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(record)) if (v !== NONE) options[k] = v;
    if (misspelt !== undefined) options[misspelt] = 1;
    return { options, given: Object.keys(options) };
  });
}

/** An option left out (distinct from one given as `undefined`). */
const NONE: unique symbol = Symbol("none");
