import { describe, expect, it } from "vitest";
import { eventLine, newEventCounts, plural, untilText } from "../../examples/demo/events.js";
import type { LogEvent } from "../../src/index.js";

const NOW = Date.parse("2026-01-01T00:00:00Z");
const event = (name: string, fields: Record<string, unknown>): LogEvent => ({ time: NOW, level: "warn", event: name, ...fields }) as LogEvent;

/**
 * The demo's console lines: a retry time is printed relative to the engine's clock now (a fan-out
 * round that outlasted its backoff logs a retry time already past: that is "now", never "+-3s"),
 * and counts agree with their nouns ("1 attempt", "2 attempts").
 */
describe("the demo's event lines", () => {
  it("prints a fan-out retry relative to the engine's clock, and a past one as now", () => {
    const counts = newEventCounts();
    const ahead = eventLine(event("fanout.retry_scheduled", { fanout: "symbols", failed: 3, retryAt: NOW + 30_000 }), counts, NOW);
    expect(ahead).toBe("fan-out symbols: 3 pushes failed; retry in 30s");
    const past = eventLine(event("fanout.retry_scheduled", { fanout: "symbols", failed: 1, retryAt: NOW - 3_000 }), counts, NOW);
    expect(past).toBe("fan-out symbols: 1 push failed; retry now");
  });

  it("prints a task backoff relative to the engine's clock, never negative", () => {
    const counts = newEventCounts();
    expect(eventLine(event("task.backoff", { task: "prices", nextRunAfter: NOW + 12_400 }), counts, NOW)).toBe("task prices backed off on a rate limit; next run in 12s (not a failure)");
    expect(eventLine(event("task.backoff", { task: "prices", nextRunAfter: NOW - 800 }), counts, NOW)).toBe("task prices backed off on a rate limit; next run now (not a failure)");
    expect(counts.backoffs).toBe(2);
  });

  it("says 1 attempt and 6 attempts", () => {
    const counts = newEventCounts();
    const failed = (attempts: number) => eventLine(event("job.failed", { queue: "payments", id: 7, attempts, error: "boom\n    at stack" }), counts, NOW);
    expect(failed(1)).toBe("queue payments: job 7 failed for good after 1 attempt: boom");
    expect(failed(6)).toBe("queue payments: job 7 failed for good after 6 attempts: boom");
  });

  it("prints retry delays that cannot go below zero, in ms under a second", () => {
    const counts = newEventCounts();
    expect(eventLine(event("job.retry_scheduled", { queue: "q", id: 1, attempt: 1, error: "x", delayMs: 988 }), counts, NOW)).toBe("queue q: job 1 attempt 1 failed (x); retry in 988ms");
    expect(eventLine(event("delivery.failed", { delivery: "d", key: "k", attempt: 2, error: "x", failedAt: NOW, retryAt: NOW + 5_000 }), counts, NOW)).toBe(
      "delivery d: k attempt 2 failed (x); retry 5s after that failure",
    );
    expect(eventLine(event("delivery.failed", { delivery: "d", key: "k", attempt: 2, error: "x", failedAt: NOW, retryAt: NOW - 5 }), counts, NOW)).toBe(
      "delivery d: k attempt 2 failed (x); retry 0ms after that failure",
    );
  });

  it("words counts by their number", () => {
    expect([plural(0, "retry", "retries"), plural(1, "retry", "retries"), plural(2, "task backoff")]).toEqual(["0 retries", "1 retry", "2 task backoffs"]);
    expect(untilText(NOW + 499, NOW)).toBe("now");
    expect(untilText(NOW + 1_500, NOW)).toBe("in 2s");
  });
});
