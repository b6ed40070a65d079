import type { Clock } from "../../core/clock.js";
import type { Logger } from "../../core/logger.js";
import type { Holdings } from "./holdings.js";
import type { HeldJob, Leases } from "./leases.js";
import type { RateLimiter } from "../flow-control/rate-limit.js";
import type { ClaimHold, ClaimLimits, ClaimResult, QueueStore } from "../store/store.js";

export interface ClaimerDeps {
  store: QueueStore;
  clock: Clock;
  logger: Logger;
  queue: string;
  workerId: string;
  leaseMs: number;
  /** The queue's retry.maxAttempts, written on the jobs that took their queue's. */
  maxAttempts: number | undefined;
  /** A queue's shared limits and groups, applied by the claim; undefined for a plain queue. */
  limits: ClaimLimits | undefined;
  /** Whether the queue has limits at all (its claims log how long jobs waited on them). */
  limited: boolean;
  /** Longest idle wait: how soon a worker of a paused queue looks again. */
  pollIntervalMs: number;
  /** How soon a worker held back by a concurrency limit looks again. */
  holdPollMs: number;
  limiter: RateLimiter;
  leases: Leases;
  holdings: Holdings;
}

export interface ClaimOptions {
  /** What the worker would have claimed without the slots of a globalConcurrency it lacks. */
  asked?: number;
  /** The worker holds fewer slots than it could fill, with jobs due: a full claim was held by the cap. */
  cutBySlots?: boolean;
  /** Jobs of one group per claim under groupConcurrency 1 (see SERIAL_DEPTH). */
  serialDepth?: number;
  /** How many of the claimed jobs start at the claim; the rest are held (see QueueStore.claimDue). */
  start?: number;
}

/**
 * A worker's claims: what it asks the store for, where a grouped claim goes on (its cursor), and what
 * holds its claims back (a limit, a pause), logged once per change.
 */
export class Claimer {
  private cursor: string | null = null;
  private hold: ClaimHold | null = null;

  constructor(private readonly deps: ClaimerDeps) {}

  /** What held the last claim back, if anything. */
  get heldBy(): ClaimHold | null {
    return this.hold;
  }

  /** Claims up to `limit` due jobs under this worker's lease; they come back held (see Leases.hold). */
  async claim(limit: number, { asked = limit, cutBySlots = false, serialDepth = 1, start = limit }: ClaimOptions = {}): Promise<{ entries: HeldJob[]; result: ClaimResult }> {
    const { store, clock, logger, queue } = this.deps;
    const now = clock.now();
    const leaseUntil = now + this.deps.leaseMs;
    const result = await store.claim({
      queue,
      limit,
      now,
      leaseUntil,
      workerId: this.deps.workerId,
      queueMaxAttempts: this.deps.maxAttempts,
      limits: this.deps.limits,
      after: this.cursor,
      ...(serialDepth > 1 ? { serialDepth } : {}),
      ...(start < limit ? { start } : {}),
    });
    this.cursor = result.cursor;
    this.noteHold(result.jobs.length < limit ? result.held : cutBySlots ? "globalConcurrency" : null, result.jobs.length, asked, result.retryAt);
    // How long each started job waited since it was due: the time spent on the queue's limits.
    if (this.deps.limited && result.jobs.length) logger.debug("queue.limited_claim", { queue, started: result.jobs.length, waitedMs: result.jobs.map((j) => Math.max(0, now - j.runAt)) });
    this.deps.limiter.started(result.jobs.length);
    // A job held here already (a renewal of the offer read it as handed while the claim was on its
    // way) is held once.
    return { entries: this.deps.leases.hold(result.jobs.filter((job) => !this.deps.holdings.holds(job.id)), leaseUntil), result };
  }

  /** Logs what holds the queue's claims back, once per change (`queue.throttled`, `queue.unthrottled`). */
  noteHold(hold: ClaimHold | null, started: number, asked: number, until: number | null = null): void {
    if (hold === this.hold) return;
    const { logger, queue } = this.deps;
    if (hold) logger.info("queue.throttled", { queue, by: hold, started, asked, ...(until !== null ? { until } : {}) });
    else if (this.hold) logger.info("queue.unthrottled", { queue, was: this.hold });
    this.hold = hold;
  }

  /**
   * When a worker whose due jobs wait on a limit looks again: when a token comes back; after a poll
   * for a pause (a resume wakes workers itself); soon for a slot another process frees, which sends
   * no wake-up.
   */
  holdUntil(result: ClaimResult): number {
    if (result.retryAt !== null) return result.retryAt;
    return this.deps.clock.now() + (result.held === "paused" ? this.deps.pollIntervalMs : this.deps.holdPollMs);
  }
}
