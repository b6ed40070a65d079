import { afterEach } from "vitest";
import { createTickwork, type Tickwork, type TickworkOptions } from "../../src/tickwork.js";
import type { LogEvent } from "../../src/core/logger.js";
import { fakeClock, type FakeClock } from "../../src/testing/fake-clock.js";
import type { StoreCase } from "./stores.js";

/** Every queue contract test starts its fake clock here. */
export const START = "2026-01-01T00:00:00Z";
export const T0 = Date.parse(START);

export const SECOND = 1_000;
export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

export interface Engine {
  tw: Tickwork;
  clock: FakeClock;
  /** Every event the engine logged, in order. */
  events: LogEvent[];
  /** The events with this name. */
  named(event: string): LogEvent[];
}

/** Ticks until a tick runs nothing (a flow's levels run one tick after another), at most `rounds` times. */
export async function runUntilIdle(tw: Tickwork, rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) if ((await tw.tick()).ran === 0) return;
}

export type EngineOptions = Omit<TickworkOptions, "store" | "clock" | "logger" | "handleSignals">;

/**
 * Registers an afterEach that stops the engine and cleans the store up, and returns the function
 * that creates the engine of a test: a fresh store of `storeCase`, a fake clock at `START`, events
 * captured in memory.
 */
export function engineFor(storeCase: StoreCase): (options?: EngineOptions) => Promise<Engine> {
  let current: Engine | undefined;

  afterEach(async () => {
    const engine = current;
    current = undefined;
    try {
      if (engine) {
        // A test that failed with a handler still blocked would leave stop() waiting for its
        // shutdown grace on the fake clock: move the clock past it so teardown always ends.
        const stopped = engine.tw.stop();
        await engine.clock.advance("1h");
        await stopped;
      }
    } finally {
      await storeCase.cleanup();
    }
  });

  return async (options = {}) => {
    const clock = fakeClock(START);
    const events: LogEvent[] = [];
    const tw = await createTickwork({ ...options, store: storeCase.make(), clock, logger: (e) => events.push(e), handleSignals: false });
    current = { tw, clock, events, named: (name) => events.filter((e) => e.event === name) };
    return current;
  };
}

/** A promise with its resolve exposed: lets a handler wait for the test, or tell it that it started. */
export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Waits for a condition that depends on real I/O finishing (a PostgreSQL round trip started by a
 * fake-clock timer). It is not a stand-in for the fake clock: time on the clock does not move here.
 */
export async function until(condition: () => boolean, what: string, maxTurns = 20_000): Promise<void> {
  // Turns bound the wait when the store answers in-process; a store across a socket (PostgreSQL,
  // workerd) may need more turns than that on a loaded machine, so real time bounds it too.
  const deadline = Date.now() + 10_000;
  for (let i = 0; i < maxTurns || Date.now() < deadline; i++) {
    if (condition()) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error(`gave up waiting for ${what}`);
}
