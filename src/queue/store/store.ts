import type { BucketSpec, BucketState } from "../flow-control/bucket.js";
import type { ChildResult, Job, JobStatus } from "../job.js";

/**
 * The queue's storage seam: verb-named operations, one params object each, in three parts. Each
 * dialect writes its hot path with its own SQL (`queue/store/sqlite.ts`, `queue/store/postgres/store.ts`);
 * flow control and the admin operations are written once for both (`queue/store/shared-store.ts`).
 * `test/contract/queue` holds the suite every implementation passes. All times are epoch milliseconds
 * from the engine's clock.
 */
export interface QueueStore extends QueueHotPath, QueueFlowControl, QueueAdmin {}

/** Each dialect's own: inserts, the plain claim, starts, settles, leases, rescues, wake-ups, counts and retention. */
export interface QueueHotPath {
  /** The largest payload (UTF-8 JSON bytes) a queue on this store may be set to take; undefined: MAX_PAYLOAD_BYTES. */
  readonly maxPayloadBytes?: number;

  /**
   * Inserts jobs in one round trip. A row whose key is held by a pending or running job of the same
   * queue is not inserted; its result carries the holder instead. With `claim`, the rows are written
   * already running their first attempt under that worker's lease (a hand-off: see Handoffs).
   * Without it, rows may go to idle workers of other processes (see `offers`), but never to
   * `passOver`: this process's worker of the queue, which has just declined them.
   */
  insertMany(params: { queue: string; rows: NewJobRow[]; now: number; tx?: SqlClient; claim?: InsertClaim; passOver?: string }): Promise<InsertResult[]>;

  /**
   * insertMany for a large batch, in one transaction (all rows or none), asking `rows` for one slice
   * at a time: a store whose statements run in another process serialises the next slice while the
   * server writes the last one, so a bulk enqueue costs about the larger of the two instead of their
   * sum. Optional: a store that runs its statements in this thread has nothing to overlap, and the
   * queue calls insertMany.
   */
  insertSliced?(params: { queue: string; rows: RowSlices; now: number }): Promise<InsertResult[]>;

  /**
   * Offers of idle workers' free slots to the enqueues of other processes, which write jobs already
   * claimed for them (a hand-off across processes). Optional: a store whose workers all live in one
   * process (SQLite) hands off in that process only (see Handoffs).
   */
  readonly offers?: SlotOffers;

  /**
   * Moves up to `limit` due pending jobs of `queue` to running (priority, then runAt, then id),
   * counting an attempt and granting `workerId` a lease until `leaseUntil`. `queueMaxAttempts`, the
   * claiming worker's `retry.maxAttempts`, becomes the maxAttempts of those jobs that did not set
   * their own (`maxAttemptsFromQueue`): the declaration of the process that runs a job is the one
   * that applies to it, and its rescue reads it from the row.
   */
  claimDue(params: { queue: string; limit: number; now: number; leaseUntil: number; workerId: string; queueMaxAttempts?: number; start?: number }): Promise<Job[]>;

  /**
   * Marks claimed jobs of `workerId` that a claim or a hand-off left not started (`startedAt` null)
   * as started, each at its `at` and only while the worker still holds the attempt it names; returns
   * the ids marked. A lease that lapses on a job never marked gives the attempt back (see
   * rescueExpired).
   */
  markStarted(params: { workerId: string; jobs: readonly { id: string; attempt: number; at: number }[] }): Promise<string[]>;

  /**
   * Records the outcomes of `workerId`'s jobs. Each is applied only while the job is still running the
   * same attempt under `workerId`'s lease (fencing): an attempt given back (see markStarted) is claimed
   * again under the same number, so the attempt alone cannot tell a late outcome from the new holder's.
   */
  settleMany(params: { workerId: string; outcomes: JobOutcome[]; now: number }): Promise<SettleResult>;

  /**
   * Extends the lease of those of `ids` that `workerId` still holds; returns them. The worker names
   * its jobs, so the store finds them by primary key (no index on the worker to keep up per claim).
   */
  heartbeat(params: { workerId: string; ids: readonly string[]; leaseUntil: number }): Promise<string[]>;

  /**
   * Jobs of `queues` whose lease lapsed go back to pending (or to failed when no attempt is left),
   * their attempt counted when it started; one claimed but never started (its worker died holding
   * it) goes back pending with the attempt given back, whatever its count: a job no handler started
   * never fails for lack of attempts. Returns what was rescued. A rescued job keeps its priority and its runAt
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

  /**
   * Writes a flow in one transaction (all of it, or nothing): `nodes` parents first, each child
   * naming its parent's index. A node with children waits (pending, due at the end of time) until
   * every child ended; returns the ids in the order of `nodes`.
   */
  insertFlow(params: { nodes: FlowNodeRow[]; now: number }): Promise<string[]>;

  /**
   * Job counts by queue and status, from counters the writes keep (a few rows, whatever the table
   * holds).
   */
  countByStatus(params: { queues?: string[] }): Promise<QueueCounts[]>;

