import { TickworkError } from "../core/errors.js";
import type { KeyRef } from "./store.js";

/**
 * The same key is being processed right now (`TW_DUPLICATE_REQUEST`; HTTP 409): a client retried
 * before its first request finished. Retry later: the first request's result will be replayed.
 */
export class DuplicateRequestError extends TickworkError {
  constructor(readonly ref: KeyRef) {
    super("TW_DUPLICATE_REQUEST", `a request with idempotency key "${ref.key}" for ${ref.operation} is still being processed; retry later`);
  }
}

/** The key was used before with a different request (`TW_IDEMPOTENCY_KEY_REUSED`; HTTP 422). */
export class IdempotencyKeyReuseError extends TickworkError {
  constructor(readonly ref: KeyRef) {
    super("TW_IDEMPOTENCY_KEY_REUSED", `idempotency key "${ref.key}" was already used for ${ref.operation} with a different request`);
  }
}
