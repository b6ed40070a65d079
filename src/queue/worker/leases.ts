import type { Clock, TimerHandle } from "../../core/clock.js";
import type { Logger } from "../../core/logger.js";
import { AttemptContext, type AttemptServices } from "./context.js";
import { JobAbortedError } from "../errors.js";
import type { Job } from "../job.js";
import type { OutcomeBatcher } from "./outcomes.js";
import type { QueueStore } from "../store/store.js";

/** A job whose lease a worker holds: prefetched, or running. */
export interface HeldJob {
  job: Job;
  ctx: AttemptContext;
  /** Claim order, so a heartbeat only judges jobs claimed before it was sent. */
  seq: number;
  /** Released by a shutdown: whatever the handler ends with is no longer reported. */
  released: boolean;
}

export interface LeaseDeps {
  store: QueueStore;
  clock: Clock;
  logger: Logger;
  workerId: string;
  leaseMs: number;
  /** Where a release is written, in line with the worker's other outcomes. */
  outcomes: OutcomeBatcher;
  /** Where the attempts' `ctx.progress` values go, and their `ctx.childResults()` come from. */
  services: AttemptServices;
  /** Every job the worker holds right now, running or prefetched. */
  held: () => HeldJob[];
  /** A job whose lease was lost, its signal already aborted: the worker must not start it. */
  lost: (entry: HeldJob) => void;
  storeError: (operation: string, error: unknown) => void;
}

/**
 * A worker's leases: a job claimed here stays this worker's while a heartbeat renews it every quarter
 * of the lease; a job the store no longer gives this worker (it was cancelled, or the lease lapsed
 * while this process stalled and another worker took it) is aborted here, so two workers never both
 * believe they own it for longer than one heartbeat.
 */
export class Leases {
  private seq = 0;
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(private readonly deps: LeaseDeps) {}

  /**
   * Takes the leases of jobs just claimed or handed off; the heartbeat renews them from now on.
   * Claims answer the columns a start needs, not the lease they wrote: the job a handler gets says
   * which worker holds it and until when, as a read of its row would.
   */
  hold(jobs: Job[], until: number): HeldJob[] {
    const { logger, workerId } = this.deps;
    const entries = jobs.map((job): HeldJob => {
      job.lease ??= { workerId, until };
      return { job, ctx: new AttemptContext(job, logger, this.deps.services), seq: ++this.seq, released: false };
    });
    if (entries.length) this.arm();
    return entries;
  }

  /**
   * Hands a job back, pending again at once, its attempt not counted: at a shutdown, at a pause, or
   * when its lease lapsed before it started (this process stalled; another worker may hold it now,
   * and then the fenced release is refused).
   */
  release(entry: HeldJob, reason: "shutdown" | "paused" | "lease_lapsed" | "not_started" = "shutdown"): void {
    if (entry.released) return;
    entry.released = true;
    const { job } = entry;
    void this.deps.outcomes.add({ kind: "released", id: job.id, attempt: job.attempts }, job.lease?.until).then(
      (ok) => ok && this.deps.logger.info("job.released", { queue: job.queue, id: job.id, reason }),
      (error) => this.deps.storeError("release", error),
    );
  }

  /** No more heartbeats: the worker has stopped and released what it held. */
  stop(): void {
    this.stopped = true;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.timer || this.stopped) return;
    this.timer = this.deps.clock.setTimeout(() => void this.beat(), this.deps.leaseMs / 4);
  }

  /** Renews the lease of every job held here; a job the store no longer gives us is aborted. */
  private async beat(): Promise<void> {
    this.timer = undefined;
    const { store, clock, logger, workerId, leaseMs, held } = this.deps;
    if (held().length === 0) return;
    const sentAt = this.seq;
    try {
      const ids = held().filter((e) => !e.released).map((e) => e.job.id);
      const leaseUntil = clock.now() + leaseMs;
      const renewed = new Set(await store.heartbeat({ workerId, ids, leaseUntil }));
      for (const entry of held()) {
        if (renewed.has(entry.job.id)) entry.job.lease = { workerId, until: leaseUntil };
        if (entry.seq > sentAt || renewed.has(entry.job.id) || entry.released) continue;
        logger.warn("job.lease_lost", { queue: entry.job.queue, id: entry.job.id, attempt: entry.job.attempts });
        entry.ctx.abort(new JobAbortedError("lease_lost", "this worker lost the job's lease; another worker may run it"));
        this.deps.lost(entry);
      }
    } catch (error) {
      this.deps.storeError("heartbeat", error);
    }
    if (held().length) this.arm();
  }
}
