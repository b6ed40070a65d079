import { afterEach } from "vitest";
import { createTickwork } from "../../src/tickwork.js";
import type { LogEvent } from "../../src/core/logger.js";
import type { TaskContext } from "../../src/schedule/task.js";
import type { Store } from "../../src/store/store.js";
import { fakeClock, type FakeClock } from "../../src/testing/fake-clock.js";
import { START, type Engine, type EngineOptions } from "./queue-fixtures.js";
import type { StoreCase } from "./stores.js";

export { DAY, HOUR, MINUTE, SECOND, START, T0, deferred, until, type Deferred, type Engine } from "./queue-fixtures.js";

export interface ScheduleEngineOptions extends EngineOptions {
  /** Share a clock with another engine (two processes ticking at the same fake time); default a new one at START. */
  clock?: FakeClock;
}

export interface Engines {
  /** An engine on a fresh store of the case. */
  first(options?: ScheduleEngineOptions): Promise<Engine>;
  /** Another engine on the database of `first` (a second process, or the same one after a restart). */
  another(options?: ScheduleEngineOptions): Promise<Engine>;
}

/**
 * As `engineFor` (queue-fixtures), for tests that need more than one engine on one database: every
 * engine created is stopped after the test (the ones a test stopped itself are skipped by `stop()`),
 * then the store is cleaned up.
 */
export function enginesFor(storeCase: StoreCase): Engines {
  let engines: Engine[] = [];

  afterEach(async () => {
    const stopping = engines.reverse();
    engines = [];
    try {
      for (const { tw, clock } of stopping) {
        // A run still blocked on a gate (a failed test) holds stop() for its shutdown grace on the
        // fake clock: move the clock until stop() is through, letting store I/O finish in between.
        let done = false;
        const stopped = tw.stop().finally(() => (done = true));
        for (let i = 0; i < 50 && !done; i++) {
          await clock.advance("1h");
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
        await stopped;
      }
    } finally {
      await storeCase.cleanup();
    }
  });

  const create = async (store: Store, { clock = fakeClock(START), ...options }: ScheduleEngineOptions): Promise<Engine> => {
    const events: LogEvent[] = [];
    const tw = await createTickwork({ ...options, store, clock, logger: (e) => events.push(e), handleSignals: false });
    const engine: Engine = { tw, clock, events, named: (name) => events.filter((e) => e.event === name) };
    engines.push(engine);
    return engine;
  };

  return {
    first: (options = {}) => create(storeCase.make(), options),
    another: (options = {}) => create(storeCase.reopen(), options),
  };
}

/** What a run saw: the slot it was for, the clock when it started, and the rest of its context. */
export interface SeenRun {
  task: string;
  scheduledAt: number;
  /** The engine clock's time when the run started. */
  at: number;
  missed: number;
  manual: boolean;
}

/** Collects the runs of tasks: `run: runs.record(() => result)`. */
export function recordRuns(clock: FakeClock) {
  const seen: SeenRun[] = [];
  return {
    seen,
    /** A task's `run` that records what it saw, then does `then` (returns its value, or throws its error). */
    record<R>(then?: (ctx: TaskContext) => R) {
      return (ctx: TaskContext): R | undefined => {
        seen.push({ task: ctx.task, scheduledAt: ctx.scheduledAt, at: clock.now(), missed: ctx.missed, manual: ctx.manual });
        return then?.(ctx);
      };
    },
    /** The slots run so far, optionally of one task. */
    slots: (task?: string) => seen.filter((r) => task === undefined || r.task === task).map((r) => r.scheduledAt),
  };
}
