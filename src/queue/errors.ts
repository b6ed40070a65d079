import { toMs, type Duration } from "../core/duration.js";
import { TickworkError } from "../core/errors.js";
import type { Job } from "./job.js";

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

/**
 * Thrown by a job handler to put the job back for later without spending an attempt: an upstream
 * said "not yet" (`TW_SNOOZE`). `ctx.snooze(delay)` returns the same decision instead of throwing it.
 */
export class SnoozeError extends TickworkError {
  readonly delayMs: number;

  constructor(delay: Duration, message = `snoozed for ${typeof delay === "number" ? `${delay} ms` : delay}`) {
    super("TW_SNOOZE", message);
    this.delayMs = toMs(delay);
  }
}

/** A job snoozed as often as its queue's `maxSnoozes` allows and asked again: the attempt fails instead (`TW_SNOOZE_LIMIT`). */
export class SnoozeLimitError extends TickworkError {
  constructor(readonly snoozes: number) {
    super("TW_SNOOZE_LIMIT", `the job snoozed ${snoozes} times, its queue's maxSnoozes: the attempt fails instead (raise maxSnoozes if the upstream is slow for that long)`);
  }
}

/** A handler's return value is larger, as JSON, than its queue's `maxResultBytes` (`TW_RESULT_TOO_LARGE`): the attempt fails. */
export class ResultTooLargeError extends TickworkError {
  constructor(readonly bytes: number, readonly limit: number, subject = "the job's result") {
    super("TW_RESULT_TOO_LARGE", `${subject} is ${bytes} bytes as JSON, over the queue's maxResultBytes of ${limit}: store large outputs elsewhere and return a reference`);
  }
}

/** `tw.jobs.wait` / `enqueueAndWait` saw no end within its `timeout` (`TW_WAIT_TIMEOUT`); the job itself goes on. */
export class JobWaitTimeoutError extends TickworkError {
  constructor(readonly id: string, ms: number) {
    super("TW_WAIT_TIMEOUT", `job ${id} did not finish within ${ms} ms (it goes on; wait again or look it up with tw.jobs.get)`);
  }
}

/**
 * An awaited job ended without a result: it failed for good, or was cancelled (`TW_JOB_FAILED`).
 * `job` is the job as it ended; the message carries its last error.
 */
export class JobFailedError extends TickworkError {
  constructor(readonly job: Job) {
    super("TW_JOB_FAILED", job.status === "cancelled" ? `job ${job.id} was cancelled` : `job ${job.id} failed after ${job.attempts} attempt(s): ${job.lastError ?? "no error recorded"}`);
  }
}
