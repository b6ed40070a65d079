// The admin API's response shapes, on their own (no imports), so the dashboard (browser code, its own
// tsconfig) can share them without pulling the engine into its program. The routes build these from
// the engine's own types, so the compiler keeps the two in step.

export type JobStatusName = "pending" | "running" | "succeeded" | "failed" | "cancelled";

export interface QueueSummary {
  name: string;
  /** Declared in this process (`tw.queue(name)`); only declared queues can be filtered on and operated. */
  declared: boolean;
  /** This process runs the queue's jobs. */
  hasHandler: boolean;
  concurrency: number | null;
  /** Jobs of this queue running in this process right now. */
  runningHere: number;
  counts: Record<JobStatusName, number>;
  /** Its pending jobs split into due now and scheduled for later, against the engine's clock. */
  pending: PendingSplit;
  /** Its flow control as every process sees it; null for a queue not declared here. */
  flow: QueueFlowView | null;
}

/**
 * A queue's pending jobs by run time (their sum is `counts.pending`): the scheduled ones are counted
 * on the due-time index, never the backlog's rows, and the due ones are the rest.
 */
export interface PendingSplit {
  /** Run time reached: waiting for a worker (or held by a pause or a limit). */
  due: number;
  /** Run time ahead: a delay, a retry's backoff, a flow parent waiting for its children. */
  scheduled: number;
  /** The run time of the longest-waiting due job (how long the backlog has waited); null when none is due. */
  oldestDueAt: number | null;
}

/** A shared budget (a queue's global rateLimit, a named limiter): one token every `intervalMs`. */
export interface BucketView {
  /** `queue:<name>` for a queue's global rateLimit, `limiter:<name>` for a named limiter. */
  bucket: string;
  intervalMs: number;
  burst: number;
  /** Tokens there now (fractions fill up between starts; 0 while paused). */
  tokens: number;
  pausedUntil: number | null;
  nextTokenAt: number;
}

export interface GroupView {
  group: string;
  pending: number;
  running: number;
}

/** A queue's flow control (`tw.queues.status`), read from the store: true for every process. */
export interface QueueFlowView {
  name: string;
  paused: boolean;
  pausedAt: number | null;
  pausedGroups: string[];
  globalConcurrency: number | null;
  groupConcurrency: number | null;
  /** Jobs started in every process (a job whose lease lapsed counts until the rescue hands it back). */
  running: number;
  /** Jobs claimed by a worker and not started yet: prefetched, or handed over and not begun. */
  held: number;
  pending: number;
  buckets: BucketView[];
  /** The busiest groups, most jobs first. */
  groups: GroupView[];
  /** What held this process's worker back at its last claim (paused, globalConcurrency, rateLimit...); null: nothing. */
  heldBy: string | null;
}

/** What `POST /api/queues/:queue/pause` and `/resume` answer: `changed` is false when it already was so. */
export interface QueueControlResult {
  queue: string;
  group: string | null;
  changed: boolean;
}

/** A named limiter (`tw.limiter`) as `GET /api/limiters` shows it. */
export interface LimiterView {
  name: string;
  max: number;
  perMs: number;
  burst: number;
  tokens: number;
  /** Paused by an upstream's rate-limit answer or by hand until then; null: not paused. */
  pausedUntil: number | null;
  nextTokenAt: number;
}

/**
 * How a list shows a payload: the start of its JSON text and its size, never the whole of it (a
 * list is polled every few seconds, and one 20 MB item must not make every answer 20 MB). The
 * item's own route gives the payload in full.
 */
export interface PayloadPreview {
  /** The JSON text's first 200 characters, all of it when `payloadTruncated` is false. */
  payloadPreview: string;
  /** The JSON text's length in characters. */
  payloadChars: number;
  payloadTruncated: boolean;
}

/** A job without its payload, as lists of many jobs show it. */
export interface JobSummary {
  id: string;
  queue: string;
  key: string | null;
  group: string | null;
  status: JobStatusName;
  priority: number;
  runAt: number;
  attempts: number;
  maxAttempts: number;
  lastError: string | null;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  /**
   * A flow parent's (or a `tw.batch` completion job's) children: how many, how many have not ended
   * (while any has not, a pending parent waits for them and cannot be run now), how many failed; null
   * for a job with none.
   */
  children: { total: number; pending: number; failed: number } | null;
}

/** A job in `GET /api/jobs`: its payload previewed; `GET /api/jobs/:id` has the payload itself. */
export type JobListItem = JobSummary & PayloadPreview;

/** What `GET /api/jobs` answers: a page, newest first or oldest first as `order` says. */
export interface JobPage {
  jobs: JobListItem[];
  /** The order asked for (newest unless `order=oldest`): it says which parameter `next` is for. */
  order: "newest" | "oldest";
  /**
   * The last id of this page, to pass as the following page's `before` (newest first) or `after`
   * (oldest first); null on the last one. A string in either order, as every list's `next` is: the
   * other parameter is refused with a 400 naming it, so a mix-up cannot skip or repeat jobs.
   */
  next: string | null;
  /** The engine's clock: a pending job with `runAt` after it is scheduled for later, else due. */
  now: number;
}

/** One attempt of a job, as its history keeps it (the last 20 and the current one). */
export interface JobAttemptView {
  attempt: number;
  startedAt: number;
  /** Null while it runs. */
  finishedAt: number | null;
  outcome: "running" | "succeeded" | "failed" | "snoozed" | "lease_expired" | "cancelled";
  error: string | null;
}

