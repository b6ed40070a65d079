import type { Clock } from "./clock.js";

/** An outbound call that did not answer within its timeout. */
export class CallTimeoutError extends Error {
  readonly code = "TW_CALL_TIMEOUT";
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = "CallTimeoutError";
  }
}

/**
 * Runs `call` with a signal that aborts after `ms` on the engine's clock (so fake-clock tests drive
 * it). The promise rejects at the timeout even if `call` ignores its signal: a hung receiver must
 * not hold the tick.
 */
export function callWithTimeout<T>(clock: Clock, ms: number, call: (signal: AbortSignal) => Promise<T> | T): Promise<T> {
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimeout(() => {
      const error = new CallTimeoutError(ms);
      controller.abort(error);
      reject(error);
    }, ms);
    Promise.resolve()
      .then(() => call(controller.signal))
      .then(
        (value) => (clock.clearTimeout(timer), resolve(value)),
        (error: unknown) => (clock.clearTimeout(timer), reject(error)),
      );
  });
}
