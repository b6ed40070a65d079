import type { Clock, TimerHandle } from "../../core/clock.js";
import type { ClaimWindow } from "./claim-window.js";
import type { JobExecutor } from "./executor.js";
import type { Holdings } from "./holdings.js";
import type { HeldJob, Leases } from "./leases.js";
import type { OutcomeBatcher } from "./outcomes.js";
import type { JobOutcome } from "../store/store.js";
import { setStarted } from "../store/rows.js";

export interface RunnerDeps {
  clock: Clock;
  /** A batch queue's jobs run `size` at a time, gathered for at most `waitMs`. */
  batch: { size: number; waitMs: number } | undefined;
  /** Under groupConcurrency 1 a worker runs one job of a group at a time. */
  serialGroups: boolean;
  holdings: Holdings;
  leases: Leases;
  outcomes: OutcomeBatcher;
  executor: JobExecutor;
  window: ClaimWindow;
  /** Slots were freed and outcomes recorded: the continuous driver looks for more work. */
  freed: () => void;
  storeError: (operation: string, error: unknown) => void;
}

/**
 * Runs the jobs a worker holds, one by one or in batches, and records their outcomes: the one
 * execution path of both drivers. The continuous driver `launch`es a job as a slot frees (a batch
 * queue's job joins the batch being gathered); the tick driver runs a claim's jobs with `runAll` and
 * waits for them.
 */
export class JobRunner {
  /** Groups with a job running here (under groupConcurrency 1): their next job waits for it. */
  readonly busyGroups: Set<string> | null;
  private readonly gathering: HeldJob[] = [];
  private gatherTimer: TimerHandle | undefined;

  constructor(private readonly deps: RunnerDeps) {
    this.busyGroups = deps.serialGroups && !deps.batch ? new Set() : null;
  }

  /** Starts a held job now (the continuous driver); bound, as the holdings call it for each job. */
  readonly launch = (entry: HeldJob): void => {
    const { clock, holdings, leases, outcomes } = this.deps;
    // Prefetched while this process was stalled (a long synchronous handler, a frozen process) past
    // its lease: the store may have given it to another worker already, so it is handed back, never
    // started here (the release is fenced: refused if another worker holds it now).
    if (entry.job.lease && entry.job.lease.until <= clock.now()) return leases.release(entry, "lease_lapsed");
    holdings.started(entry);
    if (this.busyGroups && entry.job.group !== null) this.busyGroups.add(entry.job.group);
    // Held without starting (prefetched, or handed over by another process): its start is written
    // with the next outcomes, or with its own (see OutcomeBatcher).
    if (entry.job.startedAt === null) {
      const now = clock.now();
      setStarted(entry.job, now);
      outcomes.started(entry.job);
    }
    if (this.deps.batch) return this.gather(entry);
    // One job: one promise of its own, not a batch's arrays (this runs once per job at full speed).
    const started = performance.now();
    void this.deps.executor.run(entry).then((outcome) => {
      this.deps.window.jobRan(performance.now() - started);
      this.end(entry, outcome)?.catch((error: unknown) => this.deps.storeError("settle", error));
      this.deps.freed();
    });
  };

  /** Runs a claim's jobs (the tick driver): each batch of a batch queue as it is, without waiting for more. */
  async runAll(entries: readonly HeldJob[]): Promise<void> {
    const size = this.deps.batch?.size ?? 1;
    const runs: Promise<Promise<void>[]>[] = [];
    for (let at = 0; at < entries.length; at += size) {
      const group = entries.slice(at, at + size);
      for (const entry of group) this.deps.holdings.started(entry);
      runs.push(this.execute(group));
    }
    await Promise.all((await Promise.all(runs)).flat());
  }

  /** Runs the batch still gathering with what it has (the worker stops: no more jobs are coming). */
  flush(): void {
    while (this.gathering.length) this.runGathered();
  }

  /**
   * Runs `entries` (one job, or one batch of a batch queue), frees their slots and hands their
   * outcomes to the batcher; resolves with the outcomes' writes once the slots are free.
   */
  private async execute(entries: HeldJob[]): Promise<Promise<void>[]> {
    const { executor, window } = this.deps;
    const started = performance.now();
    const outcomes = this.deps.batch ? await executor.runBatch(entries) : [await executor.run(entries[0]!)];
    window.jobRan((performance.now() - started) / entries.length);
    const writes: Promise<void>[] = [];
    entries.forEach((entry, i) => {
      const write = this.end(entry, outcomes[i]!);
      if (write) writes.push(write);
    });
    this.deps.freed();
    return writes;
  }

  /** A job ran: its slot is free and its outcome goes to the batcher (none when it was released meanwhile). */
  private end(entry: HeldJob, outcome: JobOutcome): Promise<void> | null {
    this.deps.holdings.ended(entry);
    if (this.busyGroups && entry.job.group !== null) this.busyGroups.delete(entry.job.group);
    return entry.released ? null : this.deps.executor.settle(entry.job, outcome);
  }

  private logFailed(writes: Promise<void>[]): void {
    for (const write of writes) write.catch((error: unknown) => this.deps.storeError("settle", error));
  }

  /**
   * A batch queue's job joins the batch being gathered: it runs when the batch is full, or `wait`
   * after its first job joined.
   */
  private gather(entry: HeldJob): void {
    const { size, waitMs } = this.deps.batch!;
    this.gathering.push(entry);
    if (this.gathering.length >= size) this.runGathered();
    else this.gatherTimer ??= this.deps.clock.setTimeout(() => this.runGathered(), waitMs);
  }

  private runGathered(): void {
    const { clock, batch } = this.deps;
    if (this.gatherTimer) clock.clearTimeout(this.gatherTimer);
    this.gatherTimer = undefined;
    const entries = this.gathering.splice(0, batch!.size);
    if (entries.length === 0) return;
    void this.execute(entries).then((writes) => this.logFailed(writes));
    if (this.gathering.length) this.gatherTimer = clock.setTimeout(() => this.runGathered(), batch!.waitMs);
  }
}
