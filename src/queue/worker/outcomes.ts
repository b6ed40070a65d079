import type { Job } from "../job.js";
import type { JobOutcome, QueueStore } from "../store/store.js";

type Waiter = {
  outcome: JobOutcome;
  resolve: (accepted: boolean) => void;
  reject: (error: unknown) => void;
  /** The job's lease end on the engine's clock: a failed write is tried again until then. */
  until: number;
  /** The same moment in real time, so a clock that stands still (a test's) cannot retry forever. */
  giveUpAt: number;
};

/** The first wait before a failed write is tried again, doubled each time up to RETRY_MAX_MS. */
const RETRY_MS = 50;
const RETRY_MAX_MS = 1_000;

/**
 * Batches job outcomes (the acks): outcomes that arrive while one batch is being written, or within
 * the same turn of the event loop, are written together in one statement.
 *
 * The crash trade-off: an outcome waits here at most one write (a few milliseconds). A worker of jobs
 * faster than a round trip claims nothing more while its window is full of outcomes waiting to be
 * written, so at most two claim batches of a queue (the one being written and the one waiting behind
 * it; a batch is `batchSize`, or up to 16 × concurrency, 500 to 1,000, when adaptive) can be
 * done-but-unrecorded; jobs slower than a round trip finish fewer than their slots during one write. If the process dies
 * in that window, the job's lease lapses and it runs again, so every job is run at least once, and a
 * handler must be idempotent for the rare double run (as with every at-least-once queue).
 *
 * It also writes the starts of jobs a worker held without starting them (prefetched, or handed over
 * by another process), which an attempt counts from: a job's start goes with its outcome when that
 * comes before the next write (a job faster than a write costs no statement of its own), otherwise
 * in a statement of its own beside the outcomes. Until it is written, a crash of the process gives
 * the attempt back: the job runs again without it counted, and it is one of the first jobs the next
 * claim takes (a rescued job keeps its place), started at that claim, so it counts then.
 *
 * A write that fails (the store restarting, a connection cut) is tried again, 50 ms later and then
 * twice as long each time up to 1 s, for as long as the job's lease lasts: a store back within the
 * lease gets the outcome, and the job does not run twice. The write is fenced by the lease (worker
 * and attempt), so a retry after another worker took the job is refused, never applied twice.
 */
export class OutcomeBatcher {
  private waiting: Waiter[] = [];
  private writing: Promise<void> | null = null;
  private scheduled = false;
  /** Set while failed writes wait to be tried again. */
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private retryMs = RETRY_MS;
  /** Ids of the outcomes waiting or being written. */
  private readonly held = new Set<string>();
  /**
   * Jobs held unstarted that started here, by id, until their outcome comes: `unsent` until a write
   * takes their start, `sent` from then on. The job itself says when (startedAt) and which attempt, so
   * a start costs the batcher no object of its own (it runs once per job at full speed).
   */
  private readonly unsent = new Map<string, Job>();
  private readonly sent = new Map<string, Job>();

  constructor(
    private readonly store: QueueStore,
    /** The worker whose jobs these are: a start or an outcome is written only while it holds the job. */
    private readonly workerId: string,
    private readonly now: () => number,
    /** Called after each write, so a worker held back by unrecorded outcomes can claim again. */
    private readonly onWritten: () => void = () => {},
    /** Flow parents on these queues became due with the outcomes just written. */
    private readonly onWoken: (queues: string[]) => void = () => {},
    /** A write failed and `count` outcomes wait to be tried again (logged once per outage, not per try). */
    private readonly onRetrying: (error: unknown, count: number) => void = () => {},
    private readonly maxBatch = 1000,
  ) {}

  get size(): number {
    return this.waiting.length;
  }

  /** The job's outcome is waiting here or being written: the store may still show it running. */
  holds(id: string): boolean {
    return this.held.has(id);
  }

  /**
   * Resolves true when the outcome is recorded, false when the fence refused it (lease lost); rejects
   * when the store still fails at `until`, the job's lease end on the engine's clock (none: no retry).
   */
  add(outcome: JobOutcome, until = -Infinity): Promise<boolean> {
    const started = this.unsent.get(outcome.id) ?? this.sent.get(outcome.id);
    if (started && started.attempts === outcome.attempt) {
      this.unsent.delete(outcome.id);
      this.sent.delete(outcome.id);
      // The outcome is this job's own, made for this call: it carries the start rather than a copy.
      if (outcome.kind !== "released" && started.startedAt !== null) outcome.startedAt = started.startedAt;
    }
    return new Promise((resolve, reject) => {
      const left = until - this.now();
      this.waiting.push({ outcome, resolve, reject, until, giveUpAt: left > 0 ? Date.now() + left : 0 });
      this.held.add(outcome.id);
      this.schedule();
    });
  }

