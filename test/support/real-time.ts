import { afterEach } from "vitest";
import { createTickwork, type Tickwork, type TickworkOptions } from "../../src/tickwork.js";
import type { LogEvent } from "../../src/core/logger.js";

/**
 * Helpers for tests that run the engine on the system clock (`tw.start()`): they wait for events
 * with a bounded deadline, never for a fixed time.
 */

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

/** `promise`, or a rejection naming `what` if it has not settled after `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Checks `probe` every few milliseconds until it returns something other than undefined, null or
 * false, and returns that; fails naming `what` after `ms`.
 */
export async function eventually<T>(probe: () => T | undefined | null | false | Promise<T | undefined | null | false>, what: string, ms = 5_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export interface RealEngine {
  tw: Tickwork;
  events: LogEvent[];
  named(event: string): LogEvent[];
}

export interface Teardown {
  /** Runs before the engines stop: a test opens its gates here, so no handler holds the stop up. */
  beforeStop?: () => void;
  /** Runs after they stopped (and closed their stores): drop the schema, delete the files. */
  afterStop?: () => Promise<void>;
}

/**
 * Returns the function that creates a test's engines on the system clock, events captured in memory
 * and signals left alone (the test runner owns them). An afterEach stops every engine it created.
 */
export function realEngines(teardown: Teardown = {}): (options: Omit<TickworkOptions, "logger" | "handleSignals">) => Promise<RealEngine> {
  const created: Tickwork[] = [];
  afterEach(async () => {
    teardown.beforeStop?.();
    try {
      await Promise.all(created.splice(0).map((tw) => tw.stop()));
    } finally {
      await teardown.afterStop?.();
    }
  });
  return async (options) => {
    const events: LogEvent[] = [];
    const tw = await createTickwork({ logLevel: "debug", ...options, logger: (e) => events.push(e), handleSignals: false });
    created.push(tw);
    return { tw, events, named: (name) => events.filter((e) => e.event === name) };
  };
}
