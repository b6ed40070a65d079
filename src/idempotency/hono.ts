import type { Context, MiddlewareHandler } from "hono";
import { textProblem } from "../core/bounds.js";
import { InvalidInputError } from "../core/errors.js";
import { DuplicateRequestError, IdempotencyClaimLostError, IdempotencyKeyReuseError } from "./errors.js";
import type { IdempotencyContext } from "./context.js";
import type { Idempotency } from "./idempotency.js";
import { MAX_KEY_LENGTH } from "./input.js";

export interface IdempotencyKeyOptions {
  idempotency: Idempotency;
  /** Refuse requests without the header (400); default false: they run without deduplication. */
  required?: boolean;
  /** Whose keys these are, e.g. the authenticated account; default "anonymous". */
  scope?: (c: Context) => string;
  /** What the request does; default "METHOD /path". */
  operation?: (c: Context) => string;
  /** Methods the middleware applies to; default POST, PUT, PATCH, DELETE. */
  methods?: string[];
  /** Response headers kept for replays besides the defaults (content-type, location, etag...). */
  replayHeaders?: string[];
}

/**
 * What the middleware sets on the context for the handler it runs: `c.get("idempotency").signal`,
 * aborted (with an IdempotencyClaimLostError) once this execution is known to have lost its claim;
 * on a request without the header it never aborts.
 * Type the app with it: `new Hono<{ Variables: IdempotencyVariables }>()`.
 */
export interface IdempotencyVariables {
  idempotency: IdempotencyContext;
}

const HEADER = "Idempotency-Key";
const NULL_BODY_STATUSES = new Set([204, 205, 304]);
const DEFAULT_REPLAY_HEADERS = ["content-type", "location", "content-location", "etag", "last-modified", "cache-control"];

/** A response as it is kept for replays. */
interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A 5xx is not an answer to remember: the claim is dropped so the client's retry runs again. */
class ServerFailure extends Error {}

/**
 * The `Idempotency-Key` header (IETF draft "The Idempotency-Key HTTP Header Field") on tickwork's
 * idempotency keys: a completed key replays the stored response (status, the headers that matter,
 * body) with `Idempotent-Replayed: true`; a key still in flight gets 409; a key reused with another
 * request body gets 422; a missing or malformed key, or a request whose scope or operation cannot be
 * stored, gets 400. A request whose execution lost its claim to another (it stalled past
 * `staleAfter`) answers with the key's stored response, or 409 while that is not known. Errors are
 * `application/problem+json`.
 */
export function idempotencyKey(options: IdempotencyKeyOptions): MiddlewareHandler<{ Variables: IdempotencyVariables }> {
  const methods = new Set((options.methods ?? ["POST", "PUT", "PATCH", "DELETE"]).map((m) => m.toUpperCase()));
  const keep = [...DEFAULT_REPLAY_HEADERS, ...(options.replayHeaders ?? []).map((h) => h.toLowerCase())];
  return async (c, next) => {
    if (!methods.has(c.req.method)) return next();
    const key = c.req.header(HEADER);
    if (key === undefined) {
      if (options.required) return problem(400, "idempotency-key-missing", "Idempotency-Key required", `This endpoint requires an ${HEADER} header.`);
      // Nothing claimed, nothing to lose: a signal that never aborts, so handlers need not ask.
      c.set("idempotency", { signal: new AbortController().signal });
      return next();
    }
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
      return problem(400, "idempotency-key-invalid", "Invalid Idempotency-Key", `The ${HEADER} header must be 1 to ${MAX_KEY_LENGTH} characters long.`);
    }
    const unstorable = textProblem(key);
    if (unstorable) return problem(400, "idempotency-key-invalid", "Invalid Idempotency-Key", `The ${HEADER} header ${unstorable}.`);
    const operation = options.operation?.(c) ?? `${c.req.method} ${new URL(c.req.url).pathname}`;
    const scope = options.scope?.(c) ?? "anonymous";
    const fingerprint = await digest(`${operation}\n${await c.req.raw.clone().text()}`);
    let executed = false;
    try {
      const stored = await options.idempotency.run<StoredResponse>({ scope, key, operation, fingerprint }, async (context) => {
        executed = true;
        c.set("idempotency", context);
        await next();
        if (c.res.status >= 500) throw new ServerFailure();
        const body = await c.res.clone().text();
        const headers: Record<string, string> = {};
        for (const name of keep) {
          const value = c.res.headers.get(name);
          if (value !== null) headers[name] = value;
        }
        return { status: c.res.status, headers, body };
      });
      if (executed) return;
      c.res = replay(stored);
    } catch (error) {
      if (error instanceof ServerFailure) return;
      if (error instanceof IdempotencyClaimLostError) {
        // This execution's response is not the key's: answer what every retry with the key will get.
        // The handler's response is dropped whole (Hono would otherwise merge its headers into ours).
        c.res = undefined;
        if (error.stored.status === "completed") c.res = replay(error.stored.result as StoredResponse);
        else c.res = inFlight(`This request's execution lost its claim on the ${HEADER} to another one, which has not finished. Retry later.`);
        return;
      }
      if (error instanceof DuplicateRequestError) return inFlight(`A request with this ${HEADER} is still being processed. Retry later.`);
      if (error instanceof IdempotencyKeyReuseError) {
        return problem(422, "idempotency-key-reused", "Idempotency-Key reused", `This ${HEADER} was already used with a different request.`);
      }
      // Refused before the handler ran: the request's scope or operation (its path) cannot be stored.
      if (error instanceof InvalidInputError && !executed) {
        return problem(400, "idempotency-request-invalid", "Request not accepted for an Idempotency-Key", `The request cannot be keyed by its ${HEADER}: ${error.message}`);
      }
      throw error;
    }
  };
}

/** The stored response, marked as a replay. */
function replay(stored: StoredResponse): Response {
  // 204, 205 and 304 responses have no body; the Response constructor refuses one, even empty.
  const body = NULL_BODY_STATUSES.has(stored.status) ? null : stored.body;
  return new Response(body, { status: stored.status, headers: { ...stored.headers, "Idempotent-Replayed": "true" } });
}

function inFlight(detail: string): Response {
  return problem(409, "idempotency-key-in-flight", "Request in progress", detail, { "Retry-After": "1" });
}

/**
 * A problem answer, made without the context: after the handler ran, `c.body` would carry the
 * handler's headers into it.
 */
function problem(status: 400 | 409 | 422, type: string, title: string, detail: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ type: `urn:tickwork:problem:${type}`, title, status, detail }), { status, headers: { ...headers, "content-type": "application/problem+json" } });
}

/** SHA-256 of the request, hex; Web Crypto, so it runs in Node and workerd alike. */
async function digest(text: string): Promise<string> {
  const hash = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(hash)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
