import { preview } from "../core/bounds.js";
import type { TimerHandle } from "../core/clock.js";
import type { Duration } from "../core/duration.js";
import { InvalidInputError, errorText } from "../core/errors.js";
import { toInstant } from "../core/time.js";
import { waitAtMost } from "../core/timeout.js";
import { CadenceError, TaskAbortedError } from "./errors.js";
import type { TaskRow } from "./store.js";
import { parseTask, type RunResult, type TaskDefinition, type TaskOptions, type TaskStatus } from "./task.js";
import { runTask, timeArgument, type RunDeps, type RunPlan } from "./task-run.js";

/** A run's deps (see RunDeps), and how long the continuous loop sleeps at most. */
export interface TaskSchedulerDeps extends RunDeps {
  /** Longest the continuous loop sleeps before re-reading task state (pauses and runs made elsewhere). */
  maxIdleMs: number;
}

interface LocalRun {
  controller: AbortController;
  done: Promise<RunResult>;
  leased: boolean;
}

/** Slots at most this far apart are counted exactly; a longer downtime reports this many missed. */
const COUNT_CAP = 100_000;
/** A backfill or catch-up covers at most this many slots in one call. */
const SLOTS_CAP = 10_000;
/** A task whose cadence failed is looked at again this soon, in case the failure was passing. */
const CADENCE_RETRY_MS = 60_000;

/**
 * Runs the periodic tasks (`tw.task`); `tw.scheduler` is its public face. No process is elected: each
 * slot of each task is claimed once by a conditional update of the task's row, so any number of
 * processes may tick and exactly one runs each slot. A run holds a lease on the row while it runs (no
 * overlap; a dead runner's run is taken over once the lease lapses). Each task runs in its own
 * try/catch, so one task's failure (an upstream's 429, a parse error) never stops another's run;
 * a rate-limit signal parks the task until `nextRunAfter`, so the scheduler slows down with its
 * upstream instead of fighting its throttling; consecutive failures are counted and an opt-in
 * breaker pauses the task until `resume()`, so a task cannot fail silently for hours.
 */
export class TaskScheduler {
  private readonly tasks = new Map<string, TaskDefinition>();
  private readonly local = new Map<string, LocalRun>();
  private ensured = new Set<string>();
  /** When each task was defined: its first slot is the first one after this, whenever the first tick comes. */
  private readonly definedAt = new Map<string, number>();
  /** Tasks whose cadence failed at their last look in this process, with the error (logged once per run of failures). */
  private readonly cadenceFailures = new Map<string, string>();
  private active = false;
  private ticking: Promise<number | null> | null = null;
  private timer: TimerHandle | undefined;
  private pokeAgain = false;

  constructor(private readonly deps: TaskSchedulerDeps) {}

  get names(): string[] {
    return [...this.tasks.keys()];
  }

  define<R>(name: string, options: TaskOptions<R>): void {
    if (this.tasks.has(name)) throw new InvalidInputError(`task "${name}" is already defined`);
    const now = this.deps.clock.now();
    this.tasks.set(name, parseTask(name, options, now));
    this.definedAt.set(name, now);
    if (this.active) this.poke();
  }

  // ---- driving ------------------------------------------------------------------------------

  /**
   * One pass: every due task is claimed and started; with `wait`, the pass also waits for the runs
   * it started. Returns when the schedule next needs attention. Store failures escape; task failures
   * are the task's, and so is a cadence that cannot be computed: the other tasks still run.
   */
  async tick({ wait }: { wait: boolean }): Promise<number | null> {
    const now = this.deps.clock.now();
    await this.ensure(now);
    const [rows, globalPause] = await Promise.all([this.deps.store.loadTasks({ names: this.names }), this.deps.store.pausedUntil()]);
    const byName = new Map(rows.map((r) => [r.name, r]));
    const wakes: number[] = [];
    const started: Promise<RunResult>[] = [];
    for (const def of this.tasks.values()) {
      const row = byName.get(def.name);
      if (!row) continue;
      const wake = await this.isolated(def, now, () => this.consider(def, row, now, globalPause, started));
      if (wake !== null) wakes.push(wake);
    }
    if (!wait) {
      // Runs go on in the background; a store failure while recording one is logged, not lost.
      for (const run of started) run.catch((error: unknown) => this.deps.logger.error("store.error", { operation: "task run", error: errorText(error) }));
    } else {
      const settled = await Promise.allSettled(started);
      // A run's own failure was recorded as its outcome; only a store failure rejects, and it escapes.
      const transport = settled.find((s) => s.status === "rejected");
      if (transport) throw (transport as PromiseRejectedResult).reason;
    }
    return wakes.length ? Math.min(...wakes) : null;
  }

