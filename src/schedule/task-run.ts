import { preview, storableText } from "../core/bounds.js";
import type { Clock, TimerHandle } from "../core/clock.js";
import type { Duration } from "../core/duration.js";
import { InvalidInputError, errorText } from "../core/errors.js";
import { serialiseJson } from "../core/json.js";
import type { Logger } from "../core/logger.js";
import { retryAfterMs } from "../core/retry-after.js";
import { toTime } from "../core/time.js";
import { raceTimeout } from "../core/timeout.js";
import { SPAN_KIND, failSpan, inSpan, type SpanLike, type TracerLike } from "../core/tracing.js";
import { TaskAbortedError } from "./errors.js";
import type { ScheduleStore } from "./store.js";
import type { RunResult, TaskDefinition, TaskOutcome } from "./task.js";

/** A run's error is stored up to this many characters (its message and the first frames of its stack fit). */
const MAX_ERROR_TEXT = 10_000;
/** Duration strings longer than this are not durations; they are refused without echoing them whole. */
const MAX_DURATION_TEXT = 100;

export interface RunDeps {
  store: ScheduleStore;
  clock: Clock;
  logger: Logger;
  instanceId: string;
  /** Told of each run whose outcome was recorded (not of one refused after a takeover); must not throw. */
  onRunFinished?: (task: string, outcome: TaskOutcome) => void;
  tracer?: TracerLike;
}

/** Which run of a task: its slot, the slots missed before it, whether `runNow` or a backfill asked, whether it holds the task's lease. */
export interface RunPlan {
  scheduledAt: number;
  missed: number;
  manual: boolean;
  leased: boolean;
}

/**
 * A run, in a `run <task>` span when the engine traces: a trace of its own (the scheduler's loop
 * starts it, not the code around `start()` or `tick()`), failed when the run failed.
 */
export function runTask(deps: RunDeps, def: TaskDefinition, run: RunPlan, controller: AbortController): Promise<RunResult> {
  const { tracer } = deps;
  if (!tracer) return execute(deps, def, run, controller);
  const attributes = { "tickwork.task.name": def.name, "tickwork.task.scheduled_at": run.scheduledAt, "tickwork.task.manual": run.manual, "tickwork.task.missed": run.missed };
  return inSpan(tracer, `run ${def.name}`, { kind: SPAN_KIND.INTERNAL, root: true, attributes }, async (span) => {
    const result = await execute(deps, def, run, controller, span);
    span.setAttribute("tickwork.task.outcome", result.outcome);
    return result;
  });
}

/**
 * Runs the task once (its lease renewed meanwhile, its timeout enforced) and records the outcome; an
 * outcome the store refuses (another process took the run over after this one's lease lapsed) counts
 * as skipped and reaches no one.
 */
