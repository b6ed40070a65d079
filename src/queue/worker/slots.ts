import type { Clock, TimerHandle } from "../../core/clock.js";
import type { QueueStore, SlotHold } from "../store/store.js";

export interface SlotDeps {
  store: QueueStore;
  clock: Clock;
  queue: string;
  workerId: string;
  /** The queue's globalConcurrency: what the holds of every worker add up to at most. */
  cap: number;
  /** The job lease: a hold lasts a quarter longer unrenewed (see send). */
  leaseMs: number;
  /** How many to hold at the next renewal (fewer than held lets the rest go to other processes). */
  renewWant: () => number;
  /** An answer changed what the worker holds: it may start jobs, or ask again. */
  changed: () => void;
  storeError: (operation: string, error: unknown) => void;
}

/**
 * A worker's share of its queue's globalConcurrency: the slots it holds in the store, renewed every
 * quarter of the lease while it holds any. The worker starts no more jobs at once than it holds, so
 * the jobs it claims beyond them (prefetch) hold nothing other processes count. A hold that lapsed
 * unrenewed (this process stalled past it) counts as none here, since other workers may hold its
 * slots by now.
 */
export class Slots {
  private held = 0;
  private until = 0;
  private fairShare: number;
  /** Requests go one at a time, in order: a later one must not be overtaken by an earlier answer. */
  private tail: Promise<unknown> = Promise.resolve();
  private inFlight = 0;
  private askedAt = -Infinity;
  private timer: TimerHandle | undefined;
  private letGoTimer: TimerHandle | undefined;
  private stopped = false;

  constructor(private readonly deps: SlotDeps) {
    this.fairShare = deps.cap;
  }

  /** Slots this worker holds now. */
  get count(): number {
    return this.deps.clock.now() <= this.until ? this.held : 0;
  }

  /**
   * How many jobs it may run at once: what it holds, and no more than its share while another
   * worker waits for one (it gives back the rest as its jobs finish: see `giveBack`).
   */
  get usable(): number {
    return Math.min(this.count, this.fairShare);
  }

  /** Lets go of what this worker holds beyond its share and beyond the `running` jobs it still runs. */
  giveBack(running: number): void {
    const keep = Math.max(running, this.fairShare);
    if (this.inFlight === 0 && this.count > keep) this.set(keep).catch((error) => this.deps.storeError("holdSlots", error));
  }

  /**
   * Whether to ask for more before claiming: it holds fewer than `want` and than its share, nothing
   * is asked yet, and it holds none (nothing can start without one) or its last ask is `everyMs` old
   * (another process may have let some go since).
   */
  shouldAsk(want: number, everyMs: number): boolean {
    const count = this.count;
    return this.inFlight === 0 && count < Math.min(want, this.fairShare) && (count === 0 || this.deps.clock.now() - this.askedAt >= everyMs);
  }

  /**
   * Asks to hold `want` slots; 0 lets go of all. Fewer than held count from now on, before the store
   * answers: the store may give the rest to another process the moment it has the request, and a job
   * started here meanwhile would run beyond the cap.
   */
  set(want: number): Promise<SlotHold> {
    if (want < this.held) this.held = want;
    this.inFlight++;
    const sent = this.tail.then(() => this.send(want)).finally(() => this.inFlight--);
    this.tail = sent.catch(() => {});
    return sent;
  }

  /**
   * A worker with nothing to run and nothing due keeps its slots `afterMs` (the next job of a trickle
   * finds them held), then lets them go to the other processes if it is `stillIdle()` then.
   */
  linger(afterMs: number, stillIdle: () => boolean): void {
    if (this.letGoTimer || this.count === 0) return;
    this.letGoTimer = this.deps.clock.setTimeout(() => {
      this.letGoTimer = undefined;
      if (stillIdle()) this.set(0).catch((error) => this.deps.storeError("holdSlots", error));
    }, afterMs);
  }

  /** The worker is busy again: what it holds stays held. */
  keep(): void {
    if (this.letGoTimer) this.deps.clock.clearTimeout(this.letGoTimer);
    this.letGoTimer = undefined;
  }

  /** Lets go of every slot and renews no more. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    this.keep();
    if (this.held > 0 || this.inFlight > 0) await this.set(0).catch((error) => this.deps.storeError("holdSlots", error));
  }

  private async send(want: number): Promise<SlotHold> {
    const { store, clock, queue, workerId, cap, leaseMs } = this.deps;
    const now = clock.now();
    this.askedAt = now;
    // Holds and job leases are renewed every quarter of a lease, each on its own timer: a hold that
    // lasts a quarter longer than a lease outlives every lease renewed before it stopped, so a dead
    // worker's slots come back no sooner than the jobs it was running could be handed to another.
    const until = now + leaseMs + leaseMs / 4;
    const hold = await store.holdSlots({ queue, workerId, want: this.stopped ? 0 : want, cap, now, until });
    this.held = hold.held;
    this.until = until;
    this.fairShare = hold.share;
    this.clearTimer();
    if (this.held > 0 && !this.stopped) this.timer = this.deps.clock.setTimeout(() => this.renew(), leaseMs / 4);
    this.deps.changed();
    return hold;
  }

  private renew(): void {
    this.timer = undefined;
    this.set(this.deps.renewWant()).catch((error) => this.deps.storeError("holdSlots", error));
  }

  private clearTimer(): void {
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
