import type { Clock } from "../../core/clock.js";
import type { RateLimiter } from "../flow-control/rate-limit.js";
import type { Job } from "../job.js";
import type { HandedJobs } from "../store/store.js";
import type { Holdings } from "./holdings.js";
import type { Leases } from "./leases.js";
import type { SlotOffer } from "./offers.js";

/**
 * Slots of a worker, reserved for jobs this process is enqueueing: the insert writes the jobs running
 * under `workerId`'s lease, then `take` starts those it wrote (and frees the slots of rows that were
 * duplicates), or `cancel` frees them all (the insert failed).
 */
export interface Handoff {
  workerId: string;
  leaseUntil: number;
  take(jobs: Job[]): void;
  cancel(): void;
}

/** Where the worker stands, as a hand-off asks it. */
export interface HandoffState {
  /** Started and not stopping: jobs handed now run here. */
  readonly working: boolean;
  /** Its last claim found nothing due and nothing woke it since: jobs handed now overtake no backlog it knows of. */
  readonly caughtUp: boolean;
  /** The queue is paused, as this worker last heard. */
  readonly paused: boolean;
}

export interface HandoffDeps {
  clock: Clock;
  workerId: string;
  concurrency: number;
  leaseMs: number;
  /** Shared limits and pauses of groups are checked by the claim, which a hand-off skips. */
  limited: boolean;
  holdings: Holdings;
  leases: Leases;
  limiter: RateLimiter;
  /** The offer of free slots to other processes' enqueues, where the store carries one (see SlotOffer). */
  offer: SlotOffer | null;
  state: () => HandoffState;
  /** Jobs came into the worker's hands: start what the slots allow. */
  pump: () => void;
}

/**
 * A worker's free slots offered to enqueues, the one way a job reaches a worker without a claim. This
 * process's own enqueues reserve slots directly (`reserve`: no statement, no notification); other
 * processes' take offered slots through the store (SlotOffer: rows of `tickwork_offers` their insert
 * fills, then a notification). Either way the jobs arrive written running under this worker, with a
 * lease this worker computed on its own clock, and come into its hands through one door, `receive`:
 * held like prefetched jobs, handed back if the worker stopped or the queue was paused meanwhile.
 */
export class Handoffs {
  constructor(private readonly deps: HandoffDeps) {}

  /**
   * Reserves `count` slots for jobs this process is enqueueing, when the worker has caught up and has
   * free slots and rate-limit room for all of them. The enqueue then writes the jobs claimed, and
   * they start as soon as the insert returns: no claim's round trip (on PostgreSQL, half the
   * enqueue-to-start latency of an idle worker), and under a stream of enqueues no claim at all.
   */
  reserve(count: number): Handoff | null {
    const { holdings, limiter, clock } = this.deps;
    const state = this.deps.state();
    if (!state.caughtUp || state.paused || this.deps.limited) return null;
    if (count < 1 || count > holdings.free(this.deps.concurrency) || limiter.allowance(count) < count) return null;
    const close = holdings.promise(count);
    const leaseUntil = clock.now() + this.deps.leaseMs;
    return {
      workerId: this.deps.workerId,
      leaseUntil,
      take: (jobs) => {
        if (close()) this.receive(jobs, leaseUntil);
      },
      cancel: () => void close(),
    };
  }

  /** Jobs another process enqueued into the offered slots (a notification); `*`: some may have gone unheard. */
  heard(handed: HandedJobs | "*"): void {
    const { offer } = this.deps;
    if (!offer) return;
    if (handed === "*") offer.lookAgain();
    else offer.received(handed);
  }

  /** The worker caught up: its free slots are offered to other processes' enqueues (or topped up). */
  idle(): void {
    this.deps.offer?.idle();
  }

  /** The worker's free slots changed while it works: an open offer follows them. */
  fit(): void {
    this.deps.offer?.fit();
  }

  /** A backlog waits (or the queue paused): jobs handed over now would overtake it, so the offer lapses. */
  busy(): void {
    this.deps.offer?.busy();
  }

  /** Withdraws the offer; jobs handed here that were not heard of yet go back to pending. */
  async stop(): Promise<void> {
    if (this.deps.offer) this.receive(await this.deps.offer.stop(), this.deps.clock.now() + this.deps.leaseMs);
  }

  /** Jobs handed to this worker by either path, written running under its lease until `leaseUntil`. */
  receive(jobs: Job[], leaseUntil: number): void {
    const { leases, holdings, limiter } = this.deps;
    limiter.started(jobs.length);
    const entries = leases.hold(jobs, leaseUntil);
    const state = this.deps.state();
    // Stopped meanwhile: the jobs go back to pending like any prefetched job.
    if (!state.working) return entries.forEach((entry) => leases.release(entry));
    // Handed before a pause that this worker has heard of since: they start after the resume.
    if (state.paused) return entries.forEach((entry) => leases.release(entry, "paused"));
    holdings.prefetch(entries);
    this.deps.pump();
  }
}
