import type { BucketSpec, BucketState } from "./bucket.js";
import type { Job, JobStatus } from "./job.js";

/**
 * The queue's storage seam: verb-named operations, one params object each. Each dialect implements
 * it with its own SQL (`queue/sqlite.ts`, `queue/postgres.ts`); `test/contract/queue` holds the
 * suite every implementation passes. All times are epoch milliseconds from the engine's clock.
 */
export interface QueueStore {
  /**
   * Inserts jobs in one round trip. A row whose key is held by a pending or running job of the same
   * queue is not inserted; its result carries the holder instead. With `claim`, the rows are written
   * already running their first attempt under that worker's lease (a hand-off: see QueueWorker.handoff).
   */
  insertMany(params: { queue: string; rows: NewJobRow[]; now: number; tx?: SqlClient; claim?: InsertClaim }): Promise<InsertResult[]>;

  /**
   * insertMany for a large batch, in one transaction (all rows or none), asking `rows` for one slice
   * at a time: a store whose statements run in another process serialises the next slice while the
   * server writes the last one, so a bulk enqueue costs about the larger of the two instead of their
   * sum. Optional: a store that runs its statements in this thread has nothing to overlap, and the
   * queue calls insertMany.
   */
  insertSliced?(params: { queue: string; rows: RowSlices; now: number }): Promise<InsertResult[]>;

  /**
   * Moves up to `limit` due pending jobs of `queue` to running (priority, then runAt, then id),
   * counting an attempt and granting `workerId` a lease until `leaseUntil`. `queueMaxAttempts`, the
   * claiming worker's `retry.maxAttempts`, becomes the maxAttempts of those jobs that did not set
   * their own (`maxAttemptsFromQueue`): the declaration of the process that runs a job is the one
   * that applies to it, and its rescue reads it from the row.
   */
  claimDue(params: { queue: string; limit: number; now: number; leaseUntil: number; workerId: string; queueMaxAttempts?: number }): Promise<Job[]>;

  /**
   * The worker's claim: `claimDue` for a queue without shared limits (after checking the queue is not
   * paused), otherwise one transaction that holds the queue's claims in every process one at a time
   * and starts no more than its `limits` allow: per-group concurrency (running jobs whose lease has
   * not lapsed), the shared buckets, and, for a grouped queue, groups taken round-robin from the one
   * after `after`. globalConcurrency is not the claim's: it is shared out by `holdSlots`.
   */
  claim(params: ClaimParams): Promise<ClaimResult>;

  /**
   * Sets how many of `queue`'s `cap` slots (its globalConcurrency) `workerId` holds until `until`: as
   * many of `want` as the live holds of every other worker leave (0 lets go). The holds of one queue
   * are set one at a time, so their sum never exceeds the cap; a hold not renewed by `until` lapses.
   * `due` (asked only when fewer than `want` were held): a job of the queue is due, so the cap, not
   * the queue, is what holds the worker back. `share`: the cap divided equally among the workers
   * holding or asking, when one of them has less than its share of what it wants (each worker gives
   * back down to it as its jobs finish); otherwise the cap.
   */
  holdSlots(params: { queue: string; workerId: string; want: number; cap: number; now: number; until: number }): Promise<SlotHold>;

  /** Takes `n` tokens of a shared bucket if it has them; otherwise says when to ask again. */
  takeTokens(params: { spec: BucketSpec; n: number; now: number }): Promise<{ granted: boolean; retryAt: number }>;

  /** No token of `bucket` is given before `until` (an upstream said it is out of budget); a later pause wins. */
  pauseBucket(params: { bucket: string; until: number; now: number }): Promise<void>;

  /** Ends a bucket's pause. */
  resumeBucket(params: { bucket: string }): Promise<void>;

  /** Deletes up to `limit` buckets full since before `before` and not paused (a group's bucket outlives its group's jobs). */
  pruneBuckets(params: { before: number; limit: number }): Promise<number>;

  /** The stored state of some buckets; a bucket never used is missing (it is full). */
  bucketStates(params: { buckets: string[] }): Promise<Record<string, BucketState>>;

  /** Pauses (or resumes) `queue`, or only its `group`: no claim starts their jobs while paused. Returns whether it changed. */
  setPaused(params: { queue: string; group: string | null; paused: boolean; now: number }): Promise<boolean>;

  /** The paused queues and groups (`group` null: the whole queue). */
  pauses(params: { queues?: string[] }): Promise<PauseRow[]>;

  /** Pending and running jobs per group of `queue`, the busiest first, at most `limit` groups. */
  groupCounts(params: { queue: string; now: number; limit: number }): Promise<GroupCounts[]>;

  /** Records outcomes. Each is applied only if the job is still running the same attempt (fencing). */
  settleMany(params: { outcomes: JobOutcome[]; now: number }): Promise<SettleResult>;

  /**
   * Extends the lease of those of `ids` that `workerId` still holds; returns them. The worker names
   * its jobs, so the store finds them by primary key (no index on the worker to keep up per claim).
   */
  heartbeat(params: { workerId: string; ids: readonly string[]; leaseUntil: number }): Promise<string[]>;

  /**
   * Jobs of `queues` whose lease lapsed go back to pending (or to failed when no attempt is left),
   * their attempt counted. Returns what was rescued. A rescued job keeps its priority and its runAt
   * (only a runAt still ahead of `now`, a job claimed by a process whose clock runs ahead, becomes
   * `now`): it was due before the backlog that arrived while its worker held it, so it runs before
   * that backlog instead of behind it.
   */
  rescueExpired(params: { queues: string[]; now: number; limit: number }): Promise<RescuedJob[]>;

