/**
 * The outbound-call budget of one tick, shared by deliveries, their retries and fan-out pushes;
 * whatever does not fit waits for the next tick. A bound at all because a platform may cap the calls
 * one invocation makes: a Durable Object's alarm (one tick) may make 1,000 subrequests on Workers
 * Paid, and the engine's default of 500 leaves the rest for a task's own fetches and the log calls.
 *
 * Within it, retries have an allowance of their own (`retryTotal`), shared by every unit that retries
 * in the tick: a backlog of failed items (a receiver that was down) then takes at most that share,
 * however many deliveries hold one, and fresh items keep the rest.
 */
export class OutboundBudget {
  private used = 0;
  private retriesUsed = 0;

  constructor(
    readonly total: number,
    readonly retryTotal: number = total,
  ) {}

  get remaining(): number {
    return this.total - this.used;
  }

  get spent(): number {
    return this.used;
  }

  get retriesSpent(): number {
    return this.retriesUsed;
  }

  /** Retries that may still be taken: the retry allowance left, within the budget left. */
  get retriesRemaining(): number {
    return Math.min(this.retryTotal - this.retriesUsed, this.remaining);
  }

  /** Takes up to `wanted` calls; returns how many were granted. */
  take(wanted: number): number {
    const granted = Math.max(0, Math.min(wanted, this.remaining));
    this.used += granted;
    return granted;
  }

  /** Takes up to `wanted` retries, from the retry allowance and the budget alike; returns how many were granted. */
  takeRetries(wanted: number): number {
    const granted = Math.max(0, Math.min(wanted, this.retriesRemaining));
    this.used += granted;
    this.retriesUsed += granted;
    return granted;
  }

  /** Gives back calls taken but not made (fewer rows were due than asked for). */
  giveBack(unused: number): void {
    this.used -= Math.min(unused, this.used);
  }

  /** Gives back retries taken but not made, to the retry allowance and the budget. */
  giveBackRetries(unused: number): void {
    const back = Math.min(unused, this.retriesUsed, this.used);
    this.retriesUsed -= back;
    this.used -= back;
  }
}
