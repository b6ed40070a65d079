import { describe, expect, it } from "vitest";
import { nextAlarmAt } from "../../src/runtime/cloudflare/alarm.js";
import { DEFAULT_HEADROOM, WORKERS_PAID_SUBREQUESTS, parseObjectConfig } from "../../src/runtime/cloudflare/options.js";

const NOW = Date.parse("2026-01-01T00:00:00Z");
const cadence = { carriedMs: 100, ceilingMs: 300_000 };

describe("the alarm's cadence (seed 000: 100 ms while work is carried over, the next due time, a 5-minute ceiling)", () => {
  it("carried-over work brings the alarm back in 100 ms, whatever the next due time", () => {
    expect(nextAlarmAt({ carried: true, nextWakeAt: NOW + 60_000 }, NOW, cadence)).toBe(NOW + 100);
  });

  it("work already due again (maxJobs reached) is carried over too", () => {
    expect(nextAlarmAt({ carried: false, nextWakeAt: NOW }, NOW, cadence)).toBe(NOW + 100);
    expect(nextAlarmAt({ carried: false, nextWakeAt: NOW - 5 }, NOW, cadence)).toBe(NOW + 100);
  });

  it("otherwise the engine's next wake-up, and never later than the ceiling", () => {
    expect(nextAlarmAt({ carried: false, nextWakeAt: NOW + 42_000 }, NOW, cadence)).toBe(NOW + 42_000);
    expect(nextAlarmAt({ carried: false, nextWakeAt: NOW + 3_600_000 }, NOW, cadence)).toBe(NOW + 300_000);
    expect(nextAlarmAt({ carried: false, nextWakeAt: null }, NOW, cadence)).toBe(NOW + 300_000);
  });
});

describe("a TickworkObject's configuration", () => {
  const base = { logger: "console" as const };

  it("the tick budget defaults to Workers Paid's 1,000 subrequests less 100 of headroom, and jobs per tick to the budget", () => {
    expect([WORKERS_PAID_SUBREQUESTS, DEFAULT_HEADROOM]).toEqual([1_000, 100]);
    expect(parseObjectConfig(base, "X")).toMatchObject({ subrequests: 1_000, headroom: 100, tickBudget: 900, maxJobsPerTick: 900 });
  });

  it("follows the plan's limit and headroom, or takes an explicit budget", () => {
    expect(parseObjectConfig({ ...base, subrequests: 50, headroom: 10 }, "X")).toMatchObject({ tickBudget: 40, maxJobsPerTick: 40 });
    expect(parseObjectConfig({ ...base, tickBudget: 500, maxJobsPerTick: 20 }, "X")).toMatchObject({ tickBudget: 500, maxJobsPerTick: 20 });
  });

  it("refuses a budget the platform cannot give, naming the numbers", () => {
    expect(() => parseObjectConfig({ ...base, subrequests: 50 }, "FreePlanDO")).toThrow(
      "FreePlanDO: headroom (100) leaves no tick budget out of 50 subrequests; lower headroom or set tickBudget",
    );
    expect(() => parseObjectConfig({ ...base, tickBudget: 2_000 }, "X")).toThrow("X: tickBudget (2000) exceeds the 1000 subrequests an invocation may make");
  });

  it("has defaults for the cadence, the watchdog and the platform's alarm retries, parsed from durations", () => {
    expect(parseObjectConfig(base, "X")).toMatchObject({ cadence: { carriedOver: 100, ceiling: 300_000 }, watchdog: { stuckAfter: 300_000 }, alarmRetries: 6, cache: "store", logLevel: "info" });
    expect(parseObjectConfig({ ...base, cadence: { ceiling: "1m" }, watchdog: { stuckAfter: "10m" } }, "X")).toMatchObject({ cadence: { carriedOver: 100, ceiling: 60_000 }, watchdog: { stuckAfter: 600_000 } });
  });

  it("refuses a missing or malformed logger choice, and unknown options, naming the field", () => {
    expect(() => parseObjectConfig({} as never, "X")).toThrow(/^X: logger: expected \{ binding: "LOGS", appId: "my-app" \}, "console", or a sink/);
    expect(() => parseObjectConfig({ logger: { binding: "LOGS" } } as never, "X")).toThrow(/logger: expected/);
    expect(() => parseObjectConfig({ ...base, cadence: { ceiling: "soon" } }, "X")).toThrow(/cadence\.ceiling: invalid duration "soon"/);
    expect(() => parseObjectConfig({ ...base, budget: 5 } as never, "X")).toThrow(/X: Unrecognized key: "budget"/);
  });
});
