import { toMs, type Duration } from "./duration.js";
import { InvalidInputError, describe } from "./errors.js";

/** An absolute time: a Date or epoch milliseconds (a duration string would silently mean 1970 here). */
export function toInstant(value: unknown, where: string): number {
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== "number" || !Number.isFinite(ms)) {
    throw new InvalidInputError(`${where}: expected a Date or epoch milliseconds, got ${value instanceof Date ? "an invalid Date" : describe(value)}`);
  }
  return ms;
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
