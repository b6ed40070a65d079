import type { Context } from "hono";
import * as z from "zod";
import { MAX_TIME_MS, textProblem } from "../core/bounds.js";
import { toMs } from "../core/duration.js";
import { ApiError, invalid } from "./errors.js";

/** Queue, task and limiter names, as the engine accepts them. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
const INT64_MAX = "9223372036854775807";

export const name = (what: "queue" | "task" | "limiter") =>
  z.string().regex(NAME, `a ${what} name is 1-128 letters, digits, "_", ".", ":" or "-", starting with a letter or digit`);

/** Job ids are 64-bit integers: a longer one would reach PostgreSQL as an out-of-range error, not a 404. */
const DIGITS = /^[1-9][0-9]{0,18}$/;
export const jobId = z
  .string()
  .regex(DIGITS, 'a job id is a positive integer such as "42"')
  .refine((id) => !DIGITS.test(id) || id.length < INT64_MAX.length || id <= INT64_MAX, `a job id is at most ${INT64_MAX}`);

/**
 * Free text compared in SQL (keys, scopes, ids): PostgreSQL refuses NUL in text and stores a lone
 * surrogate as U+FFFD, so both are refused here, by name, as the engine refuses them.
 */
export const text = (max: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? "required" : "expected a string") })
    .min(1, "must not be empty")
    .max(max, `at most ${max} characters`)
    .superRefine((s, ctx) => {
      const problem = textProblem(s);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    });

/** Text inside a cursor or a body that is storable (no NUL, well-formed), for `cursorOf` readers. */
export const storable = (value: unknown): value is string => typeof value === "string" && textProblem(value) === undefined;

/** Epoch milliseconds within the engine's range (1970 to 9999), for `cursorOf` readers. */
export const inRange = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_TIME_MS;

const TIME_RANGE = `must be a time from 1970 to 9999 (epoch milliseconds 0 to ${MAX_TIME_MS})`;