  /** A job held unstarted started (its `startedAt` set): its start is written with the next write, or with its outcome. */
  started(job: Job): void {
    this.sent.delete(job.id);
    this.unsent.set(job.id, job);
    this.schedule();
  }

  private get unsentStarts(): number {
    return this.unsent.size;
  }

  /** Writes everything waiting, retries included; rejects with the store's error if one was given up. */
  async drain(): Promise<void> {
    let failure: { error: unknown } | null = null;
    while (this.writing || this.waiting.length || this.retryTimer || this.unsentStarts) {
      if (this.retryTimer) {
        clearTimeout(this.retryTimer);
        this.retryTimer = undefined;
        await new Promise((resolve) => setTimeout(resolve, this.retryMs));
      }
      try {
        if (this.writing) await this.writing;
        else await this.write();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }

  /** Writes what is waiting now instead of at the end of this turn of the event loop. */
  flushNow(): void {
    if (!this.writing && !this.retryTimer && (this.waiting.length || this.unsentStarts)) void this.write().catch(() => {});
  }

  private schedule(): void {
    if (this.scheduled || this.writing || this.retryTimer) return;
    this.scheduled = true;
    // A macrotask, so every handler that finishes in this turn of the event loop joins the batch.
    setTimeout(() => {
      this.scheduled = false;
      if (!this.writing) void this.write().catch(() => {});
    }, 0);
  }

  private write(): Promise<void> {
    const batch = this.waiting.splice(0, this.maxBatch);
    const marks = this.takeStarts();
    if (batch.length === 0 && marks.length === 0) return Promise.resolve();
    this.writing = (async () => {
      try {
        // Different jobs (a job's start and its outcome never go apart in one write), so in parallel.
        const [{ refused, woke }] = await Promise.all([
          batch.length ? this.store.settleMany({ workerId: this.workerId, outcomes: batch.map((w) => w.outcome), now: this.now() }) : { refused: [], woke: [] },
          marks.length ? this.writeStarts(marks) : undefined,
        ]);
        if (woke?.length) this.onWoken(woke);
        const no = new Set(refused);
        for (const w of batch) w.resolve(!no.has(w.outcome.id));
        this.retryMs = RETRY_MS;
        for (const w of batch) this.held.delete(w.outcome.id);
      } catch (error) {
        // Starts not written are written with the next write (or with their outcomes).
        for (const mark of marks) {
          const job = this.sent.get(mark.id);
          if (job && job.attempts === mark.attempt) {
            this.sent.delete(mark.id);
            this.unsent.set(mark.id, job);
          }
        }
        const now = this.now();
        const again = batch.filter((w) => now < w.until && Date.now() < w.giveUpAt);
        const retried = new Set(again);
        for (const w of batch) {
          if (retried.has(w)) continue;
          this.held.delete(w.outcome.id);
          w.reject(error);
        }
        // Ahead of what arrived meanwhile: the order of a job's outcomes is kept.
        this.waiting.unshift(...again);
        if (again.length || this.unsentStarts) {
          if (this.retryMs === RETRY_MS) this.onRetrying(error, again.length);
          this.retryLater();
        }
        if (again.length < batch.length) throw error;
      } finally {
        this.writing = null;
        if (this.waiting.length || this.unsentStarts) this.schedule();
        this.onWritten();
      }
    })();
    return this.writing;
  }

  private takeStarts(): { id: string; attempt: number; at: number }[] {
    const marks: { id: string; attempt: number; at: number }[] = [];
    for (const [id, job] of this.unsent) {
      this.sent.set(id, job);
      marks.push({ id, attempt: job.attempts, at: job.startedAt! });
    }
    this.unsent.clear();
    return marks;
  }

  /**
   * Writes starts; a start the store refused (the lease was lost, the job cancelled) is dropped: the
   * heartbeat aborts that attempt. A written start stays known until its job's outcome, which carries
   * it too (harmless: the outcome keeps the row's).
   */
  private async writeStarts(marks: { id: string; attempt: number; at: number }[]): Promise<void> {
    await this.store.markStarted({ workerId: this.workerId, jobs: marks });
  }

  private retryLater(): void {
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.schedule();
    }, delay);
  }
}
