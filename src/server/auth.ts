import type { Context, MiddlewareHandler } from "hono";
import type { AuthFailureLog } from "./auth-failures.js";

/** `all`: every API read and write needs the token. `writes`: reads are open, writes still need it. */
export type AuthMode = "all" | "writes";

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
const BEARER = /^Bearer +([^\s]+) *$/i;

/**
 * `Authorization: Bearer <token>`. Both tokens are hashed (SHA-256, Web Crypto) and the digests
 * compared in full, so the time taken says nothing about where a guess first differs, nor about the
 * token's length.
 */
export function bearerAuth(options: { token: string; mode: AuthMode; failures: AuthFailureLog }): MiddlewareHandler {
  const expected = sha256(options.token);
  return async (c, next) => {
    if (options.mode === "writes" && READ_METHODS.has(c.req.method)) return next();
    const header = c.req.header("authorization");
    if (header === undefined) return unauthorized(c, "this request needs an Authorization: Bearer <admin token> header");
    const given = BEARER.exec(header)?.[1];
    if (given === undefined) return unauthorized(c, 'the Authorization header must read "Bearer <admin token>"');
    if (!equal(await sha256(given), await expected)) {
      options.failures.record(c.req.method, c.req.path);
      return unauthorized(c, "the admin token is wrong");
    }
    return next();
  };
}

function unauthorized(c: Context, message: string): Response {
  c.header("WWW-Authenticate", 'Bearer realm="tickwork"');
  return c.json({ error: "unauthorized", message }, 401);
}

async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length && i < b.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
