import { toMs } from "./duration.js";

/**
 * A failure's own choice of delay: an error's `retryAfter` (ms, a duration, a Date or an HTTP date),
 * as `RetryAfterError` and the HTTP client's `RateLimitedError` carry it. Null when it names none.
 */
export function retryAfterMs(error: unknown, now: number): number | null {
  const value = (error as { retryAfter?: unknown } | null)?.retryAfter;
  if (value === undefined || value === null) return null;
  if (value instanceof Date) return Math.max(0, value.getTime() - now);
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value : null;
  if (typeof value === "string") {
    try {
      return toMs(value);
    } catch {
      const at = Date.parse(value);
      return Number.isNaN(at) ? null : Math.max(0, at - now);
    }
  }
  return null;
}
