import type { Clock } from "../core/clock.js";
import { errorText } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { TracerLike } from "../core/tracing.js";
import { waitAtMost } from "../core/timeout.js";
import { JobAbortedError } from "./errors.js";
import { JobExecutor } from "./executor.js";
import type { Job } from "./job.js";
import { ClaimWindow } from "./claim-window.js";
import { Holdings } from "./holdings.js";
import { Leases, type HeldJob } from "./leases.js";
import type { QueueConfig } from "./options.js";
import { OutcomeBatcher } from "./outcomes.js";
import { ProgressWriter } from "./progress.js";
import type { JobWaits } from "./waits.js";
import { SlotOffer } from "./offers.js";
import { RateLimiter } from "./rate-limit.js";
import { JobRunner } from "./runner.js";
import { Claimer, type ClaimOptions } from "./claimer.js";
import { TickDriver, type TickResult } from "./tick-driver.js";
import { WorkerSleep } from "./worker-sleep.js";
import { Slots } from "./slots.js";
import type { ClaimResult, HandedJobs, QueueStore } from "./store.js";

/**
 * How soon a worker held back by a concurrency limit looks again: a slot freed by another process
 * sends no wake-up (its own finishes pump at once). Also how long an idle worker keeps its share of a
 * globalConcurrency before letting go, so a trickle of jobs does not ask for slots for every one.
 */
const HOLD_POLL_MS = 50;

/**
 * Jobs of one group a worker of fast jobs on a queue of groupConcurrency 1 takes per claim, and runs
 * one after another: a claim then walks a quarter of the groups for as many jobs.
 */
export const SERIAL_DEPTH = 4;

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
 * Runs one queue's jobs in this process: it claims them and keeps its slots busy; running a job is
 * the executor's, holding its lease the leases', pacing starts the rate limiter's. Two drivers share
 * the same execution path:
 * - continuous (`start`): keeps `concurrency` jobs running, claims the next batch while the current
 *   one runs (prefetch), and sleeps until a wake-up (enqueue, notification, due time, poll);
 * - `runDue`: one bounded pass for `tw.tick()`, used by tests with a fake clock and by runtimes
 *   (Durable Object alarms) that drive the engine themselves.
 */
/**
 * What a worker is doing: `off` before start (a tick may drive it), `busy` with jobs to claim or run,
 * `claiming` while a claim or an ask for slots is on its way, `idle` when nothing it could start is
 * due (it sleeps until a wake-up), `stopping` from stop() on, `stopped` once stop() has returned.
 */
type WorkerState = "off" | "busy" | "claiming" | "idle" | "stopping" | "stopped";

export class QueueWorker {
  readonly workerId: string;
  /** Running, prefetched and promised jobs: the one count of this worker's capacity. */
  private readonly holdings = new Holdings();
  private readonly outcomes: OutcomeBatcher;
  private readonly executor: JobExecutor;
  private readonly runner: JobRunner;
  private readonly sleep: WorkerSleep;
  private readonly leases: Leases;
  private readonly limiter: RateLimiter;
  /** This worker's share of the queue's globalConcurrency, when it has one. */
  private readonly slots: Slots | null;
  private readonly claimer: Claimer;
  private readonly tick: TickDriver;
  /**
   * Starts are paced by tokens taken at the claim (a shared rate limit): a claimed job must start at
   * once, so the worker claims only for its free slots.
   */
  private readonly paced: boolean;
  /**
   * Claims take the groups round-robin, and a claimed job holds its group's slot in every process
   * from the claim on: a worker of slow jobs claims only for its free slots (see pump).
   */
  private readonly grouped: boolean;
  /** The last ask for slots got fewer than the worker could run, with jobs due: the cap holds it back. */
  private slotsShort = false;
  private state: WorkerState = "off";
  /** wake() was called since the last runDue ended (see hasNewWork). */
  private wokenSinceRun = false;
  /** The claim in flight, which stop() waits for: its jobs must be handed back before the store closes. */
  private claimInFlight: Promise<void> | null = null;
  private wokenDuringClaim = false;
  /** The queue is paused (the last claim said so): no claims until a wake-up or a poll. */
  private paused = false;
  /** Pauses heard while a claim was on its way (null: the whole queue): applied to what it brings. */
  private readonly pausedDuringClaim: (string | null)[] = [];
  /** This worker's offer of its free slots to other processes' enqueues, when the store takes offers (see SlotOffer). */
  private readonly offer: SlotOffer | null;
  /** How much to claim and keep in hand, from the moving averages of a job's run and a claim's round trip. */
  private readonly window: ClaimWindow;

