/**
 * All of tickwork's logic reads time through a `Clock`, so tests can drive schedules, backoffs
 * and leases with a fake clock instead of sleeping.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Calls `fn` once `ms` have passed on this clock. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export type TimerHandle = { readonly __timer: unique symbol } | object;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, Math.max(0, Math.min(ms, MAX_TIMER_MS))) as TimerHandle,
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
};

/** setTimeout's delay is a signed 32-bit integer; longer waits simply wake early and re-check. */
const MAX_TIMER_MS = 2_147_483_647;