async function execute(deps: RunDeps, def: TaskDefinition, run: RunPlan, controller: AbortController, span?: SpanLike): Promise<RunResult> {
  const { clock, logger, store, instanceId } = deps;
  const startedAt = clock.now();
  let backoffAt: number | null = null;
  const heartbeat = run.leased ? renewLease(deps, def, controller) : undefined;
  let outcome: TaskOutcome;
  let result: unknown;
  let error: string | null = null;
  logger.debug("task.started", { task: def.name, scheduledAt: run.scheduledAt, manual: run.manual, missed: run.missed });
  try {
    const pending = def.run({
      task: def.name,
      scheduledAt: run.scheduledAt,
      startedAt,
      missed: run.missed,
      manual: run.manual,
      signal: controller.signal,
      logger,
      backoffUntil: (until) => {
        backoffAt = timeArgument(until, clock.now(), `task "${def.name}": backoffUntil`);
      },
    });
    result = await (def.timeoutMs === undefined ? pending : withTimeout(clock, pending, def.timeoutMs, controller));
    // A result the store cannot keep as it is (a BigInt, a cycle, a Map) fails the run, naming it,
    // rather than failing the write that records it.
    if (result !== undefined) serialiseJson(result, { where: `task "${def.name}"`, subject: "the result" });
    outcome = backoffAt !== null ? "backed_off" : "succeeded";
  } catch (thrown) {
    // Kept whatever it holds: a NUL or a lone surrogate (which PostgreSQL refuses or garbles) is replaced.
    error = storableText(errorText(thrown), MAX_ERROR_TEXT);
    // A rate-limit signal thrown by the run (RetryAfterError, the HTTP client's 429 error) is a
    // reason to slow down, not a failure: it does not count towards the breaker.
    const delay = retryAfterMs(thrown, clock.now());
    if (delay !== null) {
      backoffAt = clock.now() + delay;
      outcome = "backed_off";
    } else {
      outcome = "failed";
      if (span) failSpan(span, thrown);
    }
  } finally {
    heartbeat?.stop();
  }
  const finishedAt = clock.now();
  // Backoff can never park a task for good: it is bounded, and runNow clears it.
  const nextRunAfter = backoffAt === null ? null : Math.min(backoffAt, finishedAt + def.maxBackoffMs);
  const { recorded, consecutiveFailures, breakerOpened } = await store.finishRun({
    record: {
      task: def.name, scheduledAt: run.scheduledAt, startedAt, finishedAt, durationMs: finishedAt - startedAt, outcome,
      manual: run.manual, result: outcome === "failed" ? undefined : result, error, runner: instanceId,
    },
    leased: run.leased,
    nextRunAfter,
    breakerAfter: def.breakerAfter,
    keep: def.history,
  });
  const fields = { task: def.name, scheduledAt: run.scheduledAt, startedAt, durationMs: finishedAt - startedAt, manual: run.manual };
  if (!recorded) {
    // Frozen past its lease, this run was taken over elsewhere; its late outcome must not count.
    logger.warn("task.outcome_refused", { ...fields, outcome, reason: "another process took this run over after its lease lapsed" });
    return { task: def.name, outcome: "skipped", scheduledAt: run.scheduledAt, reason: "the run was taken over by another process" };
  }
  if (outcome === "succeeded") logger.info("task.succeeded", fields);
  else if (outcome === "backed_off") logger.warn("task.backoff", { ...fields, nextRunAfter, error });
  else logger.error("task.failed", { ...fields, consecutiveFailures, error });
  if (breakerOpened) {
    logger.critical("task.breaker_opened", { task: def.name, consecutiveFailures, action: `paused until tw.scheduler.resume("${def.name}")` });
  }
  deps.onRunFinished?.(def.name, outcome);
  return { task: def.name, outcome, scheduledAt: run.scheduledAt, result: outcome === "failed" ? undefined : result, error: error ?? undefined, durationMs: finishedAt - startedAt };
}

/** Renews the run lease every quarter of it; a lease lost to another runner aborts this run. */
function renewLease(deps: RunDeps, def: TaskDefinition, controller: AbortController): { stop: () => void } {
  const { clock, store, instanceId, logger } = deps;
  let handle: TimerHandle;
  let stopped = false;
  const beat = async () => {
    try {
      const held = await store.renewLease({ name: def.name, runner: instanceId, until: clock.now() + def.leaseMs });
      // The run may have finished (and released its lease) while the renewal was in flight.
      if (stopped) return;
      if (!held) {
        logger.warn("task.lease_lost", { task: def.name });
        controller.abort(new TaskAbortedError("lease_lost", "another process took this run over"));
        return;
      }
    } catch (error) {
      logger.error("store.error", { task: def.name, operation: "renewLease", error: errorText(error) });
    }
    if (!stopped && !controller.signal.aborted) handle = clock.setTimeout(() => void beat(), def.leaseMs / 4);
  };
  handle = clock.setTimeout(() => void beat(), def.leaseMs / 4);
  return {
    stop: () => {
      stopped = true;
      clock.clearTimeout(handle);
    },
  };
}

function withTimeout(clock: Clock, pending: unknown, ms: number, controller: AbortController): Promise<unknown> {
  return raceTimeout(clock, ms, pending, () => {
    const error = new TaskAbortedError("timeout", `run timed out after ${ms} ms`);
    controller.abort(error);
    return error;
  });
}

/**
 * A time argument (a Date, epoch ms, or a duration from `now`), bounded as `toTime` bounds it; a
 * string too long to be a duration is refused without echoing it whole.
 */
export function timeArgument(value: Date | number | Duration, now: number, where: string): number {
  if (typeof value === "string" && value.length > MAX_DURATION_TEXT) throw new InvalidInputError(`${where}: invalid duration ${preview(value)}: expected a duration such as "30s", "5m", "1h" or "2d"`);
  return toTime(value, now, where);
}
