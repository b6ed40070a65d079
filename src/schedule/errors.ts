import { TickworkError } from "../core/errors.js";

/**
 * Thrown when a run's lease is lost (`TW_TASK_LEASE_LOST`), its timeout passes (`TW_TASK_TIMEOUT`) or
 * the engine's shutdown grace runs out (`TW_TASK_SHUTDOWN`); the run's signal carries it.
 */
export class TaskAbortedError extends TickworkError {
  constructor(reason: "timeout" | "lease_lost" | "shutdown", message: string) {
    super(`TW_TASK_${reason.toUpperCase()}`, message);
  }
}

/**
 * A task's cadence could not be computed (`TW_TASK_CADENCE`): the cron library threw on an
 * expression it had accepted. It is that task's failure, never the tick's.
 */
export class CadenceError extends TickworkError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("TW_TASK_CADENCE", message, options);
  }
}