  constructor(
    readonly config: QueueConfig,
    private readonly deps: WorkerDeps,
  ) {
    const { store, clock, logger } = deps;
    this.workerId = `${deps.instanceId}/${config.name}`;
    this.window = new ClaimWindow(config);
    this.limiter = new RateLimiter(config.rateLimit, clock);
    this.sleep = new WorkerSleep({
      clock, store, queue: config.name, pollIntervalMs: deps.pollIntervalMs, limiter: this.limiter,
      exhausted: () => this.state === "idle", stopping: () => !this.working,
      wake: () => this.busyAgain(), pump: () => this.pump(),
      storeError: (operation, error) => this.storeError(operation, error),
    });
    // Outcomes written: a queue held at a concurrency limit has a slot free in the store only now.
    this.outcomes = new OutcomeBatcher(
      store,
      this.workerId,
      () => clock.now(),
      () => {
        if (this.claimer.heldBy === "globalConcurrency" || this.claimer.heldBy === "groupConcurrency") this.busyAgain();
        else this.pump();
      },
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
      retryScheduled: (at) => this.sleep.wakeBy(at),
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
    this.offer =
      store.offers && !config.limits && !config.batch && !config.rateLimit
        ? new SlotOffer({
            offers: store.offers, clock, queue: config.name, workerId: this.workerId, leaseMs: config.leaseMs, maxAttempts: config.maxAttempts,
            // Jobs faster than a round trip are offered a second capacity, as a claim would prefetch one.
            free: () => this.holdings.free((this.window.fasterThanRoundTrip ? 2 : 1) * this.config.concurrency),
            holds: (id) => this.holdings.holds(id) || this.outcomes.holds(id),
            take: (jobs) => this.takeHanded(jobs),
            storeError: (operation, error) => this.storeError(operation, error),
          })
        : null;
    const { globalConcurrency, ...rest } = config.limits ?? { buckets: [], grouped: false };
    this.claimer = new Claimer({
      store, clock, logger, queue: config.name, workerId: this.workerId, leaseMs: config.leaseMs, maxAttempts: config.maxAttempts,
      // The limits the store's claim applies: all but globalConcurrency, which the slots hold.
      limits: rest.grouped || rest.buckets.length > 0 ? rest : undefined,
      limited: config.limits !== undefined, pollIntervalMs: deps.pollIntervalMs, holdPollMs: HOLD_POLL_MS,
      limiter: this.limiter, leases: this.leases, holdings: this.holdings,
    });
    this.paced = rest.buckets.length > 0 || rest.groupRate !== undefined;
    this.grouped = rest.grouped;
    // Under groupConcurrency 1 a claim may hand this worker several jobs of one group (SERIAL_DEPTH),
    // and only this worker runs them: it starts a group's next one when the one before has ended.
    this.runner = new JobRunner({
      clock, batch: config.batch, serialGroups: rest.groupConcurrency === 1, holdings: this.holdings, leases: this.leases,
      outcomes: this.outcomes, executor: this.executor, window: this.window,
      freed: () => this.pump(), storeError: (operation, error) => this.storeError(operation, error),
    });
    this.slots =
      globalConcurrency === undefined
        ? null
        : new Slots({
            store, clock, queue: config.name, workerId: this.workerId, cap: globalConcurrency, leaseMs: config.leaseMs,
            // An idle worker keeps only what it runs and holds; a busy one keeps asking for all it could run.
            renewWant: () =>
              this.state === "off" || this.state === "stopped"
                ? this.holdings.runningCount
                : this.state === "idle" || this.state === "stopping"
                  ? Math.min(config.concurrency, this.holdings.inHand)
                  : config.concurrency,
            changed: () => this.pump(),
            storeError: (operation, error) => this.storeError(operation, error),
          });
    this.tick = new TickDriver({
      clock, capacity: config.concurrency * (config.batch?.size ?? 1), holdPollMs: HOLD_POLL_MS, limiter: this.limiter, slots: this.slots,
      claimer: this.claimer, claim: (limit, options) => this.claim(limit, options), runner: this.runner, outcomes: this.outcomes,
      active: () => this.state !== "off" && this.state !== "stopped",
    });
  }

  /**
   * Jobs this worker may run at once: its concurrency (of batches, for a batch queue), within the
   * slots it holds of a globalConcurrency.
   */
  private get capacity(): number {
    const jobs = this.config.concurrency * (this.config.batch?.size ?? 1);
    return this.slots ? Math.min(jobs, this.slots.usable) : jobs;
  }

  get stats() {
    return { running: this.holdings.runningCount, prefetched: this.holdings.prefetchedCount, batch: this.window.batch, active: this.state !== "off" && this.state !== "stopped", paused: this.paused, heldBy: this.claimer.heldBy, slots: this.slots?.count ?? null };
  }

  // ---- continuous driver -------------------------------------------------------------------

  start(): void {
    if (this.state === "off") this.state = "busy";
    this.pump();
  }

  /** Something may be due: an enqueue here, a notification, a rescue. */
  wake(): void {
    this.wokenSinceRun = true;
    if (!this.working) return;
    this.wokenDuringClaim = true;
    this.sleep.cancel();
    this.busyAgain();
  }

  /** Started and not stopping: claiming, running or sleeping. */
  private get working(): boolean {
    return this.state === "busy" || this.state === "claiming" || this.state === "idle";
  }

  /** Something may be due: an idle worker looks again (a claiming one decides when its claim returns). */
  private busyAgain(): void {
    if (this.state === "idle") this.state = "busy";
    this.pump();
  }

  /** A claim or an ask for slots came back: the worker sleeps when it found nothing to start. */
  private claimed(idle: boolean): void {
    if (this.state === "claiming") this.state = idle ? "idle" : "busy";
  }

  /**
   * Reserves `count` slots of this worker for jobs enqueued in this process, when it has caught up:
   * its last claim found nothing due and nothing woke it since (so the jobs overtake no backlog it
   * knows of), it is not claiming, and it has free slots and rate-limit room for all of them. The
   * enqueue then writes the jobs as claimed, and they start as soon as the insert returns: no claim's
   * round trip (on PostgreSQL, half the enqueue-to-start latency of an idle worker), and under a
   * stream of enqueues no claim at all, only the inserts and the settles.
   */
  handoff(count: number): Handoff | null {
    // Shared limits and pauses are checked by the claim, which a hand-off skips.
    if (this.state !== "idle" || this.config.limits || this.paused) return null;
    if (count < 1 || count > this.holdings.free(this.config.concurrency) || this.limiter.allowance(count) < count) return null;
    const close = this.holdings.promise(count);
    const leaseUntil = this.deps.clock.now() + this.config.leaseMs;
    return {
      workerId: this.workerId,
      leaseUntil,
      take: (jobs) => {
        if (!close()) return;
        this.limiter.started(jobs.length);
        const entries = this.leases.hold(jobs, leaseUntil);
        // Stopped meanwhile: the jobs go back to pending like any prefetched job.
        if (!this.working) return entries.forEach((entry) => this.leases.release(entry));
        this.holdings.prefetch(entries);
        this.pump();
      },
      cancel: () => void close(),
    };
  }

  /** Jobs enqueued by another process into this worker's offered slots (see SlotOffer); `*`: some may have gone unheard. */
  handed(handoff: HandedJobs | "*"): void {
    if (!this.offer) return;
    if (handoff === "*") this.offer.lookAgain();
    else this.offer.received(handoff);
  }

  /** Holds jobs handed to this worker by another process, and starts them as slots free. */
  private takeHanded(jobs: Job[]): void {
    const entries = this.leases.hold(jobs, this.deps.clock.now() + this.config.leaseMs);
    // Stopped meanwhile: the jobs go back to pending like any prefetched job.
    if (!this.working) return entries.forEach((entry) => this.leases.release(entry));
    // Handed before a pause that this worker has heard of since: they start after the resume.
    if (this.paused) return entries.forEach((entry) => this.leases.release(entry, "paused"));
    this.holdings.prefetch(entries);
    this.pump();
  }

  /**
   * Stops claiming, hands prefetched jobs back, waits up to `graceMs` for running jobs, then aborts
   * and releases the rest so another worker can take them at once instead of after their lease.
   */
  async stop(graceMs: number): Promise<void> {
    this.state = "stopping";
    this.sleep.cancelAll();
    // A claim may still be on its way (or yielding before it starts); it releases what it gets.
    await this.claimInFlight;
    await this.sleep.settled();
    // The offer is withdrawn first: jobs handed here that were not heard of go back with the rest.
    if (this.offer) this.takeHanded(await this.offer.stop());
    for (const entry of this.holdings.takeBack()) this.leases.release(entry);
    // A batch still gathering runs now with what it has: no more jobs are coming.
    this.runner.flush();
    if (this.holdings.runningCount) {
      await waitAtMost(this.deps.clock, graceMs, this.holdings.drained());
      for (const entry of this.holdings.runningJobs()) {
        entry.ctx.abort(new JobAbortedError("shutdown", `shutdown grace of ${graceMs} ms ran out`));
        this.leases.release(entry);
      }
    }
    await this.outcomes.drain().catch((error) => this.storeError("settle", error));
    this.leases.stop();
    await this.slots?.stop();
    this.state = "stopped";
  }

  /**
   * The queue (or its `group`) was paused from this process: prefetched jobs of it not yet started go
   * back to pending. Paused whole, the worker claims nothing more until a resume wakes it (its next
   * claim would see the pause too); the claims pass over a paused group.
   */
  pausedHere(group: string | null = null): void {
    if (group === null) {
      this.paused = true;
      this.offer?.busy();
    }
    // A claim on its way read the queue before the pause: what it brings back is handed back too.
    if (this.state === "claiming") this.pausedDuringClaim.push(group);
    this.handBack(group);
  }

  /** Hands back the prefetched jobs of a paused queue (group null) or group. */
  private handBack(group: string | null): void {
    for (const entry of this.holdings.takeBack(group)) this.leases.release(entry, "paused");
  }

  /** Aborts a job this worker holds (it was cancelled). Returns whether it was held here. */
  abort(id: string, error: JobAbortedError): boolean {
    const entry = this.holdings.find(id);
    if (!entry) return false;
    entry.ctx.abort(error);
    this.holdings.forget(entry);
    return true;
  }

  private pump(): void {
    if (!this.working) return;
    const capacity = this.capacity;
    // Prefetched jobs start in claim order while slots are free; under groupConcurrency 1 a job whose
    // group has one running here waits for it to end.
    this.holdings.launchPrefetched(capacity, this.runner.busyGroups, this.runner.launch);
    this.slots?.giveBack(this.holdings.runningCount);
    // Slots free, nothing prefetched, a claim or the last batch's outcomes still on their way, and jobs
    // that take less than a round trip: move more per statement (a batch costs one statement whatever
    // its size). Jobs slower than a round trip keep the batch small, so prefetch never hoards them.
    const waiting = this.state === "claiming" || this.outcomes.size > 0;
    if (waiting && this.state !== "idle" && this.holdings.prefetchedCount === 0 && this.holdings.runningCount < capacity && this.window.fasterThanRoundTrip) this.window.grow();
    if (this.state === "claiming" || this.state === "idle") {
      // Idle: nothing due that this worker knows of. Other processes' enqueues may fill its free slots.
      if (this.state === "idle" && !this.paused) this.offer?.idle();
      else this.offer?.fit();
      return this.lingerSlots();
    }
    this.offer?.fit();
    this.slots?.keep();
    if (this.slots?.shouldAsk(this.config.concurrency, HOLD_POLL_MS)) {
      this.claimInFlight = this.askSlots();
      return;
    }
    // Jobs that finish faster than a round trip would leave the handlers idle during every claim: keep
    // a second batch on its way while one runs, so the store and the handlers work at the same time.
    // Slower jobs keep about one batch in hand (see ClaimWindow), so prefetch never hoards them from
    // other workers.
    // Under a shared rate limit a claimed job has taken its token, so a worker claims only for its free
    // slots: a prefetched job would start late and bunch the starts the limit spaces.
    // A grouped queue's claims cost more than a plain one's (a walk over the groups), and a prefetched
    // job holds its group in every process until it has run. Jobs slower than a round trip: claim
    // only for free slots. Faster ones: up to three capacities in hand beyond the running, claimed
    // two capacities at a time, so the handlers run on while a claim is on its way and each claim's
    // walk serves many jobs; a group that turns up later waits behind at most that much.
    // (A paced queue is never ahead: its claims wait for free slots, whatever their groups.)
    // Under groupConcurrency 1 each claim may take SERIAL_DEPTH jobs of a group, run in turn in one
    // slot: the window and the claim grow by as much, so as many groups as slots stay in hand.
    const groupedAhead = this.grouped && !this.paced && this.window.fasterThanRoundTrip;
    const shape = { capacity, groupedAhead, depth: groupedAhead && this.runner.busyGroups ? SERIAL_DEPTH : 1, limited: this.paced || this.grouped };
    // Outcomes waiting to be written count against the window of jobs faster than a round trip:
    // claiming stops until they are on their way, which bounds what a crash can make run twice and
    // keeps fast handlers from starving the writes. Slower jobs cannot starve the writes, and a batch
    // of them started together ends together: counted, their outcomes would hold the next claim until
    // they were written, and every slot would sit idle for a write and a claim.
    const unrecorded = this.window.fasterThanRoundTrip ? this.outcomes.size : 0;
    const want = Math.min(this.window.batch, this.holdings.free(this.window.inHand(shape)) - unrecorded);
    const room = this.limiter.allowance(want);
    // A claim waits until a quarter of a batch is free, so it is worth its round trip; but when the rate
    // limit is what holds it back, what the window has left is all it will ever get: claim that.
    if (room >= this.window.worthClaiming(shape) || (room > 0 && room < want)) {
      this.claimInFlight = this.claimBatch(room, shape.depth);
      return;
    }
    if (want > 0 && room === 0) this.sleep.untilRateWindow();
    if (unrecorded > 0 && this.holdings.runningCount === 0) this.outcomes.flushNow();
  }

  /**
   * Asks for the slots of a globalConcurrency this worker could fill. None to be had while jobs are
   * due: other processes hold them all, and none of theirs sends a wake-up when it lets one go, so
   * the worker asks again after a short wait.
   */
  private async askSlots(): Promise<void> {
    this.state = "claiming";
    let idle = false;
    let heldUntil: number | null = null;
    try {
      const { held, due } = await this.slots!.set(this.config.concurrency);
      this.slotsShort = held < this.config.concurrency && due;
      if (held === 0) {
        idle = true;
        if (due) {
          this.claimer.noteHold("globalConcurrency", 0, this.config.concurrency);
          heldUntil = this.deps.clock.now() + HOLD_POLL_MS;
        }
      }
    } catch (error) {
      this.storeError("holdSlots", error);
      idle = true;
    } finally {
      this.claimed(idle);
    }
    this.pump();
    this.sleep.afterClaim(heldUntil);
  }

  /** A worker with nothing to run and nothing due lets its slots go after a while (see Slots.linger). */
  private lingerSlots(): void {
    if (!this.slots || this.state !== "idle" || this.holdings.inHand) return;
    this.slots.linger(HOLD_POLL_MS, () => this.state === "idle" && !this.holdings.inHand);
  }

  private async claimBatch(limit: number, serialDepth: number): Promise<void> {
    this.state = "claiming";
    this.wokenDuringClaim = false;
    let idle = false;
    let held: number | null = null;
    try {
      await this.sleep.yieldIfBusy();
      const sent = performance.now();
      // The jobs that fit the free slots start at the claim; the rest are held, started as slots free.
      const start = Math.max(0, this.capacity - this.holdings.runningCount - this.holdings.prefetchedCount);
      const { entries: jobs, result } = await this.claim(limit, { cutBySlots: this.slotsShort, serialDepth, start });
      this.window.claimReturned(performance.now() - sent);
      // Stopped meanwhile: what it brought goes back to pending.
      if (!this.working) {
        for (const entry of jobs) this.leases.release(entry);
        return;
      }
      // Started ones first: they are the ones the free slots run now.
      this.holdings.prefetch([...jobs.filter((e) => e.job.startedAt !== null), ...jobs.filter((e) => e.job.startedAt === null)]);
      for (const group of this.pausedDuringClaim.splice(0)) {
        if (group === null) this.paused = true;
        this.handBack(group);
      }
      // A full claim: a backlog is waiting, and jobs handed over now would overtake it. The offer
      // lapses until the worker has caught up. A claim for jobs announced to it leaves the offer be.
      if (jobs.length >= limit) this.offer?.busy();
      if (result.held && jobs.length < limit) {
        // Due jobs wait on a limit or a pause, not on time: look again when a token comes back, a
        // little later for a slot another process frees, and after a poll (or a resume's wake-up)
        // for a paused queue. The store's due times would say "now" and spin.
        // A grouped claim that started jobs passed over full or paused groups, not the queue's
        // limit: the groups after the cursor may have due jobs, and the next claim (which starts at
        // least one job or holds) goes on there.
        if (jobs.length === 0 || !this.grouped || this.paced) {
          idle = true;
          held = this.claimer.holdUntil(result);
        }
      } else if (jobs.length < limit && !this.wokenDuringClaim) {
        // A wake-up that arrived while the claim was in flight may be for a job the claim's snapshot missed.
        idle = true;
        // The backlog is gone: start small again next time.
        this.window.reset();
      }
    } catch (error) {
      this.storeError("claim", error);
      idle = true;
    } finally {
      this.claimed(idle);
    }
    this.pump();
    this.sleep.afterClaim(held);
  }

  // ---- tick driver -------------------------------------------------------------------------

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

  // ---- shared ------------------------------------------------------------------------------

  /** A claim; what it reads of the queue's pause is the worker's to heed. */
  private async claim(limit: number, options: ClaimOptions): Promise<{ entries: HeldJob[]; result: ClaimResult }> {
    const claimed = await this.claimer.claim(limit, options);
    this.paused = claimed.result.paused;
    return claimed;
  }

  private storeError(operation: string, error: unknown): void {
    this.deps.logger.error("store.error", { queue: this.config.name, operation, error: errorText(error) });
  }
}
