import fc from "fast-check";
import { InvalidInputError, TickworkError } from "../../../src/core/errors.js";
import { UnknownQueueError } from "../../../src/queue/errors.js";
import { snapshotChange, type PropertyStore } from "./stores.js";

/**
 * Text that only a driver, the database or the JavaScript runtime writes: a message containing it
 * is a raw failure that leaked through tickwork's validation, whatever class wraps it.
 */
const FOREIGN_TEXT = [
  // PostgreSQL messages and SQLSTATE codes (22P02 bad syntax, 22003 out of range, 22021 bad byte
  // sequence, 22001 too long, 22P05 bad escape, 54000 index row too large, 54001 stack depth, 23xxx constraints).
  /invalid input syntax/i,
  /out of range for type|\b(bigint|integer|smallint) out of range|value out of range/i,
  /value too long for type/i,
  /index row (size|requires)/i,
  /invalid byte sequence/i,
  /unsupported Unicode escape/i,
  /null character not permitted/i,
  /Unicode (low|high) surrogate must/i,
  /stack depth limit exceeded/i,
  /numeric field overflow/i,
  /syntax error at or near/i,
  /violates (unique|not-null|check|foreign key) constraint/i,
  /duplicate key value/i,
  /\b(22P02|22P05|22003|22021|22001|54000|54001|23505|23502|42601|42P01)\b/,
  // SQLite (better-sqlite3).
  /SQLITE_[A-Z]/,
  /SqliteError/,
  /(UNIQUE|NOT NULL|CHECK) constraint failed/,
  /datatype mismatch/i,
  /too many SQL variables/i,
  /string or blob too big/i,
  // The runtime: a TypeError's or RangeError's text passed on as the reason, never a validation message.
  /Cannot convert .* to (a )?(string|primitive|BigInt)/i,
  /Cannot read propert/i,
  /is not a function/i,
  /Invalid time value/i,
  /Invalid array length/i,
  /Do not know how to serialize a BigInt/i,
];

/** Longest message a refusal may have: a 1 MB key is previewed in it, not repeated. */
export const MAX_MESSAGE_LENGTH = 4_000;

/**
 * What a property checks of each call. Each is its own test, so that one defect found everywhere (a
 * message quoting a 1 MB value in full) cannot hide another (a driver error) behind its counterexample.
 * - safety: the call succeeds or throws a TickworkError with tickwork's own message; a refusal
 *   writes nothing; an accepted value is stored as given (the property's own check).
 * - naming: a refusal of an input (InvalidInputError, UnknownQueueError) names the field at fault.
 * - length: a TickworkError's message shows a huge value by a preview, not in full.
 */
export type Check = "safety" | "naming" | "length";

export const CHECKS: readonly { check: Check; says: string }[] = [
  { check: "safety", says: "never a raw or driver error, and a refusal writes nothing" },
  { check: "naming", says: "a refusal names the field" },
  { check: "length", says: "a refusal previews a huge value" },
];

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: TickworkError };

/**
 * Runs `call`: its value, or its refusal when it threw a `TickworkError` whose message is tickwork's
 * own. Anything else (a raw driver error, a TypeError, a driver's text inside a TickworkError) fails
 * the property, with what was thrown.
 */
export async function outcome<T>(call: () => Promise<T> | T): Promise<Outcome<T>> {
  let value: T;
  try {
    value = await call();
  } catch (error) {
    return { ok: false, error: ownError(error) };
  }
  return { ok: true, value };
}

export function ownError(error: unknown): TickworkError {
  if (!(error instanceof TickworkError)) {
    const shown = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const code = (error as { code?: unknown } | null)?.code;
    throw new Error(`raw error (not a TickworkError)${code !== undefined ? ` code=${String(code)}` : ""}: ${cut(shown)}`);
  }
  const foreign = FOREIGN_TEXT.find((pattern) => pattern.test(error.message));
  if (foreign) throw new Error(`${error.name} (${error.code}) carries a driver's or runtime's message (${foreign}): ${cut(error.message)}`);
  return error;
}

/** A refusal must name one of `fields` (the options given, the argument at fault), case-insensitively. */
export function expectNames(error: TickworkError, fields: readonly string[]): void {
  if (fields.length === 0) return;
  const message = error.message.toLowerCase();
  if (!fields.some((f) => message.includes(f.toLowerCase()))) {
    throw new Error(`${error.name} (${error.code}) names none of the fields given (${fields.join(", ")}): ${cut(error.message)}`);
  }
}

/**
 * Runs `call` between two snapshots of the store: a refusal must leave every table as it was.
 * Returns the outcome for the property's own checks of an accepted call.
 */
export async function refusedWritesNothing<T>(ps: PropertyStore, call: () => Promise<T> | T): Promise<Outcome<T>> {
  const before = await ps.snapshot();
  const result = await outcome(call);
  if (!result.ok) {
    const change = snapshotChange(before, await ps.snapshot());
    if (change) throw new Error(`refused with ${result.error.code} (${cut(result.error.message)}) but wrote:\n${change}`);
  }
  return result;
}