  /**
   * Runs one task's part of a pass. A `CadenceError` is that task's failure: logged when it starts
   * (and when it ends), shown in the task's status, retried in a minute; it never stops the pass.
   */
  private async isolated(def: TaskDefinition, now: number, consider: () => Promise<number | null>): Promise<number | null> {
    try {
      const wake = await consider();
      if (this.cadenceFailures.delete(def.name)) this.deps.logger.info("task.schedule_recovered", { task: def.name, schedule: def.cadence.description });
      return wake;
    } catch (error) {
      if (!(error instanceof CadenceError)) throw error;
      this.cadenceFailed(def, error);
      return now + CADENCE_RETRY_MS;
    }
  }

  private cadenceFailed(def: TaskDefinition, error: CadenceError): void {
    if (this.cadenceFailures.get(def.name) === error.message) return;
    this.cadenceFailures.set(def.name, error.message);
    this.deps.logger.error("task.schedule_failed", {
      task: def.name,
      schedule: def.cadence.description,
      error: error.message,
      action: "the task does not run on schedule until its cadence can be computed; runNow still runs it",
    });
  }

  /** Decides what one task needs now; returns when it next needs attention. */
  private async consider(def: TaskDefinition, row: TaskRow, now: number, globalPause: number | null, started: Promise<RunResult>[]): Promise<number | null> {
    const { store, logger, instanceId } = this.deps;
    const runningHere = this.local.has(def.name);

    // A run whose process died: its lease lapsed, so take the same slot over (the task keeps a single
    // runner, and a killed one is replaced within its lease plus one tick).
    if (def.overlap === "skip" && row.runningBy !== null && row.runningUntil !== null && row.runningUntil < now && !runningHere) {
      const slot = await store.takeOver({ name: def.name, runner: instanceId, until: now + def.leaseMs, now });
      if (slot !== null) {
        logger.warn("task.run_taken_over", { task: def.name, scheduledAt: slot, previousRunner: row.runningBy });
        started.push(this.launch(def, { scheduledAt: slot, missed: row.missed, manual: false, leased: true }));
        return null;
      }
    }

    const pausedUntil = maxOrNull(globalPause, row.pausedUntil);
    if (row.breakerOpen) return null;
    if (pausedUntil !== null && pausedUntil > now) return pausedUntil;
    if (row.nextRunAfter !== null && row.nextRunAfter > now) return row.nextRunAfter;

    const due = this.latestDue(def, row.lastSlot, now);
    const elsewhere = row.runningBy !== null && row.runningUntil !== null && row.runningUntil >= now;
    if (due === null && this.firstRunPending(def, row, now) && !runningHere) {
      // No slot is due yet, and an `immediately` task has never run: its first run is now.
      if (await store.claimFirstRun({ name: def.name, slot: now, runner: instanceId, until: now + def.leaseMs, now })) {
        started.push(this.launch(def, { scheduledAt: now, missed: 0, manual: false, leased: true }));
      }
      return this.nextDueTime(def, now, row.lastSlot);
    }
    if (due === null) {
      const next = this.nextDueTime(def, now, row.lastSlot);
      return elsewhere && def.overlap === "skip" ? minOrNull(next, row.runningUntil! + 1) : next;
    }

    if (def.overlap === "skip" && (elsewhere || runningHere)) {
      // A task that catches up wants every slot: a busy slot waits for the run in progress (which may
      // be this task's own catch-up) instead of being skipped.
      if (def.catchUpMs !== false) return elsewhere ? row.runningUntil! + 1 : null;
      if (await store.skipSlot({ name: def.name, slot: due, expectedLastSlot: row.lastSlot })) {
        logger.warn("task.overlap_skipped", { task: def.name, scheduledAt: due, reason: "the previous run is still going" });
      }
      return minOrNull(this.nextDueTime(def, now, row.lastSlot), elsewhere ? row.runningUntil! + 1 : null);
    }

    const slots = this.slotsToRun(def, row.lastSlot, due, now);
    const missed = def.cadence.countBetween(row.lastSlot, slots[0]!, COUNT_CAP);
    started.push(this.runSlots(def, row.lastSlot, slots, missed));
    return this.nextDueTime(def, now, row.lastSlot);
  }

