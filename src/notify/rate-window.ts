import type { LogLevel } from "../core/logger.js";
import type { HeldBack } from "./text.js";

/**
 * A sink's rate limit: at most `max` notifications in any `per` milliseconds (a sliding window, so
 * two fixed windows back to back cannot let 2 × max through at their seam), and a count of what it
 * held back, by event name, for the summary that goes out when the window has room again.
 * In memory, per engine: see the notifications guide for what that means with several processes.
 */
export class RateWindow {
  /** When each notification let through in the last `per` went out, oldest first; never more than `max`. */
  private readonly sent: number[] = [];
  private readonly held = new Map<string, HeldBack>();

  constructor(
    readonly max: number,
    readonly per: number,
  ) {}

  /** Lets one notification through at `now`, if the window has room. */
  admit(now: number): boolean {
    if (!this.hasRoom(now)) return false;
    this.sent.push(now);
    return true;
  }

  hasRoom(now: number): boolean {
    while (this.sent.length > 0 && this.sent[0]! <= now - this.per) this.sent.shift();
    return this.sent.length < this.max;
  }

  /** Counts one event held back at `now`. */
  hold(event: string, level: LogLevel, now: number): void {
    const held = this.held.get(event);
    if (held) held.count++;
    else this.held.set(event, { event, level, count: 1, since: now });
  }

  get holding(): boolean {
    return this.held.size > 0;
  }

  /** What was held back, oldest first, and the count starts over. */
  takeHeld(): HeldBack[] {
    const held = [...this.held.values()];
    this.held.clear();
    return held;
  }

  /** When the held-back summary can go out: null when nothing is held. */
  summaryAt(now: number): number | null {
    if (!this.holding) return null;
    return this.hasRoom(now) ? now : this.sent[0]! + this.per;
  }

  status(now: number): { sentInWindow: number; held: HeldBack[] } {
    this.hasRoom(now);
    return { sentInWindow: this.sent.length, held: [...this.held.values()].map((h) => ({ ...h })) };
  }
}
