import type { Clock } from "../../core/clock.js";
import { errorText } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { TracerLike } from "../../core/tracing.js";
import { ClaimWindow } from "./claim-window.js";
import { Claimer } from "./claimer.js";
import { ContinuousDriver, HOLD_POLL_MS } from "./continuous-driver.js";
import { Handoffs, type Handoff } from "./handoffs.js";
import type { JobAbortedError } from "../errors.js";
import { JobExecutor } from "./executor.js";
import { Holdings } from "./holdings.js";
import { Leases } from "./leases.js";
import { SlotOffer } from "./offers.js";
import type { QueueConfig } from "../options.js";
import { OutcomeBatcher } from "./outcomes.js";
import { ProgressWriter } from "./progress.js";
import { RateLimiter } from "../flow-control/rate-limit.js";
import { JobRunner } from "./runner.js";
import { Slots } from "./slots.js";
import type { HandedJobs, QueueStore } from "../store/store.js";
import { TickDriver, type TickResult } from "./tick-driver.js";
import type { JobWaits } from "../waits.js";

export { SERIAL_DEPTH } from "./continuous-driver.js";
export type { Handoff } from "./handoffs.js";

export interface WorkerDeps {
  store: QueueStore;
  clock: Clock;
  logger: Logger;
  instanceId: string;
  /** Longest idle wait before looking for due jobs again (other processes' enqueues on SQLite). */
  pollIntervalMs: number;
  /** Callers in this process awaiting jobs: told of each job's end and progress here at once. */
  waits: JobWaits;
  /** Jobs became due on `queue` (a flow parent whose last child ended here): its worker here, if any, looks. */
  wake: (queue: string) => void;
  /** Each run gets a span linked to its job's enqueue, when the engine traces. */
  tracer?: TracerLike;
}

/**
 * Runs one queue's jobs in this process: it puts together the parts that claim jobs (the claimer),
 * hold them (holdings, leases, the slots of a globalConcurrency), run them (the runner and its
 * executor) and record their outcomes (the outcome batcher), under two drivers:
 * - the continuous driver (`start`): keeps `concurrency` jobs running, claims the next batch while the
 *   current one runs (prefetch), and sleeps until a wake-up (enqueue, notification, due time, poll);
 * - the tick driver (`runDue`): one bounded pass for `tw.tick()`, used by tests with a fake clock and
 *   by runtimes (Durable Object alarms) that drive the engine themselves.
 */
export class QueueWorker {
  readonly workerId: string;
  /** Running, prefetched and promised jobs: the one count of this worker's capacity. */
  private readonly holdings = new Holdings();
  private readonly outcomes: OutcomeBatcher;
  private readonly executor: JobExecutor;
  private readonly runner: JobRunner;
  private readonly leases: Leases;
  private readonly limiter: RateLimiter;
  /** This worker's share of the queue's globalConcurrency, when it has one. */
  private readonly slots: Slots | null;
  private readonly claimer: Claimer;
  /** How much to claim and keep in hand, from the moving averages of a job's run and a claim's round trip. */
  private readonly window: ClaimWindow;
  private readonly tick: TickDriver;
  private readonly driver: ContinuousDriver;
  /** Jobs that reach the worker without a claim: this process's enqueues, and other processes' through the store. */
  private readonly handoffs: Handoffs;
  /** wake() was called since the last runDue ended (see hasNewWork). */
  private wokenSinceRun = false;

