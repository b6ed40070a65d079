import type { Clock } from "../../core/clock.js";
import { waitAtMost } from "../../core/timeout.js";
import type { ClaimWindow } from "./claim-window.js";
import type { Claimer, ClaimOptions } from "./claimer.js";
import { JobAbortedError } from "../errors.js";
import type { Holdings } from "./holdings.js";
import type { HeldJob, Leases } from "./leases.js";
import type { Handoffs, HandoffState } from "./handoffs.js";
import type { QueueConfig } from "../options.js";
import type { OutcomeBatcher } from "./outcomes.js";
import type { RateLimiter } from "../flow-control/rate-limit.js";
import type { JobRunner } from "./runner.js";
import type { Slots } from "./slots.js";
import type { ClaimResult, QueueStore } from "../store/store.js";
import { WorkerSleep } from "./worker-sleep.js";

/**
 * How soon a worker held back by a concurrency limit looks again: a slot freed by another process
 * sends no wake-up (its own finishes pump at once). Also how long an idle worker keeps its share of a
 * globalConcurrency before letting go, so a trickle of jobs does not ask for slots for every one.
 */
export const HOLD_POLL_MS = 50;

/**
 * Jobs of one group a worker of fast jobs on a queue of groupConcurrency 1 takes per claim, and runs
 * one after another: a claim then walks a quarter of the groups for as many jobs.
 */
export const SERIAL_DEPTH = 4;

/** The worker's parts the continuous driver drives (see QueueWorker). */
export interface DriverParts {
  config: QueueConfig;
  /** Jobs the worker runs at once without a globalConcurrency: its concurrency, of batches for a batch queue. */
  jobsAtOnce: number;
  clock: Clock;
  store: QueueStore;
  workerId: string;
  /** Longest idle wait before looking for due jobs again (other processes' enqueues on SQLite). */
  pollIntervalMs: number;
  holdings: Holdings;
  leases: Leases;
  outcomes: OutcomeBatcher;
  runner: JobRunner;
  claimer: Claimer;
  limiter: RateLimiter;
  window: ClaimWindow;
  slots: Slots | null;
  /** Hand-offs bring jobs without a claim, while the driver is caught up (see Handoffs). */
  handoffs: Handoffs;
  /**
   * Starts are paced by tokens taken at the claim (a shared rate limit): a claimed job must start at
   * once, so the worker claims only for its free slots.
   */
  paced: boolean;
  /**
   * Claims take the groups round-robin, and a claimed job holds its group's slot in every process
   * from the claim on: a worker of slow jobs claims only for its free slots (see pump).
   */
  grouped: boolean;
  storeError: (operation: string, error: unknown) => void;
}

/**
 * What the driver is doing: `off` before start (a tick may drive the worker), `busy` with jobs to
 * claim or run, `claiming` while a claim or an ask for slots is on its way, `idle` when nothing it
 * could start is due (it sleeps until a wake-up), `stopping` from stop() on, `stopped` once stop()
 * has returned.
 */
export type WorkerState = "off" | "busy" | "claiming" | "idle" | "stopping" | "stopped";

/**
 * The worker's continuous driver (`start`): keeps `concurrency` jobs running, claims the next batch
 * while the current one runs (prefetch), takes jobs handed to it at their enqueue, and sleeps until a
 * wake-up (an enqueue, a notification, a due time, a poll).
 */
export class ContinuousDriver {
  private state: WorkerState = "off";
  /** The last ask for slots got fewer than the worker could run, with jobs due: the cap holds it back. */
  private slotsShort = false;
  /** The claim in flight, which stop() waits for: its jobs must be handed back before the store closes. */
  private claimInFlight: Promise<void> | null = null;
  private wokenDuringClaim = false;
  /** The queue is paused (the last claim said so): no claims until a wake-up or a poll. */
  private paused = false;
  /** Pauses heard while a claim was on its way (null: the whole queue): applied to what it brings. */
  private readonly pausedDuringClaim: (string | null)[] = [];
  private readonly sleep: WorkerSleep;

  constructor(private readonly p: DriverParts) {
    this.sleep = new WorkerSleep({
      clock: p.clock, store: p.store, queue: p.config.name, pollIntervalMs: p.pollIntervalMs, limiter: p.limiter,
      exhausted: () => this.state === "idle", stopping: () => !this.working,
      wake: () => this.busyAgain(), pump: () => this.pump(),
      storeError: p.storeError,
    });
  }

