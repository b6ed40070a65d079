import type { Clock, TimerHandle } from "../core/clock.js";
import { toMs, type Duration } from "../core/duration.js";
import { InvalidInputError } from "../core/errors.js";
import { instantOf } from "../core/time.js";

/** A clock that only moves when told to; its timers fire, in order, as it is advanced past them. */
export interface FakeClock extends Clock {
  advance(by: Duration): Promise<void>;
  set(to: Date | number | string): Promise<void>;
  /** Number of timers waiting to fire. */
  readonly pending: number;
}

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

export function fakeClock(start: Date | number | string = 0): FakeClock {
  let now = toEpoch(start);
  let seq = 0;
  const timers = new Set<Timer>();

  async function moveTo(target: number): Promise<void> {
    if (target < now) throw new InvalidInputError(`fake clock cannot go back from ${iso(now)} to ${iso(target)}`);
    for (;;) {
      let next: Timer | undefined;
      for (const t of timers) if (t.at <= target && (!next || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
      if (!next) break;
      timers.delete(next);
      now = Math.max(now, next.at);
      next.fn();
      // Let the callback's promise chain settle before the next timer, as real time would.
      await settle();
    }
    now = target;
    await settle();
  }

  return {
    now: () => now,
    setTimeout(fn, ms) {
      const timer: Timer = { at: now + Math.max(0, ms), seq: seq++, fn };
      timers.add(timer);
      return timer as TimerHandle;
    },
    clearTimeout(handle) {
      timers.delete(handle as Timer);
    },
    // async, so a bad duration or time rejects the returned promise rather than throwing before it.
    advance: async (by) => moveTo(now + toMs(by)),
    set: async (to) => moveTo(toEpoch(to)),
    get pending() {
      return timers.size;
    },
  };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

function toEpoch(value: Date | number | string): number {
  const ms = typeof value === "string" ? Date.parse(value) : instantOf(value);
  if (ms === null || Number.isNaN(ms)) throw new InvalidInputError(`fake clock: invalid time ${JSON.stringify(value)}`);
  return ms;
}

const iso = (ms: number) => new Date(ms).toISOString();
