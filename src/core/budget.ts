/**
 * The outbound-call budget of one tick, shared by deliveries, their retries and fan-out pushes;
 * whatever does not fit waits for the next tick. A bound at all because a platform may cap the calls
 * one invocation makes: a Durable Object's alarm (one tick) may make 1,000 subrequests on Workers
 * Paid, and the engine's default of 500 leaves the rest for a task's own fetches and the log calls.
 */
export class OutboundBudget {
  private used = 0;

  constructor(readonly total: number) {}

  get remaining(): number {
    return this.total - this.used;
  }

  get spent(): number {
    return this.used;
  }

  /** Takes up to `wanted` calls; returns how many were granted. */
  take(wanted: number): number {
    const granted = Math.max(0, Math.min(wanted, this.remaining));
    this.used += granted;
    return granted;
  }

  /** Gives back calls taken but not made (fewer rows were due than asked for). */
  giveBack(unused: number): void {
    this.used -= Math.min(unused, this.used);
  }
}
