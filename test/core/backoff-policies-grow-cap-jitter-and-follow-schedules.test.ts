import { describe, expect, it } from "vitest";
import { exponential, nextDelay, schedule } from "../../src/core/backoff.js";
import { InvalidDurationError, InvalidInputError } from "../../src/core/errors.js";

/** A random source that returns the given values in turn, and counts how often it was asked. */
function pinned(...values: number[]) {
  let i = 0;
  const random = () => values[i++ % values.length]!;
  return { random, calls: () => i };
}

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a throw");
}

describe("exponential backoff", () => {
  it("grows by the factor from the base, factor 2 by default, without jitter by default", () => {
    const doubling = exponential({ base: "1s" });
    expect([1, 2, 3, 4, 5].map(doubling)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000]);
    const tripling = exponential({ base: 100, factor: 3, jitter: "none" });
    expect([1, 2, 3, 4].map(tripling)).toEqual([100, 300, 900, 2_700]);
    expect([1, 2, 3].map(exponential({ base: "5m", factor: 1 }))).toEqual([300_000, 300_000, 300_000]);
  });

  it("is capped by max, however many failures", () => {
    const policy = exponential({ base: "1s", max: "5s" });
    expect([1, 2, 3, 4, 5, 6].map(policy)).toEqual([1_000, 2_000, 4_000, 5_000, 5_000, 5_000]);
    expect(policy(10_000)).toBe(5_000);
  });

  it("never ends retries by itself", () => {
    const policy = exponential({ base: "1s", max: "1h" });
    for (const failures of [1, 10, 100, 1_000]) expect(policy(failures)).not.toBeNull();
  });

  it("full jitter is uniform in [0, delay]: exact with a pinned random, bounded over many draws", () => {
    const { random, calls } = pinned(0, 0.5, 0.25);
    const policy = exponential({ base: "1s", jitter: "full", random });
    expect(policy(1)).toBe(0);
    expect(policy(2)).toBe(1_000);
    expect(policy(3)).toBe(1_000);
    expect(calls()).toBe(3);

    const spread = exponential({ base: "1s", max: "1m", jitter: "full", random: pinned(0, 0.999_999, 0.1, 0.73, 0.5).random });
    for (let failures = 1; failures <= 20; failures++) {
      const delay = spread(failures)!;
      const ceiling = Math.min(60_000, 1_000 * 2 ** (failures - 1));
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });

  it("equal jitter is delay/2 plus uniform in [0, delay/2]: exact with a pinned random, bounded over many draws", () => {
    const policy = exponential({ base: "1s", jitter: "equal", random: pinned(0, 0.5, 0.999_999).random });
    expect(policy(1)).toBe(500);
    expect(policy(2)).toBe(1_500);
    expect(policy(3)).toBe(4_000); // 2000 + 0.999999 * 2000, rounded

    const spread = exponential({ base: "1s", max: "1m", jitter: "equal", random: pinned(0, 0.999_999, 0.1, 0.73, 0.5).random });
    for (let failures = 1; failures <= 20; failures++) {
      const delay = spread(failures)!;
      const ceiling = Math.min(60_000, 1_000 * 2 ** (failures - 1));
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });

  it("applies the cap before the jitter", () => {
    expect(exponential({ base: "1s", max: "5s", jitter: "full", random: () => 0.5 })(10)).toBe(2_500);
    expect(exponential({ base: "1s", max: "5s", jitter: "equal", random: () => 0.5 })(10)).toBe(3_750);
  });

  it("does not draw randomness without jitter", () => {
    const { random, calls } = pinned(0.5);
    const policy = exponential({ base: "1s", random });
    expect([1, 2, 3].map(policy)).toEqual([1_000, 2_000, 4_000]);
    expect(calls()).toBe(0);
  });

  it.each([
    [{ base: "1s", factor: 0.5 }, /factor must be a number >= 1, got 0\.5/],
    [{ base: "1s", factor: 0 }, /factor must be a number >= 1, got 0/],
    [{ base: "1s", factor: Number.NaN }, /factor must be a number >= 1, got NaN/],
    [{ base: "1s", factor: "2" }, /factor must be a number >= 1, got "2"/],
    [{ base: "1s", jitter: "half" }, /jitter must be "none", "full" or "equal", got "half"/],
    [{ base: "1s", jitter: true }, /jitter must be "none", "full" or "equal", got true/],
  ])("refuses %j with an InvalidInputError that says which option and what it got", (options, message) => {
    const error = thrown(() => exponential(options as never));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).code).toBe("TW_INVALID_INPUT");
    expect(error.message).toMatch(/^exponential backoff: /);
    expect(error.message).toMatch(message);
  });

  it.each([
    [{ base: "soon" }, '"soon"'],
    [{ base: -1 }, "-1"],
    [{ base: "1s", max: "-1s" }, '"-1s"'],
    [{ base: "1s", max: "forever" }, '"forever"'],
  ])("refuses the bad duration in %j, naming it", (options, shown) => {
    const error = thrown(() => exponential(options as never));
    expect(error).toBeInstanceOf(InvalidDurationError);
    expect(error.message).toContain(`invalid duration ${shown}`);
  });
});

describe("schedule backoff", () => {
  it("gives each step in turn, then null after the last step", () => {
    const policy = schedule(["1m", "5m", "15m"]);
    expect([1, 2, 3].map(policy)).toEqual([60_000, 300_000, 900_000]);
    expect(policy(4)).toBeNull();
    expect(policy(100)).toBeNull();
    expect(policy(0)).toBeNull();
  });

  it("accepts milliseconds and duration strings side by side", () => {
    expect([1, 2, 3].map(schedule([500, "2s", "1h30m"]))).toEqual([500, 2_000, 5_400_000]);
  });

  it("refuses an empty schedule or a non-array, saying what it got", () => {
    for (const [steps, shown] of [
      [[], "[]"],
      ["1m", '"1m"'],
      [undefined, "undefined"],
    ] as const) {
      const error = thrown(() => schedule(steps as never));
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error.message).toBe(`schedule(): expected a non-empty array of durations, got ${shown}`);
    }
  });

  it("refuses a bad step, naming it", () => {
    const error = thrown(() => schedule(["1m", "5 minutes", "1h"]));
    expect(error).toBeInstanceOf(InvalidDurationError);
    expect(error.message).toContain('invalid duration "5 minutes"');
  });
});

describe("nextDelay", () => {
  it("treats a user policy's negative, NaN or infinite answer as stop", () => {
    expect(nextDelay(() => 1_000, 1)).toBe(1_000);
    expect(nextDelay(() => 0, 1)).toBe(0);
    expect(nextDelay(() => null, 1)).toBeNull();
    expect(nextDelay(() => -1, 1)).toBeNull();
    expect(nextDelay(() => Number.NaN, 1)).toBeNull();
    expect(nextDelay(() => Number.POSITIVE_INFINITY, 1)).toBeNull();
  });
});
