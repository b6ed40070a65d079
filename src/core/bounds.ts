import { InvalidInputError, preview } from "./errors.js";

export { preview };

/**
 * The bounds every value the API takes is held to, checked before anything is written so that a
 * value the store cannot hold is refused by tickwork with the field's name, never by the driver.
 * The figures follow the narrowest store: PostgreSQL's `integer` and `bigint` columns and its
 * btree index rows (about 2,700 bytes, so an indexed text of 500 characters fits at 4 bytes each).
 */

/** Times are epoch milliseconds from 1970 to the end of year 9999. */
export const MAX_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/** Durations (delays, leases, intervals, timeouts) are at most 100 years. */
export const MAX_DURATION_MS = 100 * 365 * 86_400_000;
/** Integer columns (attempts, counts, limits) are 32-bit. */
export const INT32_MAX = 2_147_483_647;
/** Row ids are positive 64-bit integers, given as decimal strings. */
export const MAX_ID = 9_223_372_036_854_775_807n;
/** Keys, scopes, names and filters that are indexed or compared: at most this many characters. */
export const MAX_INDEXED_TEXT = 500;

/** Why `text` cannot be stored as it is, or undefined when it can. */
export function textProblem(text: string): string | undefined {
  if (text.includes("\u0000")) return "contains a NUL character, which no store can hold";
  const lone = loneSurrogateAt(text);
  if (lone >= 0) return `is not well-formed Unicode (a lone surrogate at index ${lone}), which a store would silently replace`;
  return undefined;
}

/**
 * A string the store can hold and compare exactly: 1 to `max` characters, no NUL, well-formed Unicode.
 * `field` names it in the error ("queue \"mail\".enqueue: key").
 */
export function checkText(value: unknown, field: string, { max = MAX_INDEXED_TEXT, min = 1 }: { max?: number; min?: number } = {}): string {
  if (typeof value !== "string" || value.length < min || value.length > max) {
    throw new InvalidInputError(`${field} must be a string of ${min} to ${max} characters, got ${preview(value)}`);
  }
  const problem = textProblem(value);
  if (problem) throw new InvalidInputError(`${field} ${problem}`);
  return value;
}

/** Every string inside a JSON-able value must be storable text (keys included); throws naming the path. */
export function checkTextDeep(value: unknown, field: string): void {
  const visit = (v: unknown, path: string): void => {
    if (typeof v === "string") {
      const problem = textProblem(v);
      if (problem) throw new InvalidInputError(`${path} ${problem}`);
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => visit(item, `${path}[${i}]`));
    } else if (v !== null && typeof v === "object") {
      for (const [k, item] of Object.entries(v)) {
        const problem = textProblem(k);
        if (problem) throw new InvalidInputError(`${path}: property name ${JSON.stringify(k)} ${problem}`);
        visit(item, `${path}.${k}`);
      }
    }
  };
  visit(value, field);
}

/** An absolute time (a Date or epoch milliseconds) within 1970 to 9999. */
export function checkInstant(ms: number, field: string): number {
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_TIME_MS) {
    throw new InvalidInputError(`${field} must be a time from 1970 to 9999 (epoch milliseconds 0 to ${MAX_TIME_MS}), got ${preview(ms)}`);
  }
  return Math.round(ms);
}

/** An integer from `min` to `max` (a 32-bit column by default). */
export function checkInt(value: unknown, field: string, { min = 0, max = INT32_MAX }: { min?: number; max?: number } = {}): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidInputError(`${field} must be an integer from ${min} to ${max}, got ${preview(value)}`);
  }
  return value;
}

const ID = /^[1-9][0-9]{0,18}$/;

/**
 * A row id: a decimal string from 1 to 2^63-1. Ids are strings everywhere in the API (a JavaScript
 * number cannot hold every bigint), so a number is refused rather than guessed at.
 */
export function checkId(value: unknown, field: string): string {
  if (typeof value !== "string" || !ID.test(value) || BigInt(value) > MAX_ID) {
    throw new InvalidInputError(`${field} must be an id: a string of digits from "1" to "${MAX_ID}", got ${preview(value)}`);
  }
  return value;
}

function loneSurrogateAt(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
    }
    return i;
  }
  return -1;
}

/**
 * JSON values (payloads, results, states, cached values) nest at most this deep. JSON.stringify
 * gives up near 4,000 levels (its recursion meets the stack) and PostgreSQL's `json` input near
 * 10,000 (max_stack_depth 2 MB), both depending on the stack left; well below both, a value is
 * accepted or refused the same way on every store and from any call depth.
 */
export const MAX_JSON_DEPTH = 1_000;

/** A queue's default maxPayloadBytes: the largest job payload, as UTF-8 JSON, it takes unless told otherwise. */
export const DEFAULT_PAYLOAD_BYTES = 1024 * 1024;
/** The most any queue's maxPayloadBytes may be, on a store that sets no lower ceiling. */
export const MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;

/** A surrogate code unit without its partner (matched code unit by code unit: no `u` flag). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `text` with each NUL and lone surrogate replaced by U+FFFD: for text tickwork stores on the
 * caller's behalf but did not take as an argument (a run's error message), which it must keep
 * rather than refuse. At most `max` characters are kept, the cut marked with "…".
 */
export function storableText(text: string, max = Infinity): string {
  const cut = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return textProblem(cut) === undefined ? cut : cut.replaceAll("\u0000", "\ufffd").replace(LONE_SURROGATE, "\ufffd");
}
