import { toMs } from "./duration.js";

/**
 * A failure's own choice of delay: an error's `retryAfter` (ms, a Date, a duration such as "1m", or
 * what an HTTP `Retry-After` header holds: delay-seconds such as "120", or an HTTP date), as
 * `RetryAfterError` and the HTTP client's `RateLimitedError` carry it. Null when it names none.
 */
export function retryAfterMs(error: unknown, now: number): number | null {
  const value = (error as { retryAfter?: unknown } | null)?.retryAfter;
  if (value === undefined || value === null) return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : Math.max(0, value.getTime() - now);
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value : null;
  if (typeof value === "string") return retryAfterText(value.trim(), now);
  return null;
}

/**
 * A retry-after value as text: a header's delay-seconds (RFC 9110; decimals accepted), a duration,
 * or an HTTP date. Bare digits are seconds, as in the header: `"120"` is two minutes, never the year
 * 120 (which `Date.parse` would read). Null when it is none of these; a date in the past is 0.
 */
export function retryAfterText(text: string, now: number): number | null {
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1_000);
  try {
    return toMs(text);
  } catch {
    const at = parseHttpDate(text);
    return at === null ? null : Math.max(0, at - now);
  }
}

/**
 * An HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`) as epoch ms, or null. `Date.parse` alone reads
 * `"-3"` or `"1"` as years, so a date must name its month.
 */
export function parseHttpDate(text: string): number | null {
  if (!/[a-z]{3}/i.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}
