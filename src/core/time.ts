import { checkInstant } from "./bounds.js";
import { toMs, type Duration } from "./duration.js";
import { InvalidInputError, preview } from "./errors.js";

/** Epoch milliseconds of a valid Date or a finite number; null for anything else (an invalid Date, NaN, a string). */
export function instantOf(value: unknown): number | null {
  const ms = value instanceof Date ? value.getTime() : value;
  return typeof ms === "number" && Number.isFinite(ms) ? ms : null;
}

/**
 * An absolute time: a Date or epoch milliseconds (a duration string would silently mean 1970 here),
 * within 1970 to 9999.
 */
export function toInstant(value: unknown, where: string): number {
  const ms = instantOf(value);
  if (ms === null) {
    throw new InvalidInputError(value instanceof Date ? `${where}: invalid Date` : `${where}: expected a Date or epoch milliseconds, got ${preview(value)}`);
  }
  return checkInstant(ms, where);
}

/** A time given as a Date, epoch milliseconds, or a duration from `now` ("1h"). */
export function toTime(value: Date | number | Duration, now: number, where: string): number {
  if (value instanceof Date || typeof value === "number") return toInstant(value, where);
  try {
    return now + toMs(value);
  } catch (error) {
    throw new InvalidInputError(`${where}: ${(error as Error).message}`);
  }
}