/**
 * A job's payload in its own answer: the value itself when its JSON text is at most
 * `DETAIL_PAYLOAD_CHARS` (64 Ki characters), else the start of that text; `GET
 * /api/jobs/:id/payload` gives the whole of it.
 */
export type JobPayloadView =
  | { payloadTruncated: false; payloadChars: number; payload: unknown }
  | { payloadTruncated: true; payloadChars: number; payloadPreview: string };

/** A job as `GET /api/jobs/:id` and the actions on it answer. */
export type JobDetail = JobSummary &
  JobPayloadView & {
    snoozes: number;
    /** What the handler returned (JSON) once it succeeded; null before. Bounded by the queue's maxResultBytes. */
    result: unknown;
    /** The handler's last `ctx.progress` value (JSON); null if none. */
    progress: unknown;
    /** Every attempt, oldest first. */
    history: JobAttemptView[];
    parentId: string | null;
    /**
     * While it runs: the worker holding it (`<instanceId>/<queue>`) and until when its lease lasts
     * unless renewed (a lapsed one is rescued: the job runs again); null otherwise.
     */
    lease: { workerId: string; until: number } | null;
  };

/** What `GET /api/jobs/:id` and `POST /api/jobs/:id/{retry,cancel,promote,delete}` answer (delete: the job as it was). */
export interface JobAnswer {
  job: JobDetail;
  now: number;
}

export interface TaskSummary {
  name: string;
  schedule: string;
  lastRunAt: number | null;
  lastDurationMs: number | null;
  lastOutcome: "succeeded" | "failed" | "backed_off" | null;
  lastError: string | null;
  /** Why the task's cadence could not be computed (it is retried); null while it computes. */
  scheduleError: string | null;
  consecutiveFailures: number;
  /** Its next slot, ignoring pauses and backoff (`runsAt` takes them in). */
  nextRunAt: number | null;
  /** Adaptive backoff: skipped until then. */
  nextRunAfter: number | null;
  /**
   * When it will really run next: its next slot, or the end of its pause or backoff when that comes
   * later (a slot that fell due meanwhile runs then). Null while its breaker is open (it waits for a
   * resume), when no slot is ahead, or its cadence cannot be computed.
   */
  runsAt: number | null;
  paused: boolean;
  pausedUntil: number | null;
  breakerOpen: boolean;
  running: boolean;
}

export interface ThroughputSnapshot {
  bucketMs: number;
  /** Start of the first bucket (epoch ms); the last bucket is the current one, still filling. */
  start: number;
  /** Job attempts finished per bucket, oldest first, per queue. */
  queues: Record<string, number[]>;
  /** Of those, the ones that failed (a retry scheduled, or failed for good), per bucket, per queue. */
  failed: Record<string, number[]>;
}

/** An item of a delivery's outbox or dead-letter table, its payload previewed. */
export interface DeliveryItemView extends PayloadPreview {
  id: string;
  key: string | null;
  /** The attempt the next send is (outbox), or the last one made (dropped). */
  attempt: number;
  lastError: string | null;
  createdAt: number;
  /** Outbox: when it is due. */
  runAt?: number;
  /** Dead letters: when it was dropped. */
  droppedAt?: number;
}

export interface DeliverySummary {
  name: string;
  /** Sends per tick this delivery may take from the shared outbound budget. */
  budget: number;
  retryBatch: number;
  /** Waiting for their first send. */
  pending: number;
  /** Failed at least once, waiting for their next attempt. */
  retrying: number;
  /** In the dead-letter table. */
  dropped: number;
  /**
   * The soonest due time of an item waiting (for one being sent, the end of its lease): the oldest
   * item's due time, so in the past while items wait for a pass (a backlog beyond the budget, workers
   * not started). Null: nothing waits.
   */
  nextAt: number | null;
  /** This process's last pass: what it sent out of `budget`, and whether the budget ran out. */
  lastPass: { at: number; sent: number; delivered: number; failed: number; dropped: number; carried: boolean } | null;
  /** The next retries due, soonest first (a few). */
  nextRetries: DeliveryItemView[];
  /** The latest dead letters, newest first (a few). */
  latestDropped: DeliveryItemView[];
}

export interface FanoutTargetView {
  id: string;
  group: string;
  /** The state version the target acknowledged last (0: never). */
  version: number;
  behind: boolean;
  failures: number;
  lastError: string | null;
  pushedAt: number | null;
}

export interface FanoutSummary {
  name: string;
  version: number;
  /** The next round: a retry of the targets behind, or a reconciliation of all. */
  nextAt: number | null;
  nextReason: "push" | "retry" | "reconcile" | null;
  consecutiveFailures: number;
  lastError: string | null;
  lastPushAt: number | null;
  lastSuccessAt: number | null;
  converged: boolean;
  targets: FanoutTargetView[];
}

/** Everything the dashboard shows, in one response: one poll, one round trip per refresh. */
export interface Overview {
  /** The engine's clock, so relative times read the same as the engine's. */
  now: number;
  engine: { instanceId: string; store: string; started: boolean };
  queues: QueueSummary[];
  /** The most recent failed jobs. */
  failed: JobSummary[];
  scheduler: { pausedUntil: number | null; tasks: TaskSummary[] };
  throughput: ThroughputSnapshot;
  deliveries: DeliverySummary[];
  fanouts: FanoutSummary[];
}

/** What `POST /api/tasks/:task/run` returns per run. */
export interface TaskRunResult {
  task: string;
  outcome: "succeeded" | "failed" | "backed_off" | "skipped";
  reason?: string;
}