  constructor(
    readonly config: QueueConfig,
    private readonly deps: WorkerDeps,
  ) {
    const { store, clock, logger } = deps;
    this.workerId = `${deps.instanceId}/${config.name}`;
    const jobsAtOnce = config.concurrency * (config.batch?.size ?? 1);
    this.window = new ClaimWindow(config);
    this.limiter = new RateLimiter(config.rateLimit, clock);
    this.outcomes = new OutcomeBatcher(
      store,
      this.workerId,
      () => clock.now(),
      () => this.driver.outcomesWritten(),
      (queues) => queues.forEach((queue) => deps.wake(queue)),
      (error, count) => logger.error("store.error", { queue: config.name, operation: "settle", error: errorText(error), retrying: count }),
    );
    const progress = new ProgressWriter({
      store, clock, logger, maxBytes: config.maxResultBytes,
      reported: (id, attempt, value) => deps.waits.progressed(id, attempt, value),
      storeError: (operation, error) => this.storeError(operation, error),
    });
    this.executor = new JobExecutor(config, {
      clock, logger, outcomes: this.outcomes, progress, tracer: deps.tracer,
      retryScheduled: (at) => this.driver.wakeBy(at),
      ended: (id) => deps.waits.signal(id),
    });
    this.leases = new Leases({
      store, clock, logger, workerId: this.workerId, leaseMs: config.leaseMs, outcomes: this.outcomes,
      services: { report: (job, value) => progress.report(job, value), childResults: (job) => (job.children ? store.childResults({ id: job.id }) : Promise.resolve([])) },
      held: () => this.holdings.held(),
      lost: (entry) => this.holdings.forget(entry),
      storeError: (operation, error) => this.storeError(operation, error),
    });
    // Shared limits, pauses of groups and a rate are the claim's to apply, and a batch gathers its
    // jobs from claims: only a plain queue's worker takes jobs it never claimed.
    const offer =
      store.offers && !config.limits && !config.batch && !config.rateLimit
        ? new SlotOffer({
            offers: store.offers, clock, queue: config.name, workerId: this.workerId, leaseMs: config.leaseMs, maxAttempts: config.maxAttempts,
            // Jobs faster than a round trip are offered a second capacity, as a claim would prefetch one.
            free: () => this.holdings.free((this.window.fasterThanRoundTrip ? 2 : 1) * config.concurrency),
            holds: (id) => this.holdings.holds(id) || this.outcomes.holds(id),
            take: (jobs) => this.handoffs.receive(jobs, clock.now() + config.leaseMs),
            storeError: (operation, error) => this.storeError(operation, error),
          })
        : null;
    this.handoffs = new Handoffs({
      clock, workerId: this.workerId, concurrency: config.concurrency, leaseMs: config.leaseMs, limited: config.limits !== undefined,
      holdings: this.holdings, leases: this.leases, limiter: this.limiter, offer,
      state: () => this.driver.handoffState, pump: () => this.driver.pump(),
    });
    const { globalConcurrency, ...rest } = config.limits ?? { buckets: [], grouped: false };
    this.claimer = new Claimer({
      store, clock, logger, queue: config.name, workerId: this.workerId, leaseMs: config.leaseMs, maxAttempts: config.maxAttempts,
      // The limits the store's claim applies: all but globalConcurrency, which the slots hold.
      limits: rest.grouped || rest.buckets.length > 0 ? rest : undefined,
      limited: config.limits !== undefined, pollIntervalMs: deps.pollIntervalMs, holdPollMs: HOLD_POLL_MS,
      limiter: this.limiter, leases: this.leases, holdings: this.holdings,
    });
    // Under groupConcurrency 1 a claim may hand this worker several jobs of one group (SERIAL_DEPTH),
    // and only this worker runs them: it starts a group's next one when the one before has ended.
    this.runner = new JobRunner({
      clock, batch: config.batch, serialGroups: rest.groupConcurrency === 1, holdings: this.holdings, leases: this.leases,
      outcomes: this.outcomes, executor: this.executor, window: this.window,
      freed: () => this.driver.pump(), storeError: (operation, error) => this.storeError(operation, error),
    });
    this.slots =
      globalConcurrency === undefined
        ? null
        : new Slots({
            store, clock, queue: config.name, workerId: this.workerId, cap: globalConcurrency, leaseMs: config.leaseMs,
            // An idle worker keeps only what it runs and holds; a busy one keeps asking for all it could run.
            renewWant: () => this.driver.slotsWanted(),
            changed: () => this.driver.pump(),
            storeError: (operation, error) => this.storeError(operation, error),
          });
    this.tick = new TickDriver({
      clock, capacity: jobsAtOnce, holdPollMs: HOLD_POLL_MS, limiter: this.limiter, slots: this.slots,
      claimer: this.claimer, runner: this.runner, outcomes: this.outcomes, active: () => this.driver.active,
    });
    this.driver = new ContinuousDriver({
      config, jobsAtOnce, clock, store, workerId: this.workerId, pollIntervalMs: deps.pollIntervalMs,
      holdings: this.holdings, leases: this.leases, outcomes: this.outcomes, runner: this.runner, claimer: this.claimer,
      limiter: this.limiter, window: this.window, slots: this.slots, handoffs: this.handoffs,
      paced: rest.buckets.length > 0 || rest.groupRate !== undefined, grouped: rest.grouped,
      storeError: (operation, error) => this.storeError(operation, error),
    });
  }

  get stats() {
    const { holdings, window, driver, claimer, slots } = this;
    return { running: holdings.runningCount, prefetched: holdings.prefetchedCount, batch: window.batch, active: driver.active, paused: driver.isPaused, heldBy: claimer.heldBy, slots: slots?.count ?? null };
  }

  start(): void {
    this.driver.start();
  }

  /** Something may be due: an enqueue here, a notification, a rescue. */
  wake(): void {
    this.wokenSinceRun = true;
    this.driver.wake();
  }

  /** Slots reserved for jobs this process is enqueueing, when the worker has caught up (see Handoffs.reserve). */
  handoff(count: number): Handoff | null {
    return this.handoffs.reserve(count);
  }

  /** Jobs enqueued by another process into this worker's offered slots (see SlotOffer); `*`: some may have gone unheard. */
  handed(handoff: HandedJobs | "*"): void {
    this.handoffs.heard(handoff);
  }

  /** Stops the continuous driver: prefetched jobs go back, running ones get `graceMs` (see ContinuousDriver.stop). */
  stop(graceMs: number): Promise<void> {
    return this.driver.stop(graceMs);
  }

  /** The queue (or its `group`) was paused from this process (see ContinuousDriver.pausedHere). */
  pausedHere(group: string | null = null): void {
    this.driver.pausedHere(group);
  }

  /** Aborts a job this worker holds (it was cancelled). Returns whether it was held here. */
  abort(id: string, error: JobAbortedError): boolean {
    const entry = this.holdings.find(id);
    if (!entry) return false;
    entry.ctx.abort(error);
    this.holdings.forget(entry);
    return true;
  }

  /** One bounded pass for `tw.tick()` (see TickDriver). */
  async runDue(budget: number): Promise<TickResult> {
    try {
      return await this.tick.runDue(budget);
    } finally {
      // What was enqueued while this pass ran, it claimed; only what comes after is news.
      this.wokenSinceRun = false;
    }
  }

  /**
   * Something was enqueued (or retried) here since the last `runDue` ended: by a task or a delivery
   * hook later in the same tick, say, so the store's next due time read before it is already stale.
   */
  get hasNewWork(): boolean {
    return this.wokenSinceRun;
  }

  private storeError(operation: string, error: unknown): void {
    this.deps.logger.error("store.error", { queue: this.config.name, operation, error: errorText(error) });
  }
}
