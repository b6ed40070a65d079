import { describe, expect, it } from "vitest";
import type { Clock } from "../../src/core/clock.js";
import { InvalidDurationError, InvalidInputError } from "../../src/core/errors.js";
import { fakeClock } from "../../src/testing/index.js";

/** Resolves after `ms` on `clock`: what code awaiting a timer looks like. */
const sleep = (clock: Clock, ms: number) => new Promise<void>((resolve) => clock.setTimeout(resolve, ms));

describe("fake clock", () => {
  it("starts where told and only moves when advanced", async () => {
    const clock = fakeClock("2024-01-01T00:00:00.000Z");
    expect(clock.now()).toBe(Date.parse("2024-01-01T00:00:00.000Z"));
    expect(fakeClock().now()).toBe(0);
    expect(fakeClock(new Date(5_000)).now()).toBe(5_000);
    await clock.advance("1m");
    expect(clock.now()).toBe(Date.parse("2024-01-01T00:01:00.000Z"));
    await clock.advance(250);
    expect(clock.now()).toBe(Date.parse("2024-01-01T00:01:00.250Z"));
  });

  it("fires timers in due order as it advances past them, each seeing its own time", async () => {
    const clock = fakeClock(0);
    const fired: Array<[string, number]> = [];
    clock.setTimeout(() => fired.push(["c", clock.now()]), 3_000);
    clock.setTimeout(() => fired.push(["a", clock.now()]), 1_000);
    clock.setTimeout(() => fired.push(["b", clock.now()]), 2_000);
    clock.setTimeout(() => fired.push(["late", clock.now()]), 10_000);
    expect(clock.pending).toBe(4);

    await clock.advance("2s");
    expect(fired).toEqual([
      ["a", 1_000],
      ["b", 2_000],
    ]);
    await clock.advance("1s");
    expect(fired.map(([name]) => name)).toEqual(["a", "b", "c"]);
    expect(clock.now()).toBe(3_000);
    expect(clock.pending).toBe(1);
  });

  it("fires timers due at the same moment in the order they were set", async () => {
    const clock = fakeClock(0);
    const fired: number[] = [];
    for (let i = 0; i < 5; i++) clock.setTimeout(() => fired.push(i), 1_000);
    await clock.advance("1s");
    expect(fired).toEqual([0, 1, 2, 3, 4]);
  });

  it("treats a negative delay as due now", async () => {
    const clock = fakeClock(0);
    let fired = false;
    clock.setTimeout(() => (fired = true), -50);
    await clock.advance(0);
    expect(fired).toBe(true);
  });

  it("set moves to a date, firing what falls due on the way", async () => {
    const clock = fakeClock("2024-01-01T00:00:00Z");
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(new Date(clock.now()).toISOString()), 3_600_000);
    clock.setTimeout(() => fired.push("tomorrow"), 86_400_000);
    await clock.set(new Date("2024-01-01T12:00:00Z"));
    expect(clock.now()).toBe(Date.parse("2024-01-01T12:00:00Z"));
    expect(fired).toEqual(["2024-01-01T01:00:00.000Z"]);
    await clock.set("2024-01-02T00:00:00Z");
    expect(fired).toEqual(["2024-01-01T01:00:00.000Z", "tomorrow"]);
  });

  it("cannot go back, and stays where it was", async () => {
    const clock = fakeClock("2024-01-01T00:00:00Z");
    await expect(clock.set("2023-12-31T23:59:59Z")).rejects.toThrow(InvalidInputError);
    await expect(clock.set(0)).rejects.toThrow(/cannot go back from 2024-01-01T00:00:00.000Z to 1970-01-01T00:00:00.000Z/);
    await expect(clock.advance(-1)).rejects.toThrow(InvalidDurationError);
    await expect(clock.set("not a date")).rejects.toThrow(/invalid time "not a date"/);
    expect(clock.now()).toBe(Date.parse("2024-01-01T00:00:00Z"));
  });

  it("does not fire cleared timers, including one cleared by an earlier timer in the same advance", async () => {
    const clock = fakeClock(0);
    const fired: string[] = [];
    const cleared = clock.setTimeout(() => fired.push("cleared"), 1_000);
    clock.clearTimeout(cleared);
    const later = clock.setTimeout(() => fired.push("cleared by a"), 3_000);
    clock.setTimeout(() => {
      fired.push("a");
      clock.clearTimeout(later);
    }, 2_000);
    await clock.advance("5s");
    expect(fired).toEqual(["a"]);
    expect(clock.pending).toBe(0);
  });

  it("fires a timer set by a timer's callback when it falls within the same advance", async () => {
    const clock = fakeClock(0);
    const fired: Array<[string, number]> = [];
    clock.setTimeout(() => {
      fired.push(["first", clock.now()]);
      clock.setTimeout(() => fired.push(["second", clock.now()]), 1_500);
      clock.setTimeout(() => fired.push(["beyond", clock.now()]), 60_000);
    }, 1_000);
    await clock.advance("3s");
    expect(fired).toEqual([
      ["first", 1_000],
      ["second", 2_500],
    ]);
    expect(clock.pending).toBe(1);
  });

  it("lets async code chained on timers run through an advance, as real time would", async () => {
    const clock = fakeClock(0);
    const woke: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        await sleep(clock, 1_000);
        woke.push(clock.now());
      }
    })();
    await clock.advance("5s");
    expect(woke).toEqual([1_000, 2_000, 3_000]);
    await loop;
  });
});