  /** Started and not stopped (or not stopping): it is claiming, running or sleeping. */
  get active(): boolean {
    return this.state !== "off" && this.state !== "stopped";
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** A retry this worker just scheduled must not wait for an idle timer armed before it existed. */
  wakeBy(at: number): void {
    this.sleep.wakeBy(at);
  }

  /**
   * Outcomes written: a queue held at a concurrency limit has a slot free in the store only now, so an
   * idle worker held by one looks again.
   */
  outcomesWritten(): void {
    const held = this.p.claimer.heldBy;
    if (held === "globalConcurrency" || held === "groupConcurrency") this.busyAgain();
    else this.pump();
  }

  /** How many slots of a globalConcurrency to keep at a renewal: what it runs and holds when idle, all it could run when busy. */
  slotsWanted(): number {
    const { holdings, config } = this.p;
    if (!this.active) return holdings.runningCount;
    return this.state === "idle" || this.state === "stopping" ? Math.min(config.concurrency, holdings.inHand) : config.concurrency;
  }

  /**
   * Jobs this worker may run at once: its concurrency (of batches, for a batch queue), within the
   * slots it holds of a globalConcurrency.
   */
  private get capacity(): number {
    const { jobsAtOnce, slots } = this.p;
    return slots ? Math.min(jobsAtOnce, slots.usable) : jobsAtOnce;
  }

  start(): void {
    if (this.state === "off") this.state = "busy";
    this.pump();
  }

  /** Something may be due: an enqueue here, a notification, a rescue. */
  wake(): void {
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

  /** Where the driver stands, as a hand-off asks (see Handoffs). */
  get handoffState(): HandoffState {
    return { working: this.working, caughtUp: this.state === "idle", paused: this.paused };
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
    await this.p.handoffs.stop();
    for (const entry of this.p.holdings.takeBack()) this.p.leases.release(entry);
    // A batch still gathering runs now with what it has: no more jobs are coming.
    this.p.runner.flush();
    if (this.p.holdings.runningCount) {
      await waitAtMost(this.p.clock, graceMs, this.p.holdings.drained());
      for (const entry of this.p.holdings.runningJobs()) {
        entry.ctx.abort(new JobAbortedError("shutdown", `shutdown grace of ${graceMs} ms ran out`));
        this.p.leases.release(entry);
      }
    }
    await this.p.outcomes.drain().catch((error) => this.p.storeError("settle", error));
    this.p.leases.stop();
    await this.p.slots?.stop();
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
      this.p.handoffs.busy();
    }
    // A claim on its way read the queue before the pause: what it brings back is handed back too.
    if (this.state === "claiming") this.pausedDuringClaim.push(group);
    this.handBack(group);
  }

  /** Hands back the prefetched jobs of a paused queue (group null) or group. */
  private handBack(group: string | null): void {
    for (const entry of this.p.holdings.takeBack(group)) this.p.leases.release(entry, "paused");
  }


  /** Starts what the free slots may run and claims what the window wants: called whenever that may have changed. */
  pump(): void {
    if (!this.working) return;
    const capacity = this.capacity;
    // Prefetched jobs start in claim order while slots are free; under groupConcurrency 1 a job whose
    // group has one running here waits for it to end.
    this.p.holdings.launchPrefetched(capacity, this.p.runner.busyGroups, this.p.runner.launch);
    this.p.slots?.giveBack(this.p.holdings.runningCount);
    // Slots free, nothing prefetched, a claim or the last batch's outcomes still on their way, and jobs
    // that take less than a round trip: move more per statement (a batch costs one statement whatever
    // its size). Jobs slower than a round trip keep the batch small, so prefetch never hoards them.
    const waiting = this.state === "claiming" || this.p.outcomes.size > 0;
    if (waiting && this.state !== "idle" && this.p.holdings.prefetchedCount === 0 && this.p.holdings.runningCount < capacity && this.p.window.fasterThanRoundTrip) this.p.window.grow();
    if (this.state === "claiming" || this.state === "idle") {
      // Idle: nothing due that this worker knows of. Other processes' enqueues may fill its free slots.
      if (this.state === "idle" && !this.paused) this.p.handoffs.idle();
      else this.p.handoffs.fit();
      return this.lingerSlots();
    }
    this.p.handoffs.fit();
    this.p.slots?.keep();
    if (this.p.slots?.shouldAsk(this.p.config.concurrency, HOLD_POLL_MS)) {
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
    const groupedAhead = this.p.grouped && !this.p.paced && this.p.window.fasterThanRoundTrip;
    const shape = { capacity, groupedAhead, depth: groupedAhead && this.p.runner.busyGroups ? SERIAL_DEPTH : 1, limited: this.p.paced || this.p.grouped };
    // Outcomes waiting to be written count against the window of jobs faster than a round trip:
    // claiming stops until they are on their way, which bounds what a crash can make run twice and
    // keeps fast handlers from starving the writes. Slower jobs cannot starve the writes, and a batch
    // of them started together ends together: counted, their outcomes would hold the next claim until
    // they were written, and every slot would sit idle for a write and a claim.
    const unrecorded = this.p.window.fasterThanRoundTrip ? this.p.outcomes.size : 0;
    const want = Math.min(this.p.window.batch, this.p.holdings.free(this.p.window.inHand(shape)) - unrecorded);
    const room = this.p.limiter.allowance(want);
    // A claim waits until a quarter of a batch is free, so it is worth its round trip; but when the rate
    // limit is what holds it back, what the window has left is all it will ever get: claim that.
    if (room >= this.p.window.worthClaiming(shape) || (room > 0 && room < want)) {
      this.claimInFlight = this.claimBatch(room, shape.depth);
      return;
    }
    if (want > 0 && room === 0) {
      // The queue's rateLimit in this process holds it back: a hold like the store's limits'.
      const now = this.p.clock.now();
      this.p.claimer.noteHold("rateLimit", 0, want, now + this.p.limiter.wait(now));
      this.sleep.untilRateWindow();
    }
    if (unrecorded > 0 && this.p.holdings.runningCount === 0) this.p.outcomes.flushNow();
  }

  /**
   * Asks for the slots of a globalConcurrency this worker could fill. None to be had while jobs are
   * due: other processes hold them all, and none of theirs sends a wake-up when it lets one go, so
   * the worker asks again after a short wait.
   */
  private askSlots(): Promise<void> {
    return this.round("holdSlots", async () => {
      const { concurrency } = this.p.config;
      const { held, due } = await this.p.slots!.set(concurrency);
      this.slotsShort = held < concurrency && due;
      if (held > 0) return { idle: false, heldUntil: null };
      if (!due) return { idle: true, heldUntil: null };
      this.p.claimer.noteHold("globalConcurrency", 0, concurrency);
      return { idle: true, heldUntil: this.p.clock.now() + HOLD_POLL_MS };
    });
  }

  /** A worker with nothing to run and nothing due lets its slots go after a while (see Slots.linger). */
  private lingerSlots(): void {
    if (!this.p.slots || this.state !== "idle" || this.p.holdings.inHand) return;
    this.p.slots.linger(HOLD_POLL_MS, () => this.state === "idle" && !this.p.holdings.inHand);
  }

  private claimBatch(limit: number, serialDepth: number): Promise<void> {
    return this.round("claim", async () => {
      this.wokenDuringClaim = false;
      await this.sleep.yieldIfBusy();
      const sent = performance.now();
      // The jobs that fit the free slots start at the claim; the rest are held, started as slots free.
      const start = Math.max(0, this.capacity - this.p.holdings.runningCount - this.p.holdings.prefetchedCount);
      const { entries: jobs, result } = await this.claim(limit, { cutBySlots: this.slotsShort, serialDepth, start });
      this.p.window.claimReturned(performance.now() - sent);
      // Stopped meanwhile: what it brought goes back to pending.
      if (!this.working) {
        for (const entry of jobs) this.p.leases.release(entry);
        return { idle: false, heldUntil: null };
      }
      // Started ones first: they are the ones the free slots run now.
      this.p.holdings.prefetch([...jobs.filter((e) => e.job.startedAt !== null), ...jobs.filter((e) => e.job.startedAt === null)]);
      for (const group of this.pausedDuringClaim.splice(0)) {
        if (group === null) this.paused = true;
        this.handBack(group);
      }
      // A full claim: a backlog is waiting, and jobs handed over now would overtake it. The offer
      // lapses until the worker has caught up. A claim for jobs announced to it leaves the offer be.
      if (jobs.length >= limit) this.p.handoffs.busy();
      if (result.held && jobs.length < limit) {
        // Due jobs wait on a limit or a pause, not on time: look again when a token comes back, a
        // little later for a slot another process frees, and after a poll (or a resume's wake-up)
        // for a paused queue. The store's due times would say "now" and spin.
        // A grouped claim that started jobs passed over full or paused groups, not the queue's
        // limit: the groups after the cursor may have due jobs, and the next claim (which starts at
        // least one job or holds) goes on there.
        if (jobs.length === 0 || !this.p.grouped || this.p.paced) return { idle: true, heldUntil: this.p.claimer.holdUntil(result) };
      } else if (jobs.length < limit && !this.wokenDuringClaim) {
        // A wake-up that arrived while the claim was in flight may be for a job the claim's snapshot
        // missed; without one, the backlog is gone: start small again next time.
        this.p.window.reset();
        return { idle: true, heldUntil: null };
      }
      return { idle: false, heldUntil: null };
    });
  }

  /**
   * One round trip of the driver's (a claim, an ask for slots), `claiming` meanwhile. It comes back
   * idle (nothing it could start is due: it sleeps until `heldUntil`, when a limit holds due jobs
   * back, or until the next due job or poll), or busy; a store error leaves it idle until then too.
   */
  private async round(operation: string, body: () => Promise<{ idle: boolean; heldUntil: number | null }>): Promise<void> {
    this.state = "claiming";
    let outcome: { idle: boolean; heldUntil: number | null } = { idle: true, heldUntil: null };
    try {
      outcome = await body();
    } catch (error) {
      this.p.storeError(operation, error);
    } finally {
      this.claimed(outcome.idle);
    }
    this.pump();
    this.sleep.afterClaim(outcome.heldUntil);
  }

  /** A claim; what it reads of the queue's pause is the worker's to heed. */
  private async claim(limit: number, options: ClaimOptions): Promise<{ entries: HeldJob[]; result: ClaimResult }> {
    const claimed = await this.p.claimer.claim(limit, options);
    this.paused = claimed.result.paused;
    return claimed;
  }
}
