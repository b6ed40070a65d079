import { describe, expect, it } from "vitest";
import { Rates, RATE_WINDOW_MS, type TopSnapshot } from "../../src/cli/top-view.js";
import type { QueueFlowStatus } from "../../src/queue/controls.js";
import type { JobStatus } from "../../src/queue/job.js";

/** A reading of one queue at `at` (epoch ms): `succeeded` and `failed` jobs so far. */
function reading(at: number, succeeded: number, failed = 0): TopSnapshot {
  const counts: Record<JobStatus, number> = { pending: 0, running: 0, succeeded, failed, cancelled: 0 };
  return { at, queues: [{ name: "emails" } as QueueFlowStatus], counts: [{ queue: "emails", counts }], scheduler: { pausedUntil: null, tasks: [] } };
}

describe("tickwork top's DONE/S", () => {
  it("is blank until two readings are apart, then counts succeeded and failed jobs per second over the window", () => {
    const rates = new Rates();
    expect(rates.record(reading(0, 0)).get("emails")).toBeNull();
    expect(rates.record(reading(1_000, 3, 1)).get("emails")).toBe(4);
    expect(rates.record(reading(2_000, 5, 1)).get("emails")).toBe(3);
    // Readings older than the window leave it (but the newest of them, which starts it).
    for (let at = 2_500; at <= 2_000 + RATE_WINDOW_MS; at += 500) rates.record(reading(at, 5, 1));
    expect(rates.record(reading(3_000 + RATE_WINDOW_MS, 5, 1)).get("emails")).toBe(0);
  });

  it("after a refresh that came later than the window, shows the rate since the reading before it", () => {
    const rates = new Rates();
    rates.record(reading(0, 0));
    // A busy machine held the next refresh 15 s: the 5 jobs finished meanwhile still show.
    expect(rates.record(reading(15_000, 4, 1)).get("emails")).toBeCloseTo(5 / 15);
  });

  it("never shows a negative rate when retention deletes finished jobs", () => {
    const rates = new Rates();
    rates.record(reading(0, 10));
    expect(rates.record(reading(1_000, 2)).get("emails")).toBe(0);
  });
});
