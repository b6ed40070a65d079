import { Cron } from "croner";
import { checkText } from "../core/bounds.js";
import { toMs, type Duration } from "../core/duration.js";
import { InvalidInputError, errorText } from "../core/errors.js";
import { CadenceError } from "./errors.js";

/**
 * When a task is due. Slots are absolute times, the same in every process, which is what lets each
 * slot be claimed exactly once by whichever process sees it first.
 */
export interface Cadence {
  readonly description: string;
  /** The latest slot at or before `t`, or null if there is none. */
  latestAtOrBefore(t: number): number | null;
  /** The first slot strictly after `t`, or null if the schedule has ended. */
  nextAfter(t: number): number | null;
  /** Slots strictly after `from` and strictly before `to`, counted up to `cap`. */
  countBetween(from: number, to: number, cap: number): number;
}

/** Every `interval`, on multiples of it since the epoch: "5m" runs at :00, :05, :10... in every process. */
export function everyCadence(every: Duration, where: string): Cadence {
  let interval: number;
  try {
    interval = toMs(every);
  } catch (error) {
    throw new InvalidInputError(`${where}: every: ${(error as Error).message}`);
  }
  if (interval < 1_000) throw new InvalidInputError(`${where}: every must be at least 1s, got ${JSON.stringify(every)}`);
  return {
    description: `every ${typeof every === "number" ? `${every} ms` : every}`,
    latestAtOrBefore: (t) => Math.floor(t / interval) * interval,
    nextAfter: (t) => (Math.floor(t / interval) + 1) * interval,
    countBetween: (from, to, cap) => Math.min(cap, Math.max(0, Math.ceil(to / interval) - Math.floor(from / interval) - 1)),
  };
}

/**
 * A cron expression (croner: 5 to 7 fields, nicknames such as "@hourly"), in `timezone` (default
 * UTC). An expression that matches no time after `now` ("0 0 31 2 *") is refused here, at
 * definition, rather than leaving a task that silently never runs.
 */
export function cronCadence(expression: string, timezone: string | undefined, where: string, now: number): Cadence {
  checkText(expression, `${where}: cron`);
  if (timezone !== undefined) checkText(timezone, `${where}: timezone`);
  const shown = `cron ${JSON.stringify(expression)}${timezone ? ` in timezone ${JSON.stringify(timezone)}` : ""}`;
  let cron: Cron;
  let first: Date | null;
  try {
    // Without a timezone, a fixed UTC offset: croner's timezone path converts through Intl on every
    // step and is about 150 times slower for the same answers.
    cron = new Cron(expression, timezone === undefined ? { paused: true, utcOffset: 0 } : { paused: true, timezone });
    // Evaluating surfaces a bad timezone now rather than at the first tick.
    first = cron.nextRun(new Date(now));
  } catch (error) {
    throw new InvalidInputError(`${where}: invalid ${shown}: ${(error as Error).message}`);
  }
  if (first === null) throw new InvalidInputError(`${where}: ${shown} has no run after ${new Date(now).toISOString()}: no date it names exists or is still to come`);

  const next = (t: number): number | null => cron.nextRun(new Date(t))?.getTime() ?? null;
  const cadence: Cadence = {
    description: `cron ${expression}${timezone ? ` (${timezone})` : " (UTC)"}`,
    latestAtOrBefore: memoised(next),
    nextAfter: next,
    countBetween(from, to, cap) {
      let count = 0;
      for (let at = next(from); at !== null && at < to && count < cap; at = next(at)) count++;
      return count;
    },
  };
  return guarded(cadence, `${where}: ${shown}`);
}

/**
 * The latest slot at or before `t`, found with forward steps only. croner's own backward search
 * (`previousRuns`) throws a TypeError on expressions it otherwise handles ("0 0 29 2 *", 29
 * February, from any time outside a leap day), so it is not used. A window before `t` grows
 * fourfold until it holds a slot; then each step either proves the slot found is the latest (the
 * next one is after `t`) or halves the gap where a later one can be. About 2·log2(gap in ms) calls
 * at worst; the last answer is kept, so the ticks between two slots cost one comparison.
 */
function memoised(next: (t: number) => number | null): (t: number) => number | null {
  let known: { slot: number; following: number | null } | undefined;
  const firstAtOrAfter = (x: number) => next(x - 1);
  return (t) => {
    if (known && known.slot <= t && (known.following === null || t < known.following)) return known.slot;
    let slot: number | null = null;
    let hi = t + 1; // no slot in [hi, t]
    for (let width = 1_000; slot === null; width *= 4) {
      const lo = Math.max(0, t - width);
      const found = firstAtOrAfter(lo);
      if (found !== null && found <= t) slot = found;
      else if (lo === 0) return null;
      else hi = lo;
    }
    for (;;) {
      const following = next(slot);
      if (following === null || following > t) {
        known = { slot, following };
        return slot;
      }
      slot = following;
      const mid = slot + Math.floor((hi - slot) / 2);
      if (mid <= slot) continue;
      const later = firstAtOrAfter(mid);
      if (later !== null && later <= t) slot = later;
      else hi = mid;
    }
  };
}

/** Any exception from the cron library becomes a `CadenceError` naming the task and its expression. */
function guarded(cadence: Cadence, what: string): Cadence {
  const wrap = <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A): R => {
    try {
      return fn(...args);
    } catch (error) {
      throw new CadenceError(`${what} failed: ${errorText(error).split("\n")[0]}`, { cause: error });
    }
  };
  return {
    description: cadence.description,
    latestAtOrBefore: wrap(cadence.latestAtOrBefore),
    nextAfter: wrap(cadence.nextAfter),
    countBetween: wrap(cadence.countBetween),
  };
}
