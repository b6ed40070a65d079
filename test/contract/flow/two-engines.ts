import { afterEach } from "vitest";
import { createTickwork, type Tickwork } from "../../../src/tickwork.js";
import type { LogEvent } from "../../../src/core/logger.js";
import { fakeClock, type FakeClock } from "../../../src/testing/fake-clock.js";
import { durableObjectCase, postgresCase, sqliteFileCase, type StoreCase } from "../../support/stores.js";
import { START, deferred, type Deferred, type EngineOptions } from "../../support/queue-fixtures.js";

/** The stores a second process can open (an in-memory SQLite cannot): limits held in the store are shared through them. */
export function sharedStoreCases(): StoreCase[] {
  return [sqliteFileCase(), postgresCase(), durableObjectCase()];
}

export interface Process {
  tw: Tickwork;
  /** Every event this engine logged (debug included), in order. */
  events: LogEvent[];
  named(event: string): LogEvent[];
}

export interface TwoEngines {
  a: Process;
  b: Process;
  /** One fake clock for both: two processes reading the same time. */
  clock: FakeClock;
  /** A gate handlers wait on; the teardown opens every gate still shut, so no stop waits on one. */
  gate(): Deferred;
}

/**
 * Registers an afterEach that opens the test's gates, stops both engines and cleans the store up, and
 * returns the function that creates a test's two engines: `a` on a fresh store of `storeCase`, `b` on
 * the same database opened again (a second process), both on one fake clock at `START`.
 */
export function twoEnginesFor(storeCase: StoreCase): (options?: EngineOptions) => Promise<TwoEngines> {
  let engines: Tickwork[] = [];
  let gates: Deferred[] = [];
  let clock: FakeClock | undefined;

  afterEach(async () => {
    for (const gate of gates) gate.resolve();
    try {
      const stopping = Promise.all(engines.map((tw) => tw.stop()));
      // A failed test may leave a handler running: its shutdown grace passes on the fake clock.
      await clock?.advance("1h");
      await stopping;
    } finally {
      engines = [];
      gates = [];
      await storeCase.cleanup();
    }
  });

  const process = async (options: EngineOptions, store: ReturnType<StoreCase["make"]>, at: FakeClock): Promise<Process> => {
    const events: LogEvent[] = [];
    const tw = await createTickwork({ logLevel: "debug", ...options, store, clock: at, logger: (e) => events.push(e), handleSignals: false });
    engines.push(tw);
    return { tw, events, named: (name) => events.filter((e) => e.event === name) };
  };

  return async (options = {}) => {
    clock = fakeClock(START);
    const a = await process(options, storeCase.make(), clock);
    const b = await process(options, storeCase.reopen(), clock);
    return {
      a,
      b,
      clock,
      gate: () => {
        const gate = deferred();
        gates.push(gate);
        return gate;
      },
    };
  };
}

/** The most starts in any window `[s, s + perMs)` that opens at one of them. */
export function mostInAnyWindow(startTimes: number[], perMs: number): number {
  const sorted = [...startTimes].sort((x, y) => x - y);
  let most = 0;
  for (let i = 0; i < sorted.length; i++) {
    let n = 0;
    for (let j = i; j < sorted.length && sorted[j]! < sorted[i]! + perMs; j++) n++;
    most = Math.max(most, n);
  }
  return most;
}

/** Running counts that remember their peak: a handler calls `enter` as it starts and `leave` as it ends. */
export class Peaks {
  private readonly now = new Map<string, number>();
  readonly peak = new Map<string, number>();

  enter(key: string): void {
    const n = (this.now.get(key) ?? 0) + 1;
    this.now.set(key, n);
    this.peak.set(key, Math.max(n, this.peak.get(key) ?? 0));
  }

  leave(key: string): void {
    this.now.set(key, (this.now.get(key) ?? 0) - 1);
  }

  running(key: string): number {
    return this.now.get(key) ?? 0;
  }
}
