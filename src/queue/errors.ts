import { TickworkError } from "../core/errors.js";

/** A queue name that this engine never declared (`TW_UNKNOWN_QUEUE`); the message lists the declared ones. */
export class UnknownQueueError extends TickworkError {
  constructor(readonly queue: string, known: readonly string[]) {
    super(
      "TW_UNKNOWN_QUEUE",
      `unknown queue "${queue}": declare it with tw.queue("${queue}", ...) first` +
        (known.length ? ` (declared: ${known.join(", ")})` : " (no queue is declared)"),
    );
  }
}

/** No job has this id (`TW_JOB_NOT_FOUND`). */
export class JobNotFoundError extends TickworkError {
  constructor(readonly id: string) {
    super("TW_JOB_NOT_FOUND", `job ${id} does not exist (it may have been pruned by retention)`);
  }
}

/** A state change that the job's current status does not allow (retrying a running job...): `TW_JOB_STATE`. */
export class JobStateError extends TickworkError {
  constructor(message: string) {
    super("TW_JOB_STATE", message);
  }
}

/** Thrown by a job handler when retrying cannot help: the job fails at once, attempts left or not (`TW_PERMANENT`). */
export class PermanentJobError extends TickworkError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("TW_PERMANENT", message, options);
  }
}

/**
 * Why a running job's signal was aborted: its lease was lost (`TW_JOB_LEASE_LOST`), it was cancelled
 * (`TW_JOB_CANCELLED`), a graceful shutdown ran out of time (`TW_JOB_SHUTDOWN`), or its attempt timed
 * out (`TW_JOB_TIMEOUT`).
 */
export class JobAbortedError extends TickworkError {
  constructor(reason: "lease_lost" | "cancelled" | "shutdown" | "timeout", message: string) {
    super(`TW_JOB_${reason.toUpperCase()}`, message);
  }
}

/**
 * `limiter.acquire` would wait longer than its `timeout` (`TW_LIMITER_TIMEOUT`): it says so at once,
 * with `retryAt`, the time the next token comes (a pause's end, say), rather than after the wait.
 */
export class LimiterTimeoutError extends TickworkError {
  constructor(readonly limiter: string, ms: number, readonly retryAt: number) {
    super("TW_LIMITER_TIMEOUT", `limiter "${limiter}" gives no token within ${ms} ms (next at ${new Date(retryAt).toISOString()})`);
  }
}