  /** Claims and runs `slots` in order, each claim conditional on the one before (catch-up runs them all). */
  private async runSlots(def: TaskDefinition, lastSlot: number, slots: number[], missed: number): Promise<RunResult> {
    const { store, logger, clock, instanceId } = this.deps;
    let expected = lastSlot;
    let last: RunResult | undefined;
    for (const [i, slot] of slots.entries()) {
      const now = clock.now();
      const lease = def.overlap === "skip" ? { runner: instanceId, until: now + def.leaseMs } : null;
      const won = await store.claimSlot({ name: def.name, slot, expectedLastSlot: expected, missed: i === 0 ? missed : 0, now, lease });
      if (!won) break; // another process claimed it: it runs this slot and the rest.
      if (i === 0 && missed > 0) logger.info("task.missed", { task: def.name, missed, scheduledAt: slot });
      expected = slot;
      last = await this.launch(def, { scheduledAt: slot, missed: i === 0 ? missed : 0, manual: false, leased: lease !== null });
    }
    return last ?? { task: def.name, outcome: "skipped", scheduledAt: slots[0]!, reason: "claimed by another process" };
  }

  /** An `immediately` task with no run recorded and none going (a lapsed lease is no run). */
  private firstRunPending(def: TaskDefinition, row: TaskRow, now: number): boolean {
    return def.immediately && row.lastRunAt === null && (row.runningBy === null || row.runningUntil === null || row.runningUntil < now);
  }

  /** Starts a run and tracks it locally until it is recorded. */
  private launch(def: TaskDefinition, run: RunPlan): Promise<RunResult> {
    const controller = new AbortController();
    const done = runTask(this.deps, def, run, controller).finally(() => {
      if (this.local.get(def.name)?.done === done) this.local.delete(def.name);
      if (this.active) this.poke();
    });
    this.local.set(def.name, { controller, done, leased: run.leased });
    return done;
  }

  // ---- continuous driver --------------------------------------------------------------------

  start(): void {
    this.active = true;
    this.poke();
  }

  /** Stops ticking; waits up to `graceMs` for runs, then aborts them and gives their leases back. */
  async stop(graceMs: number): Promise<void> {
    this.active = false;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    await this.ticking?.catch(() => {});
    const runs = [...this.local.entries()];
    if (runs.length === 0) return;
    await waitAtMost(this.deps.clock, graceMs, Promise.allSettled(runs.map(([, r]) => r.done)));
    for (const [name, run] of this.local) {
      run.controller.abort(new TaskAbortedError("shutdown", `shutdown grace of ${graceMs} ms ran out`));
      if (run.leased) await this.deps.store.releaseLease({ name, runner: this.deps.instanceId, now: this.deps.clock.now() }).catch(() => {});
    }
  }

  /** Ticks now (or right after the tick in progress) and re-arms the timer for the next wake-up. */
  private poke(): void {
    if (!this.active) return;
    if (this.ticking) {
      this.pokeAgain = true;
      return;
    }
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.ticking = this.tick({ wait: false }).catch((error: unknown) => {
      this.deps.logger.error("store.error", { operation: "schedule tick", error: errorText(error) });
      return this.deps.clock.now() + 1_000;
    });
    void this.ticking.then((next) => {
      this.ticking = null;
      if (!this.active) return;
      if (this.pokeAgain) {
        this.pokeAgain = false;
        this.poke();
        return;
      }
      const now = this.deps.clock.now();
      const wait = Math.min(Math.max(0, (next ?? Infinity) - now), this.deps.maxIdleMs);
      this.timer = this.deps.clock.setTimeout(() => this.poke(), wait);
    });
  }

  // ---- operations ---------------------------------------------------------------------------

