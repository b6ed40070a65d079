import type { Clock, TimerHandle } from "../../core/clock.js";
import type { RateLimiter } from "../flow-control/rate-limit.js";
import type { QueueStore } from "../store/store.js";

export interface SleepDeps {
  clock: Clock;
  store: QueueStore;
  queue: string;
  /** Longest idle wait before looking for due jobs again (other processes' enqueues on SQLite). */
  pollIntervalMs: number;
  limiter: RateLimiter;
  /** The worker found nothing it could start (its last claim came back short, or held back). */
  exhausted: () => boolean;
  stopping: () => boolean;
  /** The sleep is over: the worker looks for work again. */
  wake: () => void;
  /** The rate-limit window reopened: the worker starts what it may. */
  pump: () => void;
  storeError: (operation: string, error: unknown) => void;
}

/**
 * When an idle worker looks again: at the next due job, a limit's release, a retry scheduled here or
 * the poll interval, whichever is first; and when a worker whose rate window is spent starts again.
 */
export class WorkerSleep {
  private idleTimer: TimerHandle | undefined;
  private idleAt = 0;
  private rateTimer: TimerHandle | undefined;
  /** The next-wake-up query in flight, which the worker's stop waits for: the store must not close under it. */
  private check: Promise<unknown> | null = null;
  /** When the worker last let the event loop run: a yield, or the end of its last busy spell. */
  private lastYield = Date.now();

  constructor(private readonly deps: SleepDeps) {}

  /** Resolves once no next-wake-up query is on its way. */
  async settled(): Promise<void> {
    await this.check;
  }

  /**
   * After a claim or an ask for slots that left the worker with nothing to start: sleep until
   * `heldUntil` when a limit holds due jobs back (unless an earlier wake-up is set), otherwise until
   * the next due job or poll.
   */
  afterClaim(heldUntil: number | null): void {
    if (!this.deps.exhausted()) return;
    if (heldUntil === null) void this.untilDue();
    else if (!this.deps.stopping() && (!this.idleTimer || this.idleAt > heldUntil)) this.until(heldUntil);
  }

  /** A retry this worker just scheduled must not wait for an idle timer armed before it existed. */
  wakeBy(at: number): void {
    if (this.deps.exhausted() && !this.deps.stopping() && (!this.idleTimer || this.idleAt > at)) this.until(at);
  }

  /**
   * The window's starts are spent and slots are free: nothing else (no job finishing, no enqueue) may
   * come to start the jobs still due, so the worker wakes itself when the window reopens.
   */
  untilRateWindow(): void {
    if (this.rateTimer) return;
    const wait = this.deps.limiter.wait(this.deps.clock.now());
    this.rateTimer = this.deps.clock.setTimeout(() => {
      this.rateTimer = undefined;
      this.deps.pump();
    }, Math.max(1, wait));
  }

  /** Woken by something else (an enqueue, a notification): the idle timer is not needed. */
  cancel(): void {
    if (this.idleTimer) this.deps.clock.clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  cancelAll(): void {
    this.cancel();
    if (this.rateTimer) this.deps.clock.clearTimeout(this.rateTimer);
    this.rateTimer = undefined;
  }

  /**
   * With a synchronous store (SQLite) and fast handlers, claim, run and record can chain through
   * microtasks for a whole backlog without ever returning to the event loop, starving timers
   * (heartbeats, rescues) and I/O. Every 20 ms of such work, step out for one macrotask.
   */
  async yieldIfBusy(): Promise<void> {
    const now = Date.now();
    if (now - this.lastYield < 20) return;
    await new Promise((resolve) => setTimeout(resolve, 0));
    this.lastYield = Date.now();
  }

  /** Sleeps until the next due job, a lease to rescue, or the poll interval, whichever is first. */
  private async untilDue(): Promise<void> {
    const { clock, store, limiter } = this.deps;
    if (this.idleTimer || this.deps.stopping()) return;
    const now = clock.now();
    let wait = this.deps.pollIntervalMs;
    try {
      // Leases are left out: a lapsed lease is the rescuer's to handle, and waking for one here
      // would spin on empty claims until the rescuer's next pass.
      const asked = store.nextWakeAt({ queues: [this.deps.queue], leases: false });
      this.check = asked.catch(() => {});
      const next = await asked;
      if (next !== null) wait = Math.min(wait, Math.max(0, next - now));
    } catch (error) {
      this.deps.storeError("nextWakeAt", error);
    }
    const rateWait = limiter.wait(now);
    if (rateWait > 0) wait = Math.max(wait, rateWait);
    if (!this.deps.exhausted() || this.idleTimer || this.deps.stopping()) return;
    this.until(now + wait);
  }

  private until(at: number): void {
    this.cancel();
    // Idle is not busy: the next claim after a wake-up starts a fresh spell rather than paying for a
    // yield (a macrotask, a millisecond or more) on the way to a job someone is waiting for.
    this.lastYield = Date.now();
    this.idleAt = at;
    this.idleTimer = this.deps.clock.setTimeout(() => {
      this.idleTimer = undefined;
      this.deps.wake();
    }, at - this.deps.clock.now());
  }
}