export interface Judgement<T> {
  /** The fields a refusal may name: the options given, the argument's name. */
  names: readonly string[];
  /** The safety check of an accepted call: it is stored as given, the engine still works. */
  accepted?: (value: T) => Promise<void> | void;
}

/** Runs `call` and holds it to `check` (see `Check`); `ps` null: the call writes nothing whatever it does. */
export async function judge<T>(ps: PropertyStore | null, check: Check, call: () => Promise<T> | T, { names, accepted }: Judgement<T>): Promise<void> {
  if (check === "safety") {
    const result = ps ? await refusedWritesNothing(ps, call) : await outcome(call);
    if (result.ok) await accepted?.(result.value);
    return;
  }
  let error: unknown;
  try {
    await call();
    return;
  } catch (thrown) {
    error = thrown;
  }
  // A raw error is the safety check's finding; these two judge tickwork's own refusals. A refusal
  // for the state of things (a job already finished, a key in flight) has no field at fault.
  if (!(error instanceof TickworkError)) return;
  if (check === "naming") {
    if (error instanceof InvalidInputError || error instanceof UnknownQueueError) expectNames(error, names);
  }
  else if (error.message.length > MAX_MESSAGE_LENGTH) throw new Error(`${error.name} (${error.code}) has a message of ${error.message.length} characters: ${cut(error.message)}`);
}

/** The seed of every property unless FC_SEED says otherwise. */
const DEFAULT_SEED = 20_261_124;

/** Runs of each property; FC_RUNS overrides (and FC_SEED, FC_PATH replay a reported failure). */
export const RUNS = Number(process.env.FC_RUNS ?? 100);

/**
 * A property's runs and shrinking stop after this long (reporting the smallest counterexample found
 * so far), well inside the test's own timeout: on a loaded machine shrinking a PostgreSQL failure
 * can take hundreds of runs.
 */
const TIME_LIMIT_MS = 40_000;

/** The timeout of each property's test (for `describe(name, { timeout }, ...)`). */
export const PROPERTY_TIMEOUT = 90_000;

/**
 * `fc.assert` with the file's settings; a failure's report (seed, path, the shrunk counterexample
 * and the reason) has long runs of one character shown as a count, so a 1 MB key stays readable.
 */
export async function assertProperty<Ts extends unknown[]>(property: fc.IAsyncPropertyWithHooks<Ts>, check: Check = "safety", runs?: number): Promise<void> {
  await fc.assert(property, {
    // The naming and length checks only judge messages, and find a bad one in a few dozen runs.
    numRuns: runs ?? (check === "safety" ? RUNS : Math.ceil(RUNS / 2)),
    interruptAfterTimeLimit: TIME_LIMIT_MS,
    // A fixed seed by default, so that a run is repeatable and a red CI names a real regression;
    // FC_SEED=random explores new values (and FC_SEED=<n> replays a reported failure).
    ...(process.env.FC_SEED === "random" ? {} : { seed: process.env.FC_SEED ? Number(process.env.FC_SEED) : DEFAULT_SEED }),
    ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}),
    reporter(details) {
      if (!details.failed) return;
      const error = details.errorInstance;
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(compact(`${fc.defaultReportMessage(details) ?? "property failed"}\nReason: ${reason}`));
    },
  });
}

/** Long runs of one character (or of a short group, such as an escaped NUL) as a count, and a report cut to a readable length. */
export function compact(text: string): string {
  const squeezed = text
    .replace(/(.)\1{63,}/gsu, (run: string, ch: string) => `${ch}…×${[...run].length}…`)
    .replace(/(.{2,12}?)\1{15,}/gsu, (run: string, unit: string) => `(${unit})…×${run.length / unit.length}…`);
  return squeezed.length > 20_000 ? `${squeezed.slice(0, 20_000)}… (${squeezed.length} characters)` : squeezed;
}

function cut(text: string): string {
  const squeezed = compact(text);
  return squeezed.length > 600 ? `${squeezed.slice(0, 600)}…` : squeezed;
}

/**
 * Where `value` holds something JSON would lose or change (a Map, Set or Error becoming `{}`, a
 * BigInt, NaN, an undefined array element...), as a path; null when its JSON text reads back as it.
 * An undefined property is left out and reads back as undefined: that is not a loss. Iterative, so
 * a payload nested 100,000 deep is walked too.
 */
export function lossyAt(value: unknown, label = "payload"): string | null {
  const stack: [unknown, string, boolean][] = [[value, label, false]];
  while (stack.length) {
    const [v, path, inArray] = stack.pop()!;
    if (v === undefined) {
      if (inArray || path === label) return `${path} (undefined)`;
      continue;
    }
    if (v === null || typeof v === "string" || typeof v === "boolean") continue;
    if (typeof v === "number") {
      if (!Number.isFinite(v)) return `${path} (${v})`;
      continue;
    }
    if (typeof v !== "object") return `${path} (a ${typeof v})`;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push([v[i], `${path}[${i}]`, true]);
      continue;
    }
    const proto: unknown = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return `${path} (a ${(v as object).constructor?.name ?? "non-plain object"})`;
    for (const [k, item] of Object.entries(v)) stack.push([item, `${path}.${k}`, false]);
  }
  return null;
}