  /** Every failed job of `queue` -> pending. Returns how many. */
  retryFailed(params: { queue: string; now: number }): Promise<number>;

  /**
   * Every pending job of `queue` (due or scheduled for later) -> cancelled, in one transaction; a
   * flow parent counts a cancelled child as failed. Running jobs go on. Returns how many were
   * cancelled, and the awaited jobs this ended (the cancelled ones and parents failed by them).
   */
  cancelPending(params: { queue: string; now: number }): Promise<{ cancelled: number; waited: string[] }>;

  /**
   * Pending jobs whose run time is after `now` (delays, retries' backoffs, flow parents waiting), by
   * queue: a range of the due-time index, read without the jobs' rows, its cost the scheduled jobs'
   * number, never the backlog's. The due ones are the queue's pending count less these.
   */
  countScheduled(params: { queues: string[]; now: number }): Promise<Record<string, number>>;

  /**
   * Tidies the job counts the writes keep: drops counters of queues with no job left, and on a store
   * that keeps a counter per connection, folds those of connections that are gone. Returns rows removed.
   */
  compactCounts(): Promise<number>;

  /** Deletes up to `limit` jobs that finished with `status` before `before`. Returns how many. */
  pruneFinished(params: { status: Extract<JobStatus, "succeeded" | "failed" | "cancelled">; before: number; limit: number }): Promise<number>;
}

/** Claims under shared limits, shared budgets, pauses and keyed enqueues with a mode: one SQL text for both dialects. */
export interface QueueFlowControl {
  /**
   * Inserts one keyed job with a mode (see KeyMode) in one transaction of conditional writes: the
   * pending holder updated (replace, debounce), or the key's period taken (window); its result is the
   * new job, or the job the key gave back (`duplicate`).
   */
  insertKeyed(params: { queue: string; row: NewJobRow & { key: string }; mode: KeyMode; now: number }): Promise<InsertResult>;

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

  /** Deletes up to `limit` keys held for a period that ended before `before` (see insertKeyed). */
  pruneKeys(params: { before: number; limit: number }): Promise<number>;

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
}

/** One job's reads and an operator's actions on it: one SQL text for both dialects. */
export interface QueueAdmin {
  /**
   * Of `queues`, the jobs claimed by a worker that has not started them yet (prefetched, or handed
   * over and not begun): running by status, not by handler. Queues with none are left out.
   */
  countHeld(params: { queues: string[] }): Promise<Record<string, number>>;

  /**
   * Records a running attempt's progress (JSON text), if `attempt` is still the one running. Returns
   * whether it applied. A store with notifications signals the job's waiters in other processes.
   */
  setProgress(params: { id: string; attempt: number; progress: string }): Promise<boolean>;

  /**
   * The job, marked as awaited, so its end (and progress) is signalled to other processes by a store
   * with notifications (`subscribeJobs`); null if no job has this id.
   */
  watch(params: { id: string }): Promise<Job | null>;

  /** A parent's children, in the order they were written, with their results. */
  childResults(params: { id: string }): Promise<ChildResult[]>;

  /** A pending job due later runs now (its runAt becomes `now`). Returns the job, or null if it is not pending. */
  promote(params: { id: string; now: number }): Promise<Job | null>;

  get(params: { id: string }): Promise<Job | null>;

  list(params: ListParams): Promise<Job[]>;

  /** Deletes a finished job (succeeded, failed or cancelled). Returns it, or null if it is not finished. */
  deleteFinished(params: { id: string }): Promise<Job | null>;

  /** failed or cancelled -> pending, attempts reset. Returns the job, or null if its state forbids it. */
  retry(params: { id: string; now: number }): Promise<Job | null>;

  /** pending or running -> cancelled. Returns the job, or null if its state forbids it. */
  cancel(params: { id: string; now: number }): Promise<Job | null>;
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
  /** Someone awaits the job's end (`enqueueAndWait`): settling it signals them. Default false. */
  waited?: boolean;
  /**
   * `maxAttempts` is the enqueuing process's queue default rather than the job's own: the worker
   * that claims the job replaces it with its declaration's. Default false.
   */
  maxAttemptsFromQueue?: boolean;
  /**
   * The W3C Trace Context of the enqueue that created the job (see core/tracing.ts), when the engine
   * traces; absent otherwise, and then the insert's statement and parameters are the untraced ones.
   */
  traceContext?: string;
}

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

/** The worker that new rows are written as claimed by, and until when it holds them. */
export interface InsertClaim {
  workerId: string;
  leaseUntil: number;
}

/**
 * A row's result: the job written, or the live job holding its key. `handedTo`: the job was written
 * running, handed to an idle worker of another process (see SlotOffers), with that worker's lease
 * and its retry.maxAttempts if the job took its queue's.
 */
export type InsertResult =
  | { id: string; duplicate: false; handedTo?: { workerId: string; leaseUntil: number; maxAttempts: number } }
  | { id: string; duplicate: true; existing: Job };

/**
 * An attempt's outcome. `startedAt`: when a job held unstarted (see markStarted) started, for an
 * outcome that may be written before (or instead of) its start's mark.
 */
