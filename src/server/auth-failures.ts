import type { Clock, TimerHandle } from "../core/clock.js";
import type { Logger } from "../core/logger.js";

/** One line per wrong-token burst and per minute at most: a scan or a misconfigured poller cannot flood the log. */
export const AUTH_FAILURE_INTERVAL_MS = 60_000;

/**
 * Wrong-token warnings, aggregated. The first failure after a quiet interval is logged at once
 * (`server.auth_failed` with its method and path); those that follow within the interval are
 * counted, and when it ends one more line reports how many there were (`repeated`) and the last
 * one's method and path. Times come from the engine's clock.
 */
export class AuthFailureLog {
  private repeated = 0;
  private last: { method: string; path: string } | undefined;
  private timer: TimerHandle | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly intervalMs = AUTH_FAILURE_INTERVAL_MS,
  ) {}

  record(method: string, path: string): void {
    if (this.timer !== undefined) {
      this.repeated++;
      this.last = { method, path };
      return;
    }
    this.logger.warn("server.auth_failed", { method, path, reason: "wrong token" });
    this.timer = this.clock.setTimeout(() => this.flush(), this.intervalMs);
  }

  /** Reports the failures counted since the last line (at the interval's end, or when the server closes). */
  flush(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.repeated === 0) return;
    const { method, path } = this.last!;
    this.logger.warn("server.auth_failed", { method, path, reason: "wrong token", repeated: this.repeated, intervalMs: this.intervalMs });
    this.repeated = 0;
    this.last = undefined;
  }
}
