import type { Clock } from "../../core/clock.js";

/**
 * A queue's `rateLimit` in this process: at most `max` job starts per fixed window of `perMs`; a new
 * window opens at the first look after the last one ran out. It is per process, as the option says:
 * counting in memory costs no round trip on the hot path, and losing the count on a restart only
 * opens a fresh window.
 */
export class RateLimiter {
  private windowStart = 0;
  private used = 0;

  constructor(
    private readonly limit: { max: number; perMs: number } | undefined,
    private readonly clock: Clock,
  ) {}

  /** Limits `want` starts to what the current window has left (all of it without a limit). */
  allowance(want: number): number {
    const limit = this.limit;
    if (!limit || want <= 0) return Math.max(0, want);
    const now = this.clock.now();
    if (now - this.windowStart >= limit.perMs) {
      this.windowStart = now;
      this.used = 0;
    }
    return Math.max(0, Math.min(want, limit.max - this.used));
  }

  /** Counts `count` jobs started (claimed or handed off). */
  started(count: number): void {
    if (this.limit) this.used += count;
  }

  /** How long from `now` until the window reopens when it is used up; 0 while starts are left. */
  wait(now: number): number {
    const limit = this.limit;
    if (!limit || this.used < limit.max) return 0;
    return Math.max(0, this.windowStart + limit.perMs - now);
  }
}
