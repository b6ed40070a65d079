import { MAX_JSON_DEPTH } from "./bounds.js";
import { InvalidPayloadError } from "./errors.js";

/**
 * Serialises a value once, up front: the text is what the store writes, so a value that cannot
 * round-trip (a function, a BigInt, a cycle, `undefined`, a Map that would become `{}`) is refused
 * before anything is written, naming the path to it. `subject` names the value in the error
 * ("job payload", "the result"), `where` the call it was given to.
 *
 * The check is a walk of the value before a plain `JSON.stringify`: a replacer function would take
 * V8 off its fast serialiser for every value, the walk costs a type test per value. Strings are
 * not checked: JSON text escapes NUL and lone surrogates (`\u0000`, `\ud800`), so they reach every
 * store as ASCII and read back as given (PostgreSQL's `json` column keeps the text; only `jsonb`
 * would refuse `\u0000`).
 */
export function serialiseJson(value: unknown, options: { where?: string; subject?: string } = {}): string {
  checkJson(value, options);
  return stringifyChecked(value, options);
}

/**
 * The refusal half of serialiseJson: throws what it would throw for `value`, writes nothing. A bulk
 * enqueue checks every payload this way before its first row is written, and serialises each slice
 * of rows (stringifyChecked) only as the store is ready for it.
 */
export function checkJson(value: unknown, { where, subject = "job payload" }: { where?: string; subject?: string } = {}): void {
  const refuse = (reason: string) => new InvalidPayloadError(reason, where, subject);
  if (value === undefined) throw refuse("undefined has no JSON form (use null for an empty value)");
  try {
    const loss = lossIn(value, "", 0);
    if (loss) throw refuse(describeLoss(loss));
  } catch (error) {
    if (error instanceof InvalidPayloadError) throw error;
    if (error instanceof TooDeep) throw refuse(tooDeep(value));
    // A toJSON that throws.
    throw refuse(error instanceof Error ? error.message : String(error));
  }
}

/**
 * JSON.stringify of a value checkJson passed. It can still fail, rarely: a getter or toJSON that
 * throws or answers differently the second time. Such a failure is refused the same way.
 */
export function stringifyChecked(value: unknown, options: { where?: string; subject?: string } | (() => { where?: string; subject?: string }) = {}): string {
  let failure: string;
  try {
    const text = JSON.stringify(value);
    if (text !== undefined) return text;
    failure = `a ${typeof value} has no JSON form`;
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error);
  }
  // Named lazily: a bulk enqueue serialises thousands of payloads and builds no names for them.
  const { where, subject = "job payload" } = typeof options === "function" ? options() : options;
  throw new InvalidPayloadError(failure, where, subject);
}

/** What JSON would lose, and the keys from the root to it (innermost last). */
interface Loss {
  what: string;
  keys: (string | number)[];
}

/** Thrown by the walk past MAX_JSON_DEPTH: a value that deep, or a cycle (told apart afterwards). */
class TooDeep extends Error {}

/** Objects that JSON.stringify turns into `{}`, by their tag (which holds across realms), with a way out. */
const BECOMES_EMPTY: Record<string, string> = {
  "[object Map]": "a Map, which JSON would turn into {} (convert it first, e.g. Object.fromEntries(map))",
  "[object Set]": "a Set, which JSON would turn into {} (convert it first, e.g. [...set])",
  "[object WeakMap]": "a WeakMap, which JSON would turn into {}",
  "[object WeakSet]": "a WeakSet, which JSON would turn into {}",
  "[object Error]": "an Error, which JSON would turn into {} (store its message instead)",
  "[object RegExp]": "a RegExp, which JSON would turn into {} (store its source instead)",
  "[object Promise]": "a Promise, which JSON would turn into {} (await it first)",
};

/**
 * The first thing in `value` JSON.stringify would drop, change or choke on, or undefined. `key` is
 * the one JSON passes to `toJSON` ("" at the root, an array's index as a number). Plain objects, arrays, strings, numbers and
 * booleans take one type test each; paths are built only on the way out of a refusal.
 */
function lossIn(value: unknown, key: string | number, depth: number): Loss | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : { what: `${value}, which JSON would turn into null`, keys: [] };
    case "object":
      break;
    default:
      // undefined is dealt with by the container (an object leaves it out, an array cannot).
      return { what: `a ${typeof value}`, keys: [] };
  }
  if (value === null) return undefined;
  if (depth >= MAX_JSON_DEPTH) throw new TooDeep();
  let v: object = value;
  const toJSON = (v as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") {
    // JSON.stringify calls it again when it writes the text: toJSON should be pure, as Date's is.
    const replaced: unknown = toJSON.call(v, String(key));
    if (replaced === undefined) return undefined;
    if (typeof replaced !== "object" || replaced === null) return lossIn(replaced, key, depth);
    v = replaced;
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const item: unknown = v[i];
      // The index goes as a number: made a string only for a toJSON, not for every element.
      const loss = item === undefined ? { what: "undefined, which JSON would turn into null", keys: [] } : lossIn(item, i, depth + 1);
      if (loss) {
        loss.keys.push(i);
        return loss;
      }
    }
    return undefined;
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) {
    const empty = BECOMES_EMPTY[Object.prototype.toString.call(v)];
    if (empty) return { what: empty, keys: [] };
  }
  const record = v as Record<string, unknown>;
  for (const k of Object.keys(record)) {
    const item = record[k];
    if (item === undefined) continue;
    const loss = lossIn(item, k, depth + 1);
    if (loss) {
      loss.keys.push(k);
      return loss;
    }
  }
  return undefined;
}

/** `the payload is a Map...` at the root, `"user.tags[2]" is a Map...` below it. */
function describeLoss({ what, keys }: Loss): string {
  if (keys.length === 0) return `the payload is ${what}`;
  let path = "";
  for (let i = keys.length - 1; i >= 0; i--) {
    const k = keys[i]!;
    path += typeof k === "number" ? `[${k}]` : path === "" ? k : `.${k}`;
  }
  return `"${path}" is ${what}`;
}

/** Past the depth bound: a cycle (JSON.stringify says so at once) or a value really nested that deep. */
function tooDeep(value: unknown): string {
  try {
    JSON.stringify(value);
  } catch (error) {
    // V8 says "circular structure", JavaScriptCore (Bun) "cyclic structures".
    if (error instanceof TypeError && /circular|cyclic/i.test(error.message)) return /circular/i.test(error.message) ? error.message : `it is circular (${error.message})`;
  }
  return `it is nested more than ${MAX_JSON_DEPTH} levels deep`;
}

/**
 * The UTF-8 length of JSON text in bytes, counted without encoding it: 1 byte per ASCII character, 2
 * up to U+07FF, 3 for the rest of the BMP, 4 for a surrogate pair. JSON.stringify writes a lone
 * surrogate as an ASCII escape, so every high surrogate here starts a pair.
 */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff) {
      // The pair's two characters, counted 2, are 4 bytes.
      i++;
      bytes += 2;
    } else bytes += 2;
  }
  return bytes;
}
