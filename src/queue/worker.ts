import type { Clock, TimerHandle } from "../core/clock.js";
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
import { setStarted } from "./rows.js";
import { SlotOffer } from "./offers.js";
import { RateLimiter } from "./rate-limit.js";
import { Slots } from "./slots.js";
import type { ClaimHold, ClaimLimits, ClaimResult, HandedJobs, QueueStore } from "./store.js";

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
export class QueueWorker {
  readonly workerId: string;
  /** Running, prefetched and promised jobs: the one count of this worker's capacity. */
  private readonly holdings = new Holdings();
  /** A batch queue's jobs waiting for their batch to fill (they count as running). */
  private readonly gathering: HeldJob[] = [];
  private gatherTimer: TimerHandle | undefined;
  private readonly outcomes: OutcomeBatcher;
  private readonly executor: JobExecutor;
  private readonly leases: Leases;
  private readonly limiter: RateLimiter;
  /** This worker's share of the queue's globalConcurrency, when it has one. */
  private readonly slots: Slots | null;
  /** The limits the store's claim applies: all but globalConcurrency, which the slots hold. */
  private readonly claimLimits: ClaimLimits | undefined;
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
  /**
   * Groups with a job running here, on a queue of groupConcurrency 1 (null otherwise). A claim may
   * hand this worker several jobs of one group (SERIAL_DEPTH), and only this worker runs them: it
   * starts a group's next one when the one before has ended.
   */
  private readonly busyGroups: Set<string> | null;
  /** The last ask for slots got fewer than the worker could run, with jobs due: the cap holds it back. */
  private slotsShort = false;
  /** Lets go of the slots of a worker that stayed idle (see lingerSlots). */
  private letGoTimer: TimerHandle | undefined;
  private active = false;
  /** wake() was called since the last runDue ended (see hasNewWork). */
  private wokenSinceRun = false;
  private stopping = false;
  private claiming = false;
  /** The claim in flight, which stop() waits for: its jobs must be handed back before the store closes. */
  private claimInFlight: Promise<void> | null = null;
  private wokenDuringClaim = false;
  /** The next-wake-up query in flight, which stop() waits for: the store must not close under it. */
  private idleCheck: Promise<unknown> | null = null;
  private exhausted = false;
  private idleTimer: TimerHandle | undefined;
  /** Wakes the worker when its rate-limit window reopens (see armRateWake). */
  private rateTimer: TimerHandle | undefined;
  private idleAt = 0;
  /** The queue is paused (the last claim said so): no claims until a wake-up or a poll. */
  private paused = false;
  /** Pauses heard while a claim was on its way (null: the whole queue): applied to what it brings. */
  private readonly pausedDuringClaim: (string | null)[] = [];
  /** Where the next claim of a grouped queue starts its round-robin (after this group). */
  private cursor: string | null = null;
  /** What held the last claim back, logged once per change (`queue.throttled`). */
  private lastHold: ClaimHold | null = null;
  /** This worker's offer of its free slots to other processes' enqueues, when the store takes offers (see SlotOffer). */
  private readonly offer: SlotOffer | null;
  /** How much to claim and keep in hand, from the moving averages of a job's run and a claim's round trip. */
  private readonly window: ClaimWindow;
  /** When this worker last let the event loop run: a yield, or the end of its last busy spell. */
  private lastYield = Date.now();