export type JobOutcome =
  /**
   * `result`: the handler's return value as JSON text; absent when it returned nothing. `parent`: the
   * job's flow parent, which counts its end in the same transaction.
   */
  | { kind: "succeeded"; id: string; attempt: number; result?: string; parent?: string; startedAt?: number }
  /** `retryAt` null: no retry, the job fails for good. */
  | { kind: "failed"; id: string; attempt: number; error: string; retryAt: number | null; parent?: string; startedAt?: number }
  /**
   * Back to pending at once (a shutdown, a pause, a lease lapsed before the job started), the attempt
   * not counted, its place kept as a rescue keeps it.
   */
  | { kind: "released"; id: string; attempt: number }
  /** Back to pending until `runAt`, the attempt not counted, the job's snoozes counted; kept in its history. */
  | { kind: "snoozed"; id: string; attempt: number; runAt: number; startedAt?: number };

export interface SettleResult {
  /** Outcomes refused because the job is no longer running that attempt (lease lost, cancelled). */
  refused: string[];
  /** Queues of flow parents these outcomes made due (their last child ended). */
  woke?: string[];
}

/** One job of a flow as `insertFlow` writes it. */
export interface FlowNodeRow extends NewJobRow {
  queue: string;
  /** Index of its parent in the flow's nodes (always before it); -1 for the root. */
  parent: number;
  /** Its direct children. */
  children: number;
  /** What a child failing for good does to it; null without children. */
  childFailure: "fail" | "continue" | null;
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
  /** Pending jobs due by `now` (true) or scheduled after it (false). */
  due?: boolean;
  now: number;
  /** Jobs that started at least this many attempts. */
  minAttempts?: number;
  /** A flow parent's id: its direct children (`parent_id`, indexed by `tickwork_jobs_parent`). */
  parent?: string;
  /** Newest first (the default: by id descending) or oldest first. */
  order?: "newest" | "oldest";
  /** Keyset pagination, newest first: jobs with an id below this one. */
  before?: string;
  /** Keyset pagination, oldest first: jobs with an id above this one. */
  after?: string;
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
  /**
   * Under groupConcurrency 1: how many jobs of one group the claim may hand this worker (1 if
   * unset), which runs them one after another. A store may hand fewer.
   */
  serialDepth?: number;
  /**
   * How many of the claimed jobs (the first in claim order) start at once; the rest are held for the
   * worker, not started, until it marks them (`markStarted`). All of them when unset.
   */
  start?: number;
}

/** What held a claim back: `rateLimit` the queue's own, `limiter` a named limiter it takes tokens of. */
export type ClaimHold = "paused" | "globalConcurrency" | "groupConcurrency" | "rateLimit" | "limiter" | "groupRateLimit";

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

/**
 * A worker's offer of free slots, one row per slot (numbered from 1): an enqueue in any process takes
 * the slots it fills, writes its jobs running under the worker's lease, and sends the worker their
 * ids and the slots' numbers. A slot offered lapses at `until` unless renewed.
 */
export interface SlotOffers {
  /**
   * Offers `slots` until `until`; with `instead`, withdraws the worker's other slots. A job handed to
   * the worker runs `leaseMs` from its enqueue and takes `maxAttempts` (the worker's
   * retry.maxAttempts) as a claim would.
   */
  offer(params: { queue: string; workerId: string; slots: number[]; until: number; leaseMs: number; maxAttempts: number | null; instead: boolean }): Promise<void>;
  /** Renews those of `slots` not taken to `until`; answers the ids of the jobs handed to the worker and still running under its id. */
  renew(params: { queue: string; workerId: string; slots: number[]; until: number }): Promise<string[]>;
  /** Withdraws every slot the worker offers; answers the ids of the jobs handed to it and still running under its id. */
  withdraw(params: { queue: string; workerId: string }): Promise<string[]>;
  /** The jobs of `ids` running under `workerId`'s lease; ended, rescued or unknown ones are left out. */
  handed(params: { ids: string[]; workerId: string }): Promise<Job[]>;
}

/**
 * Jobs another process enqueued into a worker's offered slots, as its notification tells them: the
 * slots taken, the jobs' ids, and the jobs themselves when they fit in the notification (otherwise
 * the worker reads them by id).
 */
export interface HandedJobs {
  workerId: string;
  slots: number[];
  ids: string[];
  jobs?: Job[];
}

/**
 * What an enqueue with a key does when the key is taken:
 * - `replace`: a pending job holding it takes the new payload, run time and priority;
 * - `debounce`: the same, and the job runs `ms` after this enqueue (so once, `ms` after the last);
 * - `window`: the key is held for `ms` from the enqueue that took it (`unique: { for }`, `throttle`),
 *   whatever becomes of the job meanwhile: an enqueue within it gets that job back.
 * A running holder is never changed: such an enqueue gets it back, as a plain keyed enqueue does.
 */
export type KeyMode = { kind: "replace" } | { kind: "debounce"; ms: number } | { kind: "window"; ms: number };