export const limit = (max: number, fallback: number) =>
  z
    .string()
    .regex(/^[0-9]{1,4}$/, `an integer from 1 to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(1, `an integer from 1 to ${max}`).max(max, `an integer from 1 to ${max}`))
    .default(fallback);

/**
 * An instant for pauses: epoch milliseconds, an ISO 8601 time ("2026-01-01T12:00:00Z") or a
 * duration from now ("30m", "2h"). Resolved against the engine's clock by `resolveInstant`.
 */
export const instant = z.union([z.number(), z.string()]).transform((value, ctx): { at: number } | { in: number } => {
  if (typeof value === "number") {
    if (!Number.isInteger(value) || value < 0) {
      ctx.addIssue({ code: "custom", message: `epoch milliseconds must be a non-negative integer, got ${value}` });
      return z.NEVER;
    }
    if (value <= MAX_TIME_MS) return { at: value };
    ctx.addIssue({ code: "custom", message: `${TIME_RANGE}, got ${value}` });
    return z.NEVER;
  }
  if (/^\d{4}-\d{2}-\d{2}/.test(value)) {
    const at = Date.parse(value);
    if (Number.isFinite(at) && at >= 0 && at <= MAX_TIME_MS) return { at };
    ctx.addIssue({ code: "custom", message: Number.isFinite(at) ? `${TIME_RANGE}, got ${JSON.stringify(value)}` : `not a valid ISO 8601 time: ${JSON.stringify(value)}` });
    return z.NEVER;
  }
  try {
    return { in: toMs(value) };
  } catch {
    ctx.addIssue({ code: "custom", message: `expected epoch ms, an ISO 8601 time or a duration such as "30m" or "2h", got ${JSON.stringify(value)}` });
    return z.NEVER;
  }
});

export function resolveInstant(value: { at: number } | { in: number }, now: number): number {
  return "at" in value ? value.at : now + value.in;
}

/** As `resolveInstant`, a duration looking back instead: "1h" is an hour ago (never before 1970). */
export function resolvePastInstant(value: { at: number } | { in: number }, now: number): number {
  return "at" in value ? value.at : Math.max(0, now - value.in);
}

/** The query string through `schema`: unknown and repeated parameters are refused, by name. */
export function parseQuery<S extends z.ZodObject>(c: Context, schema: S): z.output<S> {
  const given: Record<string, string> = {};
  const known = Object.keys(schema.shape);
  for (const [key, values] of Object.entries(c.req.queries())) {
    if (!known.includes(key)) {
      throw new ApiError(400, "invalid_query", `unknown parameter "${key}" (expected ${known.join(", ")})`, [{ path: key, message: "unknown parameter" }]);
    }
    if (values.length > 1) throw new ApiError(400, "invalid_query", `${key}: given ${values.length} times; give it once`, [{ path: key, message: "given more than once" }]);
    given[key] = values[0]!;
  }
  const result = schema.safeParse(given);
  if (!result.success) throw invalid("invalid_query", result.error);
  return result.data;
}

/** The API's bodies are a few fields ({ "until": "1h" }); a larger one is refused before it is read in full. */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * What is read, and thrown away, of a chunked body past the limit, so that the client (still
 * sending) gets its 413 rather than a reset connection; past this much the stream is cut.
 */
const MAX_DRAINED_BYTES = 1024 * 1024;

/**
 * The body as text, refused with a 413 past MAX_BODY_BYTES, whether its length is declared or it
 * comes in chunks. (Hono's bodyLimit rebuilds the request with the global Request class, which
 * fails on @hono/node-server's own requests when a body has no declared length.)
 */
async function readBody(c: Context): Promise<string> {
  const tooLarge = () => new ApiError(413, "body_too_large", `the body must be at most ${MAX_BODY_BYTES} bytes`);
  if (Number(c.req.header("content-length") ?? 0) > MAX_BODY_BYTES) throw tooLarge();
  const body = c.req.raw.body;
  if (!body) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_DRAINED_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    if (size <= MAX_BODY_BYTES) chunks.push(value);
  }
  if (size > MAX_BODY_BYTES) throw tooLarge();
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return new TextDecoder().decode(bytes);
}

/** A JSON body through `schema`; an empty body is `{}`. */
export async function parseBody<S extends z.ZodType>(c: Context, schema: S, example: string): Promise<z.output<S>> {
  const raw = await readBody(c);
  let value: unknown = {};
  if (raw.trim() !== "") {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new ApiError(400, "invalid_body", `the body must be JSON, e.g. ${example}`);
    }
  }
  const result = schema.safeParse(value);
  if (!result.success) throw invalid("invalid_body", result.error);
  return result.data;
}

/** A path parameter through `schema`, named in the error (`id: a job id is...`). */
export function parseParam<S extends z.ZodType>(c: Context, param: string, schema: S): z.output<S> {
  const result = z.object({ [param]: schema }).safeParse({ [param]: c.req.param(param) });
  if (!result.success) throw invalid("invalid_path", result.error);
  return result.data[param] as z.output<S>;
}

/**
 * A keyset cursor, opaque to clients: the previous page's last position as base64url JSON. `read`
 * turns the decoded fields into the position, or null when they are not one.
 */
export function cursorOf<T>(read: (fields: unknown[]) => T | null) {
  return z.string().transform((value, ctx): T => {
    try {
      const fields: unknown = JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(value.replace(/-/g, "+").replace(/_/g, "/")), (ch) => ch.charCodeAt(0))));
      const position = Array.isArray(fields) ? read(fields) : null;
      if (position !== null) return position;
    } catch {
      // Not base64url JSON: reported below like any other bad cursor.
    }
    ctx.addIssue({ code: "custom", message: "not a cursor from a previous page (use the next value of the last response)" });
    return z.NEVER;
  });
}

export function toCursor(fields: unknown[]): string {
  const bytes = new TextEncoder().encode(JSON.stringify(fields));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
