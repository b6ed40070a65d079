import { MAX_DURATION_MS } from "./bounds.js";
import { InvalidDurationError } from "./errors.js";

/** A duration: milliseconds, or a string such as `"500ms"`, `"30s"`, `"5m"`, `"1h"`, `"1h30m"`, `"2d"`. */
export type Duration = number | string;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

/**
 * Parses a duration to milliseconds; throws `InvalidDurationError` naming the bad value. Durations
 * above 100 years are refused: added to now they would leave the range a store can hold.
 */
export function toMs(value: Duration): number {
  if (typeof value === "number") {
    if (Number.isFinite(value) && value >= 0 && value <= MAX_DURATION_MS) return value;
    throw new InvalidDurationError(value);
  }
  if (typeof value !== "string" || value.length === 0) throw new InvalidDurationError(value);
  const text = value.trim();
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < text.length) {
    const start = PART.lastIndex;
    const match = PART.exec(text);
    if (!match || match.index !== start) throw new InvalidDurationError(value);
    total += Number(match[1]) * UNIT_MS[match[2] as string]!;
  }
  if (text.length === 0 || !(total <= MAX_DURATION_MS)) throw new InvalidDurationError(value);
  return Math.round(total);
}
