import type { Clock } from "./clock.js";
import { CallTimeoutError } from "./errors.js";

/**
 * Settles as `pending` does, or rejects after `ms` on `clock` with the error `expire()` returns
 * (which it may also use to abort the work's signal). The rejection comes at the timeout even if the
 * work ignores its signal: a hung handler or receiver must not hold a slot, a tick or a shutdown.
 */
export function raceTimeout<T>(clock: Clock, ms: number, pending: T | Promise<T>, expire: () => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimeout(() => reject(expire()), ms);
    Promise.resolve(pending).then(
      (value) => (clock.clearTimeout(timer), resolve(value)),
      (error: unknown) => (clock.clearTimeout(timer), reject(error)),
    );
  });
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