  /**
   * Earliest time any pending job of `queues` is due, or any running job's lease has lapsed (the
   * first millisecond after `lease_until`, when `rescueExpired` takes it); null if none.
   * `leases: false` leaves leases out (for a worker, which does not rescue: the engine does).
   */
  nextWakeAt(params: { queues: string[]; leases?: boolean }): Promise<number | null>;

  get(params: { id: string }): Promise<Job | null>;
  list(params: ListParams): Promise<Job[]>;
  countByStatus(params: { queues?: string[] }): Promise<QueueCounts[]>;

  /** failed or cancelled -> pending, attempts reset. Returns the job, or null if its state forbids it. */
  retry(params: { id: string; now: number }): Promise<Job | null>;
  /** Every failed job of `queue` -> pending. Returns how many. */
  retryFailed(params: { queue: string; now: number }): Promise<number>;
  /** pending or running -> cancelled. Returns the job, or null if its state forbids it. */
  cancel(params: { id: string; now: number }): Promise<Job | null>;

  /** Deletes up to `limit` jobs that finished with `status` before `before`. Returns how many. */
  pruneFinished(params: { status: Extract<JobStatus, "succeeded" | "failed" | "cancelled">; before: number; limit: number }): Promise<number>;
}

/**
 * The caller's own database client, for a transactional enqueue: the job exists only if the
 * caller's transaction commits. A `pg.Client` or `pg.PoolClient` fits.
 */
export interface SqlClient {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

export interface NewJobRow {
  payload: string;
  key: string | null;
  /** The job's group; default none. */
  group?: string | null;
  priority: number;
  runAt: number;
  maxAttempts: number;
  /**
   * `maxAttempts` is the enqueuing process's queue default rather than the job's own: the worker
   * that claims the job replaces it with its declaration's. Default false.
   */
  maxAttemptsFromQueue?: boolean;
}

/** The worker that new rows are written as claimed by, and until when it holds them. */
/** A job's row but its payload's text: what is checked up front, before a payload is serialised. */
export type JobFields = Omit<NewJobRow, "payload">;

/** Rows checked up front and serialised a slice at a time, when the store asks for them. */
export interface RowSlices {
  readonly count: number;
  /**
   * The next rows, serialised now: at least one, and more while their payloads' text stays within
   * `chars`; none once every row was given. Throws an InvalidPayloadError for a payload that fails
   * to serialise (a getter or toJSON that throws the second time).
   */
  next(chars: number): NewJobRow[];
}

export interface InsertClaim {
  workerId: string;
  leaseUntil: number;
}

export type InsertResult = { id: string; duplicate: false } | { id: string; duplicate: true; existing: Job };

/** How a job's attempt settles, as the worker records it (`settleMany`). */
export type JobOutcome =
  | { kind: "succeeded"; id: string; attempt: number }
  /** `retryAt` null: no retry, the job fails for good. */
  | { kind: "failed"; id: string; attempt: number; error: string; retryAt: number | null }
  /** Graceful shutdown: back to pending at once, the attempt not counted, its place kept as a rescue keeps it. */
  | { kind: "released"; id: string; attempt: number };

export interface SettleResult {
  /** Outcomes refused because the job is no longer running that attempt (lease lost, cancelled). */
  refused: string[];
}

export interface RescuedJob {
  id: string;
  queue: string;
  attempts: number;
  maxAttempts: number;
  status: "pending" | "failed";
}

export interface ListParams {
  queue?: string;
  status?: JobStatus;
  key?: string;
  /** Keyset pagination: jobs with an id below this one (lists are newest first). */
  before?: string;
  limit: number;
}

export interface QueueCounts {
  queue: string;
  counts: Record<JobStatus, number>;
}

/** What a queue's claims may start, across every process. */
export interface ClaimLimits {
  /** Jobs of the queue running at once in every process: slots each worker holds (`holdSlots`), not a count the claim makes. */
  globalConcurrency?: number;
  /** Jobs of one group running at once in every process. */
  groupConcurrency?: number;
  /** Buckets every start takes one token of: the queue's global rateLimit, a named limiter. */
  buckets: BucketSpec[];
  /** Each group's own bucket (its key is `group:<queue>/<group>`). */
  groupRate?: { intervalMs: number; burst: number };
  /** Jobs carry groups, and claims take the groups round-robin. */
  grouped: boolean;
  /** Groups' shares of each round (a group not named: 1). */
  groupWeights?: Record<string, number>;
}

export interface ClaimParams {
  queue: string;
  limit: number;
  now: number;
  leaseUntil: number;
  workerId: string;
  queueMaxAttempts?: number;
  /** Shared limits; without them the claim is `claimDue`'s. */
  limits?: ClaimLimits;
  /**
   * Where this worker's last claim ended; the walk starts after the queue's shared cursor (the group
   * the last claim of any process ended on), and after this only while the queue has none.
   */
  after?: string | null;
}

/** What held a claim back. */
export type ClaimHold = "paused" | "globalConcurrency" | "groupConcurrency" | "rateLimit" | "groupRateLimit";

export interface ClaimResult {
  jobs: Job[];
  /** The whole queue is paused. */
  paused: boolean;
  /** What kept the claim from taking all it asked for, though due jobs may be waiting; null: nothing. */
  held: ClaimHold | null;
  /** When a token comes back to a bucket that held the claim; null if no bucket did. */
  retryAt: number | null;
  /** Where the next claim of a grouped queue starts (after this group). */
  cursor: string | null;
}

export interface SlotHold {
  held: number;
  due: boolean;
  share: number;
}

export interface PauseRow {
  queue: string;
  group: string | null;
  pausedAt: number;
}

export interface GroupCounts {
  group: string;
  pending: number;
  running: number;
}
