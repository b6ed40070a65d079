/**
 * Small, pure readers of response headers: the upstream's request id, `Retry-After`, and the
 * server's own clock. No I/O: each takes the headers and "now" on the caller's clock.
 */
import { parseHttpDate } from "../core/retry-after.js";

/**
 * Where upstreams put the id their support staff can look a request up by, most specific first.
 * `cf-ray` leads because so many APIs sit behind Cloudflare, whatever id the origin adds.
 */
export const REQUEST_ID_HEADERS = [
  "cf-ray",
  "x-request-id",
  "x-amzn-requestid",
  "x-amz-request-id",
  "x-amz-cf-id",
  "x-correlation-id",
  "request-id",
  "x-github-request-id",
  "fly-request-id",
  "x-vercel-id",
  "x-cloud-trace-context",
] as const;

/** The first request id the response carries, or null. */
export function requestIdOf(headers: Headers): string | null {
  for (const name of REQUEST_ID_HEADERS) {
    const value = headers.get(name)?.trim();
    if (value) return value;
  }
  return null;
}

/**
 * The server's time when it answered, from its `Date` header, or `now` when there is none.
 * Absolute times a server sends (an HTTP-date `Retry-After`, an epoch `x-ratelimit-reset`) are read
 * relative to it, so a client whose clock is off (or a test's fake clock) still waits the interval
 * the server meant. The header has second resolution and is truncated, so this errs towards waiting
 * up to one second longer, never shorter.
 */
export function serverNow(headers: Headers, now: number): number {
  const date = headers.get("date");
  return (date ? parseHttpDate(date) : null) ?? now;
}

/** An absolute server time as a time on the caller's clock. */
export function toClientTime(serverTime: number, headers: Headers, now: number): number {
  return now + (serverTime - serverNow(headers, now));
}

/**
 * `Retry-After` as milliseconds from `now`: delay-seconds (RFC 9110; decimals accepted) or an
 * HTTP-date. Null when absent or unreadable; a date in the past is 0.
 */
export function parseRetryAfter(headers: Headers, now: number): number | null {
  const raw = headers.get("retry-after")?.trim();
  if (!raw) return null;
  if (/^\d+(\.\d+)?$/.test(raw)) return Math.round(Number(raw) * 1_000);
  const at = parseHttpDate(raw);
  return at === null ? null : Math.max(0, at - serverNow(headers, now));
}

