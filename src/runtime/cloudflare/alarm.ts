import type { TickResult } from "../../tickwork.js";

/**
 * How an object's alarm follows its engine: an adaptive interval, quick while work is carried over so
 * a backlog drains in seconds, and otherwise no sooner than the next due time, so an idle object
 * costs nothing.
 */
export interface AlarmCadence {
  /** While work is carried over to the next tick (the budget or `maxJobs` ran out): 100 ms. */
  carriedMs: number;
  /** The longest the alarm ever waits, even with nothing due (steady state): 5 minutes. */
  ceilingMs: number;
}

/**
 * When the alarm should next fire after a tick that ended at `now`: soon while work is carried over
 * (or already due again), at the engine's next wake-up otherwise, and never later than the ceiling,
 * so an object always has an alarm and a lost one is noticed (the watchdog counts on that).
 */
export function nextAlarmAt(result: Pick<TickResult, "nextWakeAt" | "carried">, now: number, cadence: AlarmCadence): number {
  if (result.carried || (result.nextWakeAt !== null && result.nextWakeAt <= now)) return now + cadence.carriedMs;
  const ceiling = now + cadence.ceilingMs;
  return result.nextWakeAt === null ? ceiling : Math.min(result.nextWakeAt, ceiling);
}