  constructor(
    readonly config: QueueConfig,
    private readonly deps: WorkerDeps,
  ) {
    const { store, clock, logger } = deps;
    this.workerId = `${deps.instanceId}/${config.name}`;
    this.window = new ClaimWindow(config);
    // Outcomes written: a queue held at a concurrency limit has a slot free in the store only now.
    this.outcomes = new OutcomeBatcher(
      store,
      this.workerId,
      () => clock.now(),
      () => {
        if (this.lastHold === "globalConcurrency" || this.lastHold === "groupConcurrency") this.exhausted = false;
        this.pump();
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
      retryScheduled: (at) => this.wakeBy(at),
      ended: (id) => deps.waits.signal(id),
    });
    this.leases = new Leases({
      store, clock, logger, workerId: this.workerId, leaseMs: config.leaseMs, outcomes: this.outcomes,
      services: { report: (job, value) => progress.report(job, value), childResults: (job) => (job.children ? store.childResults({ id: job.id }) : Promise.resolve([])) },
      held: () => this.holdings.held(),
      lost: (entry) => this.holdings.forget(entry),
      storeError: (operation, error) => this.storeError(operation, error),
    });
    this.limiter = new RateLimiter(config.rateLimit, clock);
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
    this.claimLimits = rest.grouped || rest.buckets.length > 0 ? rest : undefined;
    this.paced = rest.buckets.length > 0 || rest.groupRate !== undefined;
    this.grouped = rest.grouped;
    this.busyGroups = rest.groupConcurrency === 1 && !config.batch ? new Set() : null;
    this.slots =
      globalConcurrency === undefined
        ? null
        : new Slots({
            store, clock, queue: config.name, workerId: this.workerId, cap: globalConcurrency, leaseMs: config.leaseMs,
            // An idle worker keeps only what it runs and holds; a busy one keeps asking for all it could run.
            renewWant: () =>
              !this.active ? this.holdings.runningCount : this.exhausted ? Math.min(config.concurrency, this.holdings.inHand) : config.concurrency,
            changed: () => this.pump(),
            storeError: (operation, error) => this.storeError(operation, error),
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
    return { running: this.holdings.runningCount, prefetched: this.holdings.prefetchedCount, batch: this.window.batch, active: this.active, paused: this.paused, heldBy: this.lastHold, slots: this.slots?.count ?? null };
  }

  // ---- continuous driver -------------------------------------------------------------------

  start(): void {
    this.active = true;
    this.pump();
  }

  /** Something may be due: an enqueue here, a notification, a rescue. */
  wake(): void {
    this.wokenSinceRun = true;
    if (!this.active || this.stopping) return;
    this.wokenDuringClaim = true;
    this.exhausted = false;
    this.clearIdle();
    this.pump();
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
    if (!this.active || this.stopping || !this.exhausted || this.claiming || this.config.limits || this.paused) return null;
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
        if (this.stopping || !this.active) return entries.forEach((entry) => this.leases.release(entry));
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
    if (this.stopping || !this.active) return entries.forEach((entry) => this.leases.release(entry));
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
    this.stopping = true;
    this.clearIdle();
    this.clearRateWake();
    // A claim may still be on its way (or yielding before it starts); it releases what it gets.
    await this.claimInFlight;
    await this.idleCheck;
    // The offer is withdrawn first: jobs handed here that were not heard of go back with the rest.
    if (this.offer) this.takeHanded(await this.offer.stop());
    for (const entry of this.holdings.takeBack()) this.leases.release(entry);
    // A batch still gathering runs now with what it has: no more jobs are coming.
    while (this.gathering.length) this.runGathered();
    if (this.holdings.runningCount) {
      await waitAtMost(this.deps.clock, graceMs, this.holdings.drained());
      for (const entry of this.holdings.runningJobs()) {
        entry.ctx.abort(new JobAbortedError("shutdown", `shutdown grace of ${graceMs} ms ran out`));
        this.leases.release(entry);
      }
    }
    await this.outcomes.drain().catch((error) => this.storeError("settle", error));
    this.leases.stop();
    this.clearLetGo();
    await this.slots?.stop();
    this.active = false;
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
    if (this.claiming) this.pausedDuringClaim.push(group);
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
    if (!this.active || this.stopping) return;
    const capacity = this.capacity;
    this.launchBuffered(capacity);
    this.slots?.giveBack(this.holdings.runningCount);
    // Slots free, nothing prefetched, a claim or the last batch's outcomes still on their way, and jobs
    // that take less than a round trip: move more per statement (a batch costs one statement whatever
    // its size). Jobs slower than a round trip keep the batch small, so prefetch never hoards them.
    const waiting = this.claiming || this.outcomes.size > 0;
    if (waiting && !this.exhausted && this.holdings.prefetchedCount === 0 && this.holdings.runningCount < capacity && this.window.fasterThanRoundTrip) this.window.grow();
    if (this.claiming || this.exhausted) {
      // Idle: nothing due that this worker knows of. Other processes' enqueues may fill its free slots.
      if (this.exhausted && !this.claiming && !this.paused) this.offer?.idle();
      else this.offer?.fit();
      return this.lingerSlots();
    }
    this.offer?.fit();
    this.clearLetGo();
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
    const shape = { capacity, groupedAhead, depth: groupedAhead && this.busyGroups ? SERIAL_DEPTH : 1, limited: this.paced || this.grouped };
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
    if (want > 0 && room === 0) this.armRateWake();
    if (unrecorded > 0 && this.holdings.runningCount === 0) this.outcomes.flushNow();
  }

  /**
   * The window's starts are spent and slots are free: nothing else (no job finishing, no enqueue) may
   * come to start the jobs still due, so the worker wakes itself when the window reopens.
   */
  private armRateWake(): void {
    if (this.rateTimer) return;
    const wait = this.limiter.wait(this.deps.clock.now());
    this.rateTimer = this.deps.clock.setTimeout(() => {
      this.rateTimer = undefined;
      this.pump();
    }, Math.max(1, wait));
  }

  /**
   * Asks for the slots of a globalConcurrency this worker could fill. None to be had while jobs are
   * due: other processes hold them all, and none of theirs sends a wake-up when it lets one go, so
   * the worker asks again after a short wait.
   */
  private async askSlots(): Promise<void> {
    this.claiming = true;
    let heldUntil: number | null = null;
    try {
      const { held, due } = await this.slots!.set(this.config.concurrency);
      this.slotsShort = held < this.config.concurrency && due;
      if (held === 0) {
        this.exhausted = true;
        if (due) {
          this.noteHold("globalConcurrency", 0, this.config.concurrency);
          heldUntil = this.deps.clock.now() + HOLD_POLL_MS;
        }
      }
    } catch (error) {
      this.storeError("holdSlots", error);
      this.exhausted = true;
    } finally {
      this.claiming = false;
    }
    this.pump();
    this.sleepIfExhausted(heldUntil);
  }

  /**
   * A worker with nothing to run and nothing due keeps its slots a little while (the next job of a
   * trickle finds them held), then lets them go to the other processes.
   */
  private lingerSlots(): void {
    if (!this.slots || this.letGoTimer || !this.exhausted || this.claiming) return;
    if (this.holdings.inHand || this.slots.count === 0) return;
    this.letGoTimer = this.deps.clock.setTimeout(() => {
      this.letGoTimer = undefined;
      if (this.exhausted && !this.claiming && !this.holdings.runningCount && !this.holdings.prefetchedCount && !this.stopping) {
        this.slots!.set(0).catch((error) => this.storeError("holdSlots", error));
      }
    }, HOLD_POLL_MS);
  }

  private clearLetGo(): void {
    if (this.letGoTimer) this.deps.clock.clearTimeout(this.letGoTimer);
    this.letGoTimer = undefined;
  }

  private async claimBatch(limit: number, serialDepth: number): Promise<void> {
    this.claiming = true;
    this.wokenDuringClaim = false;
    let held: number | null = null;
    try {
      await this.yieldIfBusy();
      const sent = performance.now();
      // The jobs that fit the free slots start at the claim; the rest are held, started as slots free.
      const start = Math.max(0, this.capacity - this.holdings.runningCount - this.holdings.prefetchedCount);
      const { entries: jobs, result } = await this.claim(limit, { serialDepth, start });
      this.window.claimReturned(performance.now() - sent);
      if (this.stopping) {
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
          this.exhausted = true;
          held = this.holdUntil(result);
        }
      } else if (jobs.length < limit && !this.wokenDuringClaim) {
        // A wake-up that arrived while the claim was in flight may be for a job the claim's snapshot missed.
        this.exhausted = true;
        // The backlog is gone: start small again next time.
        this.window.reset();
      }
    } catch (error) {
      this.storeError("claim", error);
      this.exhausted = true;
    } finally {
      this.claiming = false;
    }
    this.pump();
    this.sleepIfExhausted(held);
  }

  /**
   * After a claim or an ask for slots that left the worker with nothing to start: sleep until
   * `heldUntil` when a limit holds due jobs back (unless an earlier wake-up is set), otherwise until
   * the next due job or poll.
   */
  private sleepIfExhausted(heldUntil: number | null): void {
    if (!this.exhausted) return;
    if (heldUntil === null) void this.armIdle();
    else if (!this.stopping && (!this.idleTimer || this.idleAt > heldUntil)) this.setIdleTimer(heldUntil);
  }

  /**
   * With a synchronous store (SQLite) and fast handlers, claim, run and record can chain through
   * microtasks for a whole backlog without ever returning to the event loop, starving timers
   * (heartbeats, rescues) and I/O. Every 20 ms of such work, step out for one macrotask.
   */
  private async yieldIfBusy(): Promise<void> {
    const now = Date.now();
    if (now - this.lastYield < 20) return;
    await new Promise((resolve) => setTimeout(resolve, 0));
    this.lastYield = Date.now();
  }

  /** Sleeps until the next due job, a lease to rescue, or the poll interval, whichever is first. */
  private async armIdle(): Promise<void> {
    if (this.idleTimer || this.stopping) return;
    const now = this.deps.clock.now();
    let wait = this.deps.pollIntervalMs;
    try {
      // Leases are left out: a lapsed lease is the rescuer's to handle, and waking for one here
      // would spin on empty claims until the rescuer's next pass.
      const asked = this.deps.store.nextWakeAt({ queues: [this.config.name], leases: false });
      this.idleCheck = asked.catch(() => {});
      const next = await asked;
      if (next !== null) wait = Math.min(wait, Math.max(0, next - now));
    } catch (error) {
      this.storeError("nextWakeAt", error);
    }
    const rateWait = this.limiter.wait(now);
    if (rateWait > 0) wait = Math.max(wait, rateWait);
    if (!this.exhausted || this.idleTimer || this.stopping) return;
    this.setIdleTimer(now + wait);
  }

  private setIdleTimer(at: number): void {
    this.clearIdle();
    // Idle is not busy: the next claim after a wake-up starts a fresh spell rather than paying for a
    // yield (a macrotask, a millisecond or more) on the way to a job someone is waiting for.
    this.lastYield = Date.now();
    this.idleAt = at;
    this.idleTimer = this.deps.clock.setTimeout(() => {
      this.idleTimer = undefined;
      this.exhausted = false;
      this.pump();
    }, at - this.deps.clock.now());
  }

  /** A retry this worker just scheduled must not wait for an idle timer armed before it existed. */
  private wakeBy(at: number): void {
    if (this.active && !this.stopping && this.exhausted && (!this.idleTimer || this.idleAt > at)) this.setIdleTimer(at);
  }

  private clearIdle(): void {
    if (this.idleTimer) this.deps.clock.clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private clearRateWake(): void {
    if (this.rateTimer) this.deps.clock.clearTimeout(this.rateTimer);
    this.rateTimer = undefined;
  }

  /**
   * Starts prefetched jobs in claim order while slots are free, passing over a job whose group has
   * one running here (under groupConcurrency 1): it starts when that one ends.
   */
  private launchBuffered(capacity: number): void {
    this.holdings.launchPrefetched(capacity, this.busyGroups, this.launchOne);
  }

  /** `launch`, bound once: pump hands it to the holdings on every job's end. */
  private readonly launchOne = (entry: HeldJob): void => this.launch(entry);

  private launch(entry: HeldJob): void {
    // Prefetched while this process was stalled (a long synchronous handler, a frozen process) past
    // its lease: the store may have given it to another worker already, so it is handed back, never
    // started here (the release is fenced: refused if another worker holds it now).
    if (entry.job.lease && entry.job.lease.until <= this.deps.clock.now()) return this.leases.release(entry, "lease_lapsed");
    this.holdings.started(entry);
    if (this.busyGroups && entry.job.group !== null) this.busyGroups.add(entry.job.group);
    // Held without starting (prefetched, or handed over by another process): its start is written
    // with the next outcomes, or with its own (see OutcomeBatcher).
    if (entry.job.startedAt === null) {
      const now = this.deps.clock.now();
      setStarted(entry.job, now);
      this.outcomes.started(entry.job.id, entry.job.attempts, now);
    }
    if (this.config.batch) return this.gather(entry);
    const started = performance.now();
    void this.executor.run(entry).then((outcome) => {
      this.window.jobRan(performance.now() - started);
      this.ended(entry);
      if (!entry.released) this.executor.settle(entry.job, outcome).catch((error) => this.storeError("settle", error));
      this.pump();
    });
  }

  /** A launched job is over here: its slot, and its group's under groupConcurrency 1, are free. */
  private ended(entry: HeldJob): void {
    this.holdings.ended(entry);
    if (this.busyGroups && entry.job.group !== null) this.busyGroups.delete(entry.job.group);
  }

  /**
   * A batch queue's job joins the batch being gathered: it runs when the batch is full, or `wait`
   * after its first job joined.
   */
  private gather(entry: HeldJob): void {
    const { size, waitMs } = this.config.batch!;
    this.holdings.started(entry);
    this.gathering.push(entry);
    if (this.gathering.length >= size) this.runGathered();
    else this.gatherTimer ??= this.deps.clock.setTimeout(() => this.runGathered(), waitMs);
  }

  private runGathered(): void {
    if (this.gatherTimer) this.deps.clock.clearTimeout(this.gatherTimer);
    this.gatherTimer = undefined;
    const entries = this.gathering.splice(0, this.config.batch!.size);
    if (entries.length === 0) return;
    const started = performance.now();
    void this.executor.runBatch(entries).then((outcomes) => {
      this.window.jobRan((performance.now() - started) / entries.length);
      entries.forEach((entry, i) => {
        this.holdings.ended(entry);
        if (!entry.released) this.executor.settle(entry.job, outcomes[i]!).catch((error) => this.storeError("settle", error));
      });
      this.pump();
    });
    if (this.gathering.length) this.gatherTimer = this.deps.clock.setTimeout(() => this.runGathered(), this.config.batch!.waitMs);
  }

  // ---- tick driver -------------------------------------------------------------------------

  /**
   * Claims and runs due jobs, batch after batch, until none is due or `budget` jobs have run.
   * `heldUntil`: due jobs wait on a limit (a rate window, a token, a slot another process holds) or a
   * pause; the pass looks again then rather than at the store's due times.
   */
  async runDue(budget: number): Promise<{ ran: number; more: boolean; heldUntil?: number }> {
    try {
      return await this.runDueBatches(budget);
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

  private async runDueBatches(budget: number): Promise<{ ran: number; more: boolean; heldUntil?: number }> {
    try {
      return await this.runDueHolding(budget);
    } finally {
      // A tick holds its slots only while it runs: between ticks another engine may need them.
      if (this.slots && !this.active) await this.slots.set(0);
    }
  }

  private async runDueHolding(budget: number): Promise<{ ran: number; more: boolean; heldUntil?: number }> {
    let ran = 0;
    while (ran < budget) {
      const asked = this.limiter.allowance(Math.min(this.config.concurrency * (this.config.batch?.size ?? 1), budget - ran));
      if (asked === 0) {
        const now = this.deps.clock.now();
        return { ran, more: false, heldUntil: now + this.limiter.wait(now) };
      }
      let limit = asked;
      let cutBySlots = false;
      if (this.slots) {
        const { held, due } = await this.slots.set(asked);
        if (held < asked && !due) return { ran, more: false };
        if (held === 0) {
          this.noteHold("globalConcurrency", 0, asked);
          return { ran, more: false, heldUntil: this.deps.clock.now() + HOLD_POLL_MS };
        }
        limit = held;
        cutBySlots = held < asked;
      }
      const { entries, result } = await this.claim(limit, { asked, cutBySlots });
      await Promise.all(this.config.batch ? this.runBatches(entries) : entries.map((entry) => this.runOne(entry)));
      await this.outcomes.drain();
      ran += entries.length;
      if (result.held && entries.length < limit) {
        // A group at its limit leaves the others' jobs to the next batch; nothing at all started: wait.
        if (entries.length > 0) continue;
        return { ran, more: false, heldUntil: this.holdUntil(result) };
      }
      if (entries.length < limit) return { ran, more: false };
    }
    return { ran, more: true };
  }

  private async runOne(entry: HeldJob): Promise<void> {
    this.holdings.started(entry);
    const outcome = await this.executor.run(entry);
    this.holdings.ended(entry);
    await this.executor.settle(entry.job, outcome);
  }

  /** A tick's claimed jobs of a batch queue, in batches of its size (a tick waits for nothing more). */
  private runBatches(entries: HeldJob[]): Promise<void>[] {
    const { size } = this.config.batch!;
    const batches: Promise<void>[] = [];
    for (let at = 0; at < entries.length; at += size) {
      const batch = entries.slice(at, at + size);
      for (const entry of batch) this.holdings.started(entry);
      batches.push(
        this.executor.runBatch(batch).then(async (outcomes) => {
          for (const entry of batch) this.holdings.ended(entry);
          await Promise.all(batch.map((entry, i) => this.executor.settle(entry.job, outcomes[i]!)));
        }),
      );
    }
    return batches;
  }

  // ---- shared ------------------------------------------------------------------------------

  /**
   * `cutBySlots`: the worker holds fewer slots of a globalConcurrency than it could fill, with jobs
   * due, so a claim that got all it asked for was held back by the cap; `asked` is what the worker
   * would have claimed without it.
   */
  private async claim(limit: number, { asked = limit, cutBySlots = this.slotsShort, serialDepth = 1, start = limit } = {}): Promise<{ entries: HeldJob[]; result: ClaimResult }> {
    const now = this.deps.clock.now();
    const leaseUntil = now + this.config.leaseMs;
    const result = await this.deps.store.claim({
      queue: this.config.name,
      limit,
      now,
      leaseUntil,
      workerId: this.workerId,
      queueMaxAttempts: this.config.maxAttempts,
      limits: this.claimLimits,
      after: this.cursor,
      ...(serialDepth > 1 ? { serialDepth } : {}),
      ...(start < limit ? { start } : {}),
    });
    this.cursor = result.cursor;
    this.paused = result.paused;
    this.noteHold(result.jobs.length < limit ? result.held : cutBySlots ? "globalConcurrency" : null, result.jobs.length, asked, result.retryAt);
    // How long each started job waited since it was due: the time spent on the queue's limits.
    if (this.config.limits && result.jobs.length) this.deps.logger.debug("queue.limited_claim", { queue: this.config.name, started: result.jobs.length, waitedMs: result.jobs.map((j) => Math.max(0, now - j.runAt)) });
    this.limiter.started(result.jobs.length);
    // A job held here already (a renewal of the offer read it as handed while the claim was on its
    // way) is held once.
    return { entries: this.leases.hold(result.jobs.filter((job) => !this.holdings.holds(job.id)), leaseUntil), result };
  }

  /** Logs what holds the queue's claims back, once per change (`queue.throttled`, `queue.unthrottled`). */
  private noteHold(hold: ClaimHold | null, started: number, asked: number, until: number | null = null): void {
    if (hold === this.lastHold) return;
    if (hold) this.deps.logger.info("queue.throttled", { queue: this.config.name, by: hold, started, asked, ...(until !== null ? { until } : {}) });
    else if (this.lastHold) this.deps.logger.info("queue.unthrottled", { queue: this.config.name, was: this.lastHold });
    this.lastHold = hold;
  }

  /**
   * When a worker whose due jobs wait on a limit looks again: when a token comes back; after a poll
   * for a pause (a resume wakes workers itself); soon for a slot another process frees, which sends
   * no wake-up.
   */
  private holdUntil(result: ClaimResult): number {
    const now = this.deps.clock.now();
    if (result.retryAt !== null) return result.retryAt;
    return now + (result.held === "paused" ? this.deps.pollIntervalMs : HOLD_POLL_MS);
  }

  private storeError(operation: string, error: unknown): void {
    this.deps.logger.error("store.error", { queue: this.config.name, operation, error: errorText(error) });
  }
}
