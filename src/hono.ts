// Hono middleware for tickwork: `idempotencyKey` (the Idempotency-Key header). Runs in Node and workerd.
export { idempotencyKey, type IdempotencyKeyOptions, type IdempotencyVariables } from "./idempotency/hono.js";
