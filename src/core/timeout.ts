import type { Clock } from "./clock.js";
import { CallTimeoutError } from "./errors.js";

/**
 * Settles as `pending` does, or rejects after `ms` on `clock` with the error `expire()` returns
 * (which it may also use to abort the work's signal). The rejection comes at the timeout even if the
 * work ignores its signal: a hung handler or receiver must not hold a slot, a tick or a shutdown.
 */
export async function raceTimeout<T>(clock: Clock, ms: number, pending: T | Promise<T>, expire: () => unknown): Promise<T> {
  let timer: ReturnType<Clock["setTimeout"]> | undefined;
  const expired = new Promise<never>((_, reject) => (timer = clock.setTimeout(() => reject(expire()), ms)));
  // Awaited, not chained with then: the work's own async frames stay on the stack of what it calls
  // (an engine's stop asks whether it runs inside a job handler).
  try {
    return await Promise.race([pending, expired]);
  } finally {
    clock.clearTimeout(timer!);
  }
}

/**
 * Runs `call` with a signal that aborts after `ms` on the engine's clock (so fake-clock tests drive
 * it), rejecting with `CallTimeoutError` then.
 */
export function callWithTimeout<T>(clock: Clock, ms: number, call: (signal: AbortSignal) => Promise<T> | T): Promise<T> {
  const controller = new AbortController();
  const pending = Promise.resolve().then(() => call(controller.signal));
  return raceTimeout(clock, ms, pending, () => {
    const error = new CallTimeoutError(ms);
    controller.abort(error);
    return error;
  });
}

/**
 * Waits for `done` at most `ms` on `clock` (a graceful stop's grace); resolves true if it settled in
 * time, false if the time ran out first. Never rejects: what `done` failed with is its owner's to report.
 */
export async function waitAtMost(clock: Clock, ms: number, done: Promise<unknown>): Promise<boolean> {
  let timer: ReturnType<Clock["setTimeout"]> | undefined;
  const settled = await Promise.race([
    done.then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => (timer = clock.setTimeout(() => resolve(false), ms))),
  ]);
  if (timer !== undefined) clock.clearTimeout(timer);
  return settled;
}
