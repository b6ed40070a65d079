/**
 * The demo's console lines for engine events: retries, failures, backoffs, convergence. The
 * dashboard shows the rest. Pure functions of the event, the counts so far and the engine's clock.
 */
import type { LogEvent } from "../../src/index.js";

export interface EventCounts {
  succeeded: number;
  /** Job retries scheduled; the first few get a line. */
  retries: number;
  backoffs: number;
  converged: number;
  /** Failed callbacks; the first few get a line. */
  deliveryFailures: number;
}

export function newEventCounts(): EventCounts {
  return { succeeded: 0, retries: 0, backoffs: 0, converged: 0, deliveryFailures: 0 };
}

const RETRY_LINES = 5;
const DELIVERY_LINES = 3;

/** Counts the event, and returns its line or null. `now` is the engine's clock, which the event's times are on. */
export function eventLine(event: LogEvent, counts: EventCounts, now: number): string | null {
  const { event: name } = event;
  switch (name) {
    case "job.succeeded":
      counts.succeeded++;
      return null;
    case "job.retry_scheduled":
      return counts.retries++ < RETRY_LINES
        ? `queue ${String(event.queue)}: job ${String(event.id)} attempt ${String(event.attempt)} failed (${firstLine(event.error)}); retry in ${duration(Number(event.delayMs) || 0)}`
        : null;
    case "job.failed":
      return `queue ${String(event.queue)}: job ${String(event.id)} failed for good after ${plural(Number(event.attempts), "attempt")}: ${firstLine(event.error)}`;
    case "delivery.failed":
      // retryAt - failedAt is the policy's delay, the same whenever the line is printed.
      return counts.deliveryFailures++ < DELIVERY_LINES
        ? `delivery ${String(event.delivery)}: ${String(event.key)} attempt ${String(event.attempt)} failed (${firstLine(event.error)}); retry ${duration(Number(event.retryAt) - Number(event.failedAt))} after that failure`
        : null;
    case "task.backoff":
      counts.backoffs++;
      return `task ${String(event.task)} backed off on a rate limit; next run ${untilText(Number(event.nextRunAfter), now)} (not a failure)`;
    case "task.failed":
      return `task ${String(event.task)} failed: ${firstLine(event.error)}`;
    case "fanout.retry_scheduled":
      return `fan-out ${String(event.fanout)}: ${plural(Number(event.failed), "push", "pushes")} failed; retry ${untilText(Number(event.retryAt), now)}`;
    case "fanout.converged":
      counts.converged++;
      return `fan-out ${String(event.fanout)}: every receiver has state v${String(event.version)}`;
    case "engine.started":
      return `engine started on ${String(event.store)}; events go to ${String(event.logSink)} (${String(event.logSinkChosenBy)})`;
    case "delivery.dropped":
    case "store.error":
      return `${name} ${JSON.stringify(event)}`;
    default:
      return null;
  }
}

/**
 * "in 12s", or "now" when `at` is not ahead of `now`. A retry time is set from the moment its round
 * began, so a long round can log one that is already past: that retry is simply due.
 */
export function untilText(at: number, now: number): string {
  const seconds = Math.round((at - now) / 1000);
  return Number.isFinite(seconds) && seconds > 0 ? `in ${seconds}s` : "now";
}

/** A delay: "250ms", "12s"; never negative. */
export function duration(ms: number): string {
  const at = Number.isFinite(ms) ? Math.max(0, ms) : 0;
  return at < 1_000 ? `${Math.round(at)}ms` : `${Math.round(at / 1_000)}s`;
}

/** "1 attempt", "2 attempts". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

export function firstLine(text: unknown): string {
  return String(text).split("\n")[0]!.slice(0, 120);
}