  async status(): Promise<{ pausedUntil: number | null; tasks: TaskStatus[] }> {
    const now = this.deps.clock.now();
    await this.ensure(now);
    const [rows, pausedUntil] = await Promise.all([this.deps.store.loadTasks({ names: this.names }), this.deps.store.pausedUntil()]);
    const tasks = await Promise.all(
      rows.map(async (row): Promise<TaskStatus> => {
        const def = this.tasks.get(row.name)!;
        const paused = maxOrNull(pausedUntil, row.pausedUntil);
        let nextRunAt: number | null = null;
        let scheduleError = this.cadenceFailures.get(def.name) ?? null;
        try {
          const running = row.runningBy !== null && row.runningUntil !== null && row.runningUntil >= now;
          nextRunAt = this.firstRunPending(def, row, now) && !running ? now : this.nextDueTime(def, Math.max(now - 1, row.lastSlot), row.lastSlot);
        } catch (error) {
          if (!(error instanceof CadenceError)) throw error;
          scheduleError = error.message;
        }
        return {
          name: row.name,
          schedule: def.cadence.description,
          lastRunAt: row.lastRunAt,
          lastScheduledAt: row.lastScheduledAt,
          lastDurationMs: row.lastDurationMs,
          lastOutcome: row.lastOutcome,
          lastResult: row.lastResult,
          lastError: row.lastError,
          consecutiveFailures: row.consecutiveFailures,
          nextRunAt,
          scheduleError,
          nextRunAfter: row.nextRunAfter !== null && row.nextRunAfter > now ? row.nextRunAfter : null,
          paused: row.breakerOpen || (paused !== null && paused > now),
          pausedUntil: paused !== null && paused > now ? paused : null,
          breakerOpen: row.breakerOpen,
          running: row.runningBy !== null && row.runningUntil !== null && row.runningUntil >= now,
          missed: row.missed,
          runs: row.runs,
          failures: row.failures,
          overlapsSkipped: row.overlapsSkipped,
          history: await this.deps.store.history({ name: row.name, limit: def.history }),
        };
      }),
    );
    return { pausedUntil: pausedUntil !== null && pausedUntil > now ? pausedUntil : null, tasks: tasks.sort((a, b) => a.name.localeCompare(b.name)) };
  }

  /**
   * Runs a task (or every task) now, whatever its schedule, pause or backoff, and returns the result.
   * Clears the task's backoff. A task already running anywhere is not doubled: its result says skipped.
   */
  async runNow(name: string): Promise<RunResult[]> {
    const defs = name === "all" ? [...this.tasks.values()] : [this.mustGet(name, "runNow")];
    await this.ensure(this.deps.clock.now());
    return Promise.all(defs.map((def) => this.runManual(def, this.deps.clock.now())));
  }

  /** Runs every slot of `name` from `from` to `to` (inclusive), oldest first, for tasks that need each one. */
  async backfill(name: string, from: Date | number, to: Date | number): Promise<RunResult[]> {
    const def = this.mustGet(name, "backfill");
    const start = toInstant(from, "backfill: from");
    const end = toInstant(to, "backfill: to");
    if (end < start) throw new InvalidInputError(`backfill: to (${new Date(end).toISOString()}) is before from (${new Date(start).toISOString()})`);
    // A cadence that cannot be computed throws its CadenceError to the caller here, before any run.
    const slots: number[] = [];
    for (let at = def.cadence.nextAfter(start - 1); at !== null && at <= end; at = def.cadence.nextAfter(at)) {
      if (slots.length >= SLOTS_CAP) throw new InvalidInputError(`backfill: more than ${SLOTS_CAP} slots between from and to; split the range`);
      slots.push(at);
    }
    await this.ensure(this.deps.clock.now());
    const results: RunResult[] = [];
    for (const slot of slots) results.push(await this.runManual(def, slot));
    return results;
  }

  /**
   * The ops kill switch: no task runs on schedule until `until` (a Date, epoch ms, or a duration from
   * now such as "1h"); runNow still works.
   */
  async pauseUntil(until: Date | number | Duration, task?: string): Promise<void> {
    const at = timeArgument(until, this.deps.clock.now(), "pauseUntil");
    if (task === undefined) await this.deps.store.setPausedUntil({ until: at });
    else {
      const { name } = this.mustGet(task, "pauseUntil");
      // The pause is written on the task's row: create it first if no tick has yet.
      await this.ensure(this.deps.clock.now());
      await this.deps.store.setTaskPause({ name, until: at });
    }
    this.deps.logger.warn("scheduler.paused", { task: task ?? "all", until: at });
    if (this.active) this.poke();
  }

