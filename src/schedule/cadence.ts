import { Cron } from "croner";
import { toMs, type Duration } from "../core/duration.js";
import { InvalidInputError } from "../core/errors.js";

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

/** A cron expression (croner: 5 or 6 fields, nicknames such as "@hourly"), in `timezone` (default UTC). */
export function cronCadence(expression: string, timezone: string | undefined, where: string): Cadence {
  let cron: Cron;
  try {
    cron = new Cron(expression, { paused: true, timezone: timezone ?? "Etc/UTC" });
    // Evaluating once surfaces a bad timezone now rather than at the first tick.
    cron.nextRun(new Date(0));
  } catch (error) {
    throw new InvalidInputError(`${where}: invalid cron ${JSON.stringify(expression)}${timezone ? ` in timezone ${JSON.stringify(timezone)}` : ""}: ${(error as Error).message}`);
  }
  const next = (t: number): number | null => cron.nextRun(new Date(t))?.getTime() ?? null;
  return {
    description: `cron ${expression}${timezone ? ` (${timezone})` : " (UTC)"}`,
    latestAtOrBefore(t) {
      // croner's previousRuns is strictly before its reference, at whole seconds; step past t and correct.
      let candidate = cron.previousRuns(1, new Date(t + 1_000))[0]?.getTime() ?? null;
      while (candidate !== null && candidate > t) candidate = cron.previousRuns(1, new Date(candidate))[0]?.getTime() ?? null;
      return candidate;
    },
    nextAfter: next,
    countBetween(from, to, cap) {
      let count = 0;
      for (let at = next(from); at !== null && at < to && count < cap; at = next(at)) count++;
      return count;
    },
  };
}
