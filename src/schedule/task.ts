import * as z from "zod";
import { INT32_MAX, preview } from "../core/bounds.js";
import type { Duration } from "../core/duration.js";
import { InvalidInputError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { durationMs, fn, parseOptions } from "../core/options.js";
import { cronCadence, everyCadence, type Cadence } from "./cadence.js";

export interface TaskContext {
  task: string;
  /** The slot this run is for (the time it was scheduled at); for a manual run, when it was asked for. */
  scheduledAt: number;
  /** When the run actually started, on the engine's clock. */
  startedAt: number;
  /** Slots skipped before this one (downtime, or a paused task), collapsed into this run. */
  missed: number;
  /** True for `runNow` and `backfill`. */
  manual: boolean;
  /** Aborted when the run times out or the engine stops. */
  signal: AbortSignal;
  logger: Logger;
  /**
   * Adaptive backoff: the run saw a rate-limit signal (a 429, a quota header at zero), so skip this
   * task until `until` (a Date, epoch ms, or a duration from now) rather than fight the upstream's
   * throttling. It is not a failure. Bounded by the task's `maxBackoff`, so it cannot park a task for good.
   */
  backoffUntil(until: Date | number | Duration): void;
}

export type TaskRun<R = unknown> = (ctx: TaskContext) => R | Promise<R>;

/** How a run of a task ended (a job's settlement is the queue's `Outcome`, another thing). */
export type TaskOutcome = "succeeded" | "failed" | "backed_off";

const taskOptionsSchema = z
  .object({
    every: z.union([z.string(), z.number()]).optional(),
    cron: z.string().optional(),
    /** IANA timezone for `cron`; default UTC. */
    timezone: z.string().optional(),
    run: fn<TaskRun>("a function (ctx) => result"),
    /** A circuit breaker: after `after` consecutive failures the task pauses until `resume()`, with a critical event. */
    breaker: z.object({ after: z.number().int().min(1).max(INT32_MAX) }).strict().optional(),
    /** `skip` (default): a slot due while the previous run is still going is skipped, not doubled. */
    overlap: z.enum(["skip", "allow"]).default("skip"),
    /** Each slot runs up to this much later, the same offset in every process (spreads load). */
    jitter: durationMs.default(0),
    /** Missed slots younger than this run each, oldest first; older ones collapse into one run. Default: collapse all. */
    catchUp: z.union([durationMs, z.literal(false)]).default(false),
    /** A run is owned for this long without a heartbeat; if its process dies, another takes it over after it. */
    lease: durationMs.default(60_000).refine((ms) => ms >= 1_000, "the lease must be at least 1s"),
    /** A run longer than this fails and its signal is aborted. */
    timeout: durationMs.optional(),
    /** The ceiling of an adaptive backoff, so a bad signal cannot park a task for good; default 1h. */
    maxBackoff: durationMs.default(3_600_000),
    /** Runs kept per task in the history; default 20. */
    history: z.number().int().min(0).max(1_000).default(20),
    /**
     * Run at the first tick, whatever the cadence, if the task has no run recorded yet (BullMQ's
     * name for it): a cache a task fills is not empty for a whole period after a first deploy.
     * Exactly one process runs it (it is claimed like a slot); then the task follows its slots. Once
     * any run is recorded (on schedule, by `runNow`, failed or not) the option has no effect, so a
     * restart does not run the task again. Default false: the first run is the first slot after the
     * task was defined.
     */
    immediately: z.boolean().default(false),
  })
  .strict();

export type TaskOptions<R = unknown> = Omit<z.input<typeof taskOptionsSchema>, "run" | "every"> & { run: TaskRun<R>; every?: Duration };

export interface TaskDefinition {
  name: string;
  cadence: Cadence;
  run: TaskRun;
  breakerAfter: number | null;
  overlap: "skip" | "allow";
  jitterMs: number;
  catchUpMs: number | false;
  leaseMs: number;
  timeoutMs: number | undefined;
  maxBackoffMs: number;
  history: number;
  immediately: boolean;
}

const TASK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** Parses a task definition given at `now` (a cron with no run after it is refused). */
export function parseTask(name: string, options: unknown, now: number): TaskDefinition {
  if (typeof name !== "string" || !TASK_NAME.test(name) || name === "all") {
    throw new InvalidInputError(`task name ${preview(name)} is invalid: use 1-128 letters, digits, "_", ".", ":" or "-" ("all" is reserved for runNow)`);
  }
  const where = `task "${name}"`;
  const o = parseOptions(taskOptionsSchema, options, where);
  if ((o.every === undefined) === (o.cron === undefined)) throw new InvalidInputError(`${where}: give exactly one of every or cron`);
  if (o.timezone !== undefined && o.cron === undefined) throw new InvalidInputError(`${where}: timezone applies to cron only`);
  const cadence = o.cron !== undefined ? cronCadence(o.cron, o.timezone, where, now) : everyCadence(o.every!, where);
  return {
    name,
    cadence,
    run: o.run,
    breakerAfter: o.breaker?.after ?? null,
    overlap: o.overlap,
    jitterMs: o.jitter,
    catchUpMs: o.catchUp,
    leaseMs: o.lease,
    timeoutMs: o.timeout,
    maxBackoffMs: o.maxBackoff,
    history: o.history,
    immediately: o.immediately,
  };
}

/** A run as the history keeps it. */
export interface RunRecord {
  task: string;
  scheduledAt: number;
  startedAt: number;
  finishedAt: number;
  durationMs: number;
  outcome: TaskOutcome;
  manual: boolean;
  result: unknown;
  error: string | null;
  runner: string;
}

/** What `runNow` and `backfill` return per run. */
export interface RunResult {
  task: string;
  outcome: TaskOutcome | "skipped";
  scheduledAt: number;
  result?: unknown;
  error?: string;
  durationMs?: number;
  /** Why a run was skipped (already running elsewhere). */
  reason?: string;
}

export interface TaskStatus {
  name: string;
  schedule: string;
  lastRunAt: number | null;
  lastScheduledAt: number | null;
  lastDurationMs: number | null;
  lastOutcome: TaskOutcome | null;
  lastResult: unknown;
  lastError: string | null;
  consecutiveFailures: number;
  /**
   * The next slot this task will run at (jitter included), ignoring pauses and backoff; now for an
   * `immediately` task with no run yet; null when the schedule has ended or cannot be computed.
   */
  nextRunAt: number | null;
  /** Why this task's cadence cannot be computed (the cron library failed on it), or null: the task does not run on schedule meanwhile. */
  scheduleError: string | null;
  /** Adaptive backoff: skipped until then. */
  nextRunAfter: number | null;
  paused: boolean;
  pausedUntil: number | null;
  breakerOpen: boolean;
  running: boolean;
  /** Slots missed before the last run (downtime), collapsed into it. */
  missed: number;
  runs: number;
  failures: number;
  overlapsSkipped: number;
  history: RunRecord[];
}