  /** Undoes pauseUntil and closes open breakers (of one task, or of all). */
  async resume(task?: string): Promise<void> {
    if (task === undefined) {
      await this.deps.store.setPausedUntil({ until: null });
      await this.deps.store.resume({ name: null });
    } else {
      await this.deps.store.resume({ name: this.mustGet(task, "resume").name });
    }
    this.deps.logger.info("scheduler.resumed", { task: task ?? "all" });
    if (this.active) this.poke();
  }

  private async runManual(def: TaskDefinition, slot: number): Promise<RunResult> {
    const now = this.deps.clock.now();
    const claimed = !this.local.has(def.name) && (await this.deps.store.claimManual({ name: def.name, slot, runner: this.deps.instanceId, until: now + def.leaseMs, now }));
    if (!claimed) return { task: def.name, outcome: "skipped", scheduledAt: slot, reason: "a run of this task is already going" };
    return this.launch(def, { scheduledAt: slot, missed: 0, manual: true, leased: true });
  }

  // ---- slots --------------------------------------------------------------------------------

  private async ensure(now: number): Promise<void> {
    const missing = this.names.filter((n) => !this.ensured.has(n));
    if (missing.length === 0) return;
    // A new task's first run is its first slot after it was defined, not one at once.
    const slotAtDefinition = (name: string) => {
      const at = this.definedAt.get(name) ?? now;
      const def = this.tasks.get(name)!;
      try {
        return def.cadence.latestAtOrBefore(at) ?? at;
      } catch (error) {
        if (!(error instanceof CadenceError)) throw error;
        // The row still gets written, so the other tasks run; slots after the definition are due.
        this.cadenceFailed(def, error);
        return at;
      }
    };
    await this.deps.store.ensureTasks({ tasks: missing.map((name) => ({ name, slot: slotAtDefinition(name) })), now });
    for (const name of missing) this.ensured.add(name);
  }

  /** The latest slot after `lastSlot` whose (jittered) time has come, or null. */
  private latestDue(def: TaskDefinition, lastSlot: number, now: number): number | null {
    let slot = def.cadence.latestAtOrBefore(now);
    for (let tries = 0; slot !== null && slot > lastSlot && tries < 2; tries++) {
      if (slot + this.jitter(def, slot) <= now) return slot;
      slot = def.cadence.latestAtOrBefore(slot - 1);
    }
    return null;
  }

  /**
   * The earliest time after `now` that a slot of this task becomes due. A jittered current slot counts
   * only if it is still to run (after `lastSlot`): the slot a task was defined in is not.
   */
  private nextDueTime(def: TaskDefinition, now: number, lastSlot: number): number | null {
    const current = def.cadence.latestAtOrBefore(now);
    if (current !== null && current > lastSlot && current + this.jitter(def, current) > now) return current + this.jitter(def, current);
    const next = def.cadence.nextAfter(now);
    return next === null ? null : next + this.jitter(def, next);
  }

  /** The slots a due task runs now: the latest only, or every slot inside its catch-up window. */
  private slotsToRun(def: TaskDefinition, lastSlot: number, due: number, now: number): number[] {
    if (def.catchUpMs === false) return [due];
    // Slots strictly younger than catchUp (task.ts): one exactly catchUp old collapses with the older ones.
    const windowStart = Math.max(lastSlot, now - def.catchUpMs);
    const slots: number[] = [];
    for (let at = def.cadence.nextAfter(windowStart); at !== null && at <= due && slots.length < SLOTS_CAP; at = def.cadence.nextAfter(at)) slots.push(at);
    return slots.length ? slots : [due];
  }

  /** Jitter is a pure function of (task, slot), so every process agrees on when a slot is due. */
  private jitter(def: TaskDefinition, slot: number): number {
    if (def.jitterMs === 0) return 0;
    let hash = 2166136261;
    for (const ch of `${def.name}@${slot}`) hash = Math.imul(hash ^ ch.charCodeAt(0), 16777619);
    return (hash >>> 0) % (def.jitterMs + 1);
  }

  private mustGet(name: string, where: string): TaskDefinition {
    const def = this.tasks.get(name);
    if (!def) throw new InvalidInputError(`${where}: unknown task ${preview(name)} (defined: ${this.names.join(", ") || "none"})`);
    return def;
  }
}

function maxOrNull(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.max(a, b);
}

function minOrNull(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}
