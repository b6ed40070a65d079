/**
 * A grouped worker of jobs faster than a round trip keeps GROUPED_WINDOW capacities in hand and
 * claims GROUPED_CLAIM at a time (times the serial depth under groupConcurrency 1). A grouped claim has
 * a fixed cost (its walk and its function's statements): on 2 cores, 4 processes x 8 slots on 1,000
 * groups ran 8-10% faster claiming two capacities at a time, in hand four, than one and three; six
 * in hand ran no faster than four, and every job in hand holds its group back from the other processes.
 */
const GROUPED_WINDOW = 4;
const GROUPED_CLAIM = 2;

/** Samples of jobs and of claims before their moving averages (from 0, an eighth per sample) size a prefetch: past 80% of the way. */
const SETTLED_SAMPLES = 12;

/** How the queue's claims are limited: a grouped or paced queue claims for its free slots unless its jobs run ahead. */
export interface WindowShape {
  /** Jobs the worker may run at once now. */
  capacity: number;
  /** A grouped queue whose jobs are faster than a round trip: claims run ahead by whole capacities. */
  groupedAhead: boolean;
  /** Jobs of one group per claim under groupConcurrency 1 (1 otherwise). */
  depth: number;
  /** Grouped, or paced by a shared rate: without groupedAhead, the worker claims only for its free slots. */
  limited: boolean;
}

/**
 * How much a worker claims and keeps in hand, from two moving averages (wall-clock ms, not the
 * engine's clock): a job's run and a claim's round trip. Jobs faster than a round trip keep a second
 * batch on its way while one runs, and the batch grows while the worker starves; slower jobs keep
 * about a batch in hand, so prefetch never hoards them from other workers.
 */
export class ClaimWindow {
  /** Jobs per claim now; grows from `batchSize` while the worker starves (adaptiveBatch). */
  private current: number;
  private readonly maxBatch: number;
  private jobMs = 0;
  private roundTripMs = 0;
  /** Samples in those averages: they start at 0, so they mean little before a dozen or so. */
  private jobsTimed = 0;
  private claimsTimed = 0;
  private claimsSent = 0;

  constructor(private readonly config: { batchSize: number; adaptiveBatch: boolean; concurrency: number }) {
    this.current = config.batchSize;
    this.maxBatch = config.adaptiveBatch ? Math.min(Math.max(16 * config.concurrency, 500), 1_000) : config.batchSize;
  }

  get batch(): number {
    return this.current;
  }

  /**
   * Jobs finish faster than a claim's round trip (on the moving averages). Unknown until a job has
   * finished: taken as no, so a worker's first claims prefetch no more than a batch of jobs that may
   * be slow.
   */
  get fasterThanRoundTrip(): boolean {
    return this.jobsTimed > 0 && this.jobMs < this.roundTripMs;
  }

  /** A job ran for `ms` (a batch handler's jobs: each its share). */
  jobRan(ms: number): void {
    this.jobMs += (ms - this.jobMs) / 8;
    this.jobsTimed++;
  }

  /** A claim came back after `ms`. */
  claimReturned(ms: number): void {
    // A worker's first claim parses and plans its statement on a connection that never ran it and
    // loads the tables' catalog entries (20-50 ms on a small host): no measure of a round trip.
    if (this.claimsSent++ === 0) return;
    this.roundTripMs += (ms - this.roundTripMs) / 8;
    this.claimsTimed++;
  }

  /** The worker starves (slots free, nothing prefetched, a claim or outcomes on their way): more per claim. */
  grow(): void {
    if (this.current < this.maxBatch) this.current = Math.min(this.maxBatch, this.current * 2);
  }

  /** The backlog is gone: start small again. */
  reset(): void {
    this.current = this.config.batchSize;
  }

  /** The jobs the worker keeps in hand, running and prefetched. */
  inHand({ capacity, groupedAhead, depth, limited }: WindowShape): number {
    if (groupedAhead) return GROUPED_WINDOW * capacity * depth;
    if (limited) return capacity;
    return this.fasterThanRoundTrip ? 2 * this.current : this.slowWindow(capacity);
  }

  /**
   * The least a claim is worth its round trip for: a quarter of a batch (of the slots, for a grouped or
   * paced queue), or for a grouped queue running ahead, GROUPED_CLAIM capacities.
   */
  worthClaiming({ capacity, groupedAhead, depth, limited }: WindowShape): number {
    if (groupedAhead) return Math.min(GROUPED_CLAIM * capacity * depth, this.current);
    return Math.max(1, Math.floor((limited ? capacity : this.current) / 4));
  }

  /**
   * The jobs a worker of jobs slower than a round trip keeps in hand, running and prefetched: a batch,
   * or its slots and what they finish in four claims' round trips (the average's: a claim's round trip
   * varies twofold under load) if that is more, at most two batches. So a slot that frees is refilled
   * from the buffer while the next claim is on its way rather than waiting for it.
   */
  private slowWindow(capacity: number): number {
    const settled = this.jobsTimed >= SETTLED_SAMPLES && this.claimsTimed >= SETTLED_SAMPLES;
    const roundTrips = settled ? Math.ceil((4 * capacity * this.roundTripMs) / this.jobMs) : 0;
    return Math.max(this.current, Math.min(capacity + roundTrips, 2 * this.current));
  }
}
