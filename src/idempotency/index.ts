// tickwork/idempotency: an operation run once per key, however many processes race on it
// (`tw.idempotency`); the HTTP middleware is in tickwork/hono.
export { Idempotency, type RunOptions as IdempotencyRunOptions, type IdempotencyOptions, type IdempotencyContext } from "./idempotency.js";
export { DuplicateRequestError, IdempotencyKeyReuseError, IdempotencyClaimLostError, type StoredOutcome } from "./errors.js";
