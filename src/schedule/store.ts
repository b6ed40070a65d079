import type { RunRecord, TaskOutcome } from "./task.js";

/** A `tickwork_tasks` row, mapped. Times are epoch ms. */
export interface TaskRow {
  name: string;
  lastSlot: number;
  missed: number;
  runningSlot: number | null;
  runningBy: string | null;
  runningUntil: number | null;
  nextRunAfter: number | null;
  pausedUntil: number | null;
  breakerOpen: boolean;
  consecutiveFailures: number;
  lastRunAt: number | null;
  lastScheduledAt: number | null;
  lastDurationMs: number | null;
  lastOutcome: TaskOutcome | null;
  lastResult: unknown;
  lastError: string | null;
  runs: number;
  failures: number;
  overlapsSkipped: number;
}

/**
 * The schedule's storage seam. Every state change that decides who runs what is one conditional
 * update, so the database arbitrates between processes and none has to be elected leader.
 */
export interface ScheduleStore {
  /** Creates missing task rows; a new task's first slot is the one after `slot`. */
  ensureTasks(params: { tasks: { name: string; slot: number }[]; now: number }): Promise<void>;
  loadTasks(params: { names: string[] }): Promise<TaskRow[]>;
  /** The scheduler-wide pause, or null. */
  pausedUntil(): Promise<number | null>;
  setPausedUntil(params: { until: number | null }): Promise<void>;

  /**
   * Claims a slot if the task's last slot is still `expectedLastSlot` (nobody else claimed it).
   * With `lease` the run is also leased to `runner`, but only if no live run holds the task.
   */
  claimSlot(params: {
    name: string;
    slot: number;
    expectedLastSlot: number;
    missed: number;
    now: number;
    lease: { runner: string; until: number } | null;
  }): Promise<boolean>;
  /**
   * Leases the first run of an `immediately` task: only while no run of it is recorded and no live
   * run holds it, so across processes exactly one wins. `slot` is the time it runs for.
   */
  claimFirstRun(params: { name: string; slot: number; runner: string; until: number; now: number }): Promise<boolean>;
  /** Marks a slot as passed without a run (the previous run was still going). */
  skipSlot(params: { name: string; slot: number; expectedLastSlot: number }): Promise<boolean>;
  /** Takes over a run whose lease lapsed (its process died): same slot, new runner. */
  takeOver(params: { name: string; runner: string; until: number; now: number }): Promise<number | null>;
  /** Leases a manual run (runNow, backfill) if no live run holds the task. Clears any backoff. */
  claimManual(params: { name: string; slot: number; runner: string; until: number; now: number }): Promise<boolean>;
  /** Extends a run lease; false if it is no longer ours. */
  renewLease(params: { name: string; runner: string; until: number }): Promise<boolean>;
  /** Gives a lease back early (graceful stop): the run may be taken over at once. */
  releaseLease(params: { name: string; runner: string; now: number }): Promise<void>;

  /**
   * Records a finished run: status fields, failure counters, the breaker, backoff, the history row
   * (trimmed to `keep`), and releases the run lease. A `leased` run whose lease another runner now
   * holds is not recorded at all (`recorded: false`). Returns the new counters.
   */
  finishRun(params: {
    record: RunRecord;
    leased: boolean;
    nextRunAfter: number | null;
    breakerAfter: number | null;
    keep: number;
  }): Promise<{ recorded: boolean; consecutiveFailures: number; breakerOpened: boolean }>;

  setTaskPause(params: { name: string; until: number | null }): Promise<void>;
  /** Clears breakers and per-task pauses (all tasks when `name` is null). */
  resume(params: { name: string | null }): Promise<void>;
  history(params: { name: string; limit: number }): Promise<RunRecord[]>;
}
