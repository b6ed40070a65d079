/**
 * The outbound-call budget of one tick (seed 000: 500, a Durable Object's subrequest limit), shared
 * by deliveries, their retries and fan-out pushes. Whatever does not fit waits for the next tick.
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
