import type { JobOutcome, QueueStore } from "./store.js";

type Waiter = { outcome: JobOutcome; resolve: (accepted: boolean) => void; reject: (error: unknown) => void };

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
 */
export class OutcomeBatcher {
  private waiting: Waiter[] = [];
  private writing: Promise<void> | null = null;
  private scheduled = false;
  /** Ids of the outcomes waiting or being written. */
  private readonly held = new Set<string>();

  constructor(
    private readonly store: QueueStore,
    private readonly now: () => number,
    /** Called after each write, so a worker held back by unrecorded outcomes can claim again. */
    private readonly onWritten: () => void = () => {},
    /** Flow parents on these queues became due with the outcomes just written. */
    private readonly onWoken: (queues: string[]) => void = () => {},
    private readonly maxBatch = 1000,
  ) {}

  get size(): number {
    return this.waiting.length;
  }

  /** The job's outcome is waiting here or being written: the store may still show it running. */
  holds(id: string): boolean {
    return this.held.has(id);
  }

  /** Resolves true when the outcome is recorded, false when the fence refused it (lease lost). */
  add(outcome: JobOutcome): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ outcome, resolve, reject });
      this.held.add(outcome.id);
      this.schedule();
    });
  }

  /** Writes everything waiting; rejects if the store fails. */
  async drain(): Promise<void> {
    while (this.writing || this.waiting.length) {
      if (this.writing) await this.writing;
      else await this.write();
    }
  }

  /** Writes what is waiting now instead of at the end of this turn of the event loop. */
  flushNow(): void {
    if (!this.writing && this.waiting.length) void this.write().catch(() => {});
  }

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    // A macrotask, so every handler that finishes in this turn of the event loop joins the batch.
    setTimeout(() => {
      this.scheduled = false;
      if (!this.writing) void this.write().catch(() => {});
    }, 0);
  }

  private write(): Promise<void> {
    const batch = this.waiting.splice(0, this.maxBatch);
    if (batch.length === 0) return Promise.resolve();
    this.writing = (async () => {
      try {
        const { refused, woke } = await this.store.settleMany({ outcomes: batch.map((w) => w.outcome), now: this.now() });
        if (woke?.length) this.onWoken(woke);
        const no = new Set(refused);
        for (const w of batch) w.resolve(!no.has(w.outcome.id));
      } catch (error) {
        for (const w of batch) w.reject(error);
        throw error;
      } finally {
        for (const w of batch) this.held.delete(w.outcome.id);
        this.writing = null;
        if (this.waiting.length) this.schedule();
        this.onWritten();
      }
    })();
    return this.writing;
  }
}
