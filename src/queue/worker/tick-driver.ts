import type { Clock } from "../../core/clock.js";
import type { Claimer } from "./claimer.js";
import type { OutcomeBatcher } from "./outcomes.js";
import type { RateLimiter } from "../flow-control/rate-limit.js";
import type { JobRunner } from "./runner.js";
import type { Slots } from "./slots.js";

export interface TickDeps {
  clock: Clock;
  /** Jobs a worker runs at once: its concurrency times its batch size. */
  capacity: number;
  holdPollMs: number;
  limiter: RateLimiter;
  slots: Slots | null;
  claimer: Claimer;
  runner: JobRunner;
  outcomes: OutcomeBatcher;
  /** Whether the continuous driver runs too (its slots are then its own to keep). */
  active: () => boolean;
}

export interface TickResult {
  ran: number;
  more: boolean;
  heldUntil?: number;
}

/**
 * The worker's driver for `tw.tick()`: one bounded pass that claims and runs due jobs batch after
 * batch, for tests on a fake clock and runtimes (Durable Object alarms) that drive the engine
 * themselves.
 */
export class TickDriver {
  constructor(private readonly deps: TickDeps) {}

  /**
   * Claims and runs due jobs until none is due or `budget` jobs have run. `heldUntil`: due jobs wait on
   * a limit (a rate window, a token, a slot another process holds) or a pause; the pass looks again
   * then rather than at the store's due times.
   */
  async runDue(budget: number): Promise<TickResult> {
    try {
      return await this.runHolding(budget);
    } finally {
      // A tick holds its slots only while it runs: between ticks another engine may need them.
      if (this.deps.slots && !this.deps.active()) await this.deps.slots.set(0);
    }
  }

  private async runHolding(budget: number): Promise<TickResult> {
    const { clock, limiter, slots, claimer } = this.deps;
    let ran = 0;
    while (ran < budget) {
      const wanted = Math.min(this.deps.capacity, budget - ran);
      const asked = limiter.allowance(wanted);
      if (asked === 0) {
        // The queue's rateLimit in this process holds it back: a hold like the store's limits'.
        const now = clock.now();
        const heldUntil = now + limiter.wait(now);
        claimer.noteHold("rateLimit", 0, wanted, heldUntil);
        return { ran, more: false, heldUntil };
      }
      let limit = asked;
      let cutBySlots = false;
      if (slots) {
        const { held, due } = await slots.set(asked);
        if (held < asked && !due) return { ran, more: false };
        if (held === 0) {
          claimer.noteHold("globalConcurrency", 0, asked);
          return { ran, more: false, heldUntil: clock.now() + this.deps.holdPollMs };
        }
        limit = held;
        cutBySlots = held < asked;
      }
      const { entries, result } = await claimer.claim(limit, { asked, cutBySlots });
      await this.deps.runner.runAll(entries);
      await this.deps.outcomes.drain();
      ran += entries.length;
      if (result.held && entries.length < limit) {
        // A group at its limit leaves the others' jobs to the next batch; nothing at all started: wait.
        if (entries.length > 0) continue;
        return { ran, more: false, heldUntil: claimer.holdUntil(result) };
      }
      if (entries.length < limit) return { ran, more: false };
    }
    return { ran, more: true };
  }
}
