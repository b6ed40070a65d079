import { RpcTarget } from "cloudflare:workers";
import { InvalidInputError, describe, errorText } from "../../core/errors.js";
import type { IdempotencyContext } from "../../idempotency/context.js";
import { IdempotencyClaimLostError } from "../../idempotency/errors.js";
import type { RunOptions as IdempotencyRunOptions } from "../../idempotency/idempotency.js";
import { keyRefOf } from "../../idempotency/input.js";

/**
 * What a caller elsewhere in the Worker passes to `idempotent()` to hear that the claim was lost.
 * Workers RPC cannot carry an `AbortSignal`, so the object calls `lost(message)` back instead.
 */
export interface ClaimLostListener {
  lost(message: string): void | Promise<void>;
}

/**
 * The context `idempotent()` hands its function. Inside the object it is an ordinary
 * `IdempotencyContext`; being an `RpcTarget`, it can also be passed to a function that Workers RPC
 * calls back in the Worker, where its `signal` cannot be read (use `idempotentCall` there).
 */
export class IdempotencyCall extends RpcTarget implements IdempotencyContext {
  constructor(readonly signal: AbortSignal) {
    super();
  }
}

/** The object's side: checks the listener, then relays the claim's abort to it while `fn` runs. */
export function relayClaimLoss(signal: AbortSignal, onLost: ClaimLostListener | undefined): () => void {
  if (onLost === undefined) return () => {};
  const relay = () => {
    // The listener is in another isolate and may be gone (the caller gave up): the loss is already
    // logged here and the call still ends with IdempotencyClaimLostError, so a failed relay is dropped.
    Promise.resolve()
      .then(() => onLost.lost(errorText(signal.reason)))
      .catch(() => {});
  };
  if (signal.aborted) relay();
  else signal.addEventListener("abort", relay, { once: true });
  return () => signal.removeEventListener("abort", relay);
}

export function checkClaimLostListener(onLost: unknown): ClaimLostListener | undefined {
  if (onLost === undefined) return undefined;
  // An RPC stub is a callable proxy: `typeof` says function, and so does every property it is asked for.
  const lost = (typeof onLost === "object" || typeof onLost === "function") && onLost !== null ? (onLost as { lost?: unknown }).lost : undefined;
  if (typeof lost !== "function") throw new InvalidInputError(`idempotent: onLost must be an object with a lost(message) method (an RpcTarget across Workers RPC), got ${describe(onLost)}`);
  return onLost as ClaimLostListener;
}

/** The one method of a `TickworkObject` stub that `idempotentCall` uses. */
export interface IdempotentObject {
  idempotent(options: IdempotencyRunOptions, fn: () => unknown, onLost: ClaimLostListener): Promise<unknown>;
}

/** Aborts the Worker-side signal when the object reports the claim lost. */
class ClaimLostRelay extends RpcTarget implements ClaimLostListener {
  constructor(private readonly abort: () => void) {
    super();
  }

  lost(): void {
    this.abort();
  }
}

/**
 * `idempotent()` on a `TickworkObject` from elsewhere in the Worker, with the same context as inside
 * the object: `fn` runs here, once per key, and its `signal` aborts (with `IdempotencyClaimLostError`)
 * when the object finds the claim lost. The options are checked here before any call is made.
 */
export async function idempotentCall<T>(object: IdempotentObject, options: IdempotencyRunOptions, fn: (context: IdempotencyContext) => T | Promise<T>): Promise<T> {
  if (typeof fn !== "function") throw new InvalidInputError(`idempotentCall: expected a function to run, got ${describe(fn)}`);
  // Without a key nothing is claimed, so nothing can be lost; a bad key is refused here, as the object would.
  const key = typeof options === "object" && options !== null ? options.key : undefined;
  const ref = key === undefined || key === null || key === "" ? null : keyRefOf({ ...options, key }).ref;
  const controller = new AbortController();
  const relay = new ClaimLostRelay(() => controller.abort(new IdempotencyClaimLostError(ref!, { status: "unknown" })));
  return (await object.idempotent(options, () => fn({ signal: controller.signal }), relay)) as T;
}
