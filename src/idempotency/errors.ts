import { preview } from "../core/bounds.js";
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

/** What the store holds for a key when an execution learns that it lost the key's claim. */
export type StoredOutcome =
  /** Another execution completed the key: this result is what every request with the key gets. */
  | { status: "completed"; result: unknown }
  /** Another execution holds the key and is still running it. */
  | { status: "processing" }
  /** No execution holds the key any more (the other one failed, or the key expired). */
  | { status: "absent" }
  /** Not known: the loss was seen before this execution finished, or the store could not be read. */
  | { status: "unknown" };

/**
 * This execution's claim on the key was taken over while its operation ran (`TW_IDEMPOTENCY_CLAIM_LOST`):
 * it stopped renewing the claim for `staleAfter` (a frozen process, a long pause) and another
 * execution claimed the key. Its operation may have run to the end, but its result is not the key's:
 * it is never stored nor returned. It is the reason `fn`'s signal is aborted, and what the caller gets.
 */
export class IdempotencyClaimLostError extends TickworkError {
  constructor(
    readonly ref: KeyRef,
    readonly stored: StoredOutcome,
    options?: { cause?: unknown },
  ) {
    super("TW_IDEMPOTENCY_CLAIM_LOST", `idempotency key "${ref.key}" for ${ref.operation}: another execution took over this execution's claim while it ran (it had not renewed it for staleAfter), so this execution's result is discarded; ${afterLoss(stored)}`, options);
  }
}

function afterLoss(stored: StoredOutcome): string {
  switch (stored.status) {
    case "completed":
      return `the key's stored result is the other execution's (${preview(stored.result)}), which a retry with the key gets`;
    case "processing":
      return "the other execution is still running it; a retry with the key gets its result once it completes";
    case "absent":
      return "the other execution did not complete it, so the key is free and a retry with the key runs the operation again";
    case "unknown":
      return "this execution should stop: the key's result will be another execution's";
  }
}
