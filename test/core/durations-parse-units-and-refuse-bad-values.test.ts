import { describe, expect, it } from "vitest";
import { toMs } from "../../src/core/duration.js";
import { InvalidDurationError, InvalidInputError } from "../../src/core/errors.js";

describe("durations", () => {
  it.each([
    ["500ms", 500],
    ["30s", 30_000],
    ["5m", 300_000],
    ["1h", 3_600_000],
    ["2h", 7_200_000],
    ["1d", 86_400_000],
    ["1h30m", 5_400_000],
    ["1d2h3m4s5ms", 86_400_000 + 7_200_000 + 180_000 + 4_000 + 5],
    ["0.5s", 500],
    ["0s", 0],
  ])("parses %j to %d ms", (text, ms) => {
    expect(toMs(text)).toBe(ms);
  });

  it.each([0, 1, 250, 86_400_000])("takes the number %d as milliseconds", (ms) => {
    expect(toMs(ms)).toBe(ms);
  });

  it.each([
    ["5x", '"5x"'],
    ["", '""'],
    ["   ", '"   "'],
    ["-1s", '"-1s"'],
    ["m5", '"m5"'],
    ["5", '"5"'],
    ["1h 30m", '"1h 30m"'],
    ["5M", '"5M"'],
    [-5, "-5"],
    [Number.NaN, "NaN"],
    [Number.POSITIVE_INFINITY, "Infinity"],
    [null, "null"],
    [undefined, "undefined"],
    [{}, "{}"],
    [[], "[]"],
  ])("refuses %j with an InvalidDurationError naming it", (value, shown) => {
    let caught: unknown;
    try {
      toMs(value as never);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidDurationError);
    expect(caught).toBeInstanceOf(InvalidInputError);
    const error = caught as InvalidDurationError;
    expect(error.code).toBe("TW_INVALID_DURATION");
    expect(error.value).toBe(value);
    expect(error.message).toContain(`invalid duration ${shown}:`);
    // The message also says what would have been accepted.
    expect(error.message).toContain('"30s"');
  });
});
