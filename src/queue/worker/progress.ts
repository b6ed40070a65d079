import type { Clock, TimerHandle } from "../../core/clock.js";
import { errorText } from "../../core/errors.js";
import { serialiseJson, utf8Length } from "../../core/json.js";
import type { Logger } from "../../core/logger.js";
import { ResultTooLargeError } from "../errors.js";
import type { Job } from "../job.js";
import type { QueueStore } from "../store/store.js";

/**
 * Progress writes are at most one per job per this long: a handler reporting every item of a
 * 100,000-item loop costs a hundred writes a second across a worker's jobs, not 100,000.
 */
export const PROGRESS_INTERVAL_MS = 1_000;

export interface ProgressDeps {
  store: QueueStore;
  clock: Clock;
  logger: Logger;
  maxBytes: number;
  /** A value was reported in this process (before it is written): waiters here hear of it at once. */
  reported: (id: string, attempt: number, value: unknown) => void;
  storeError: (operation: string, error: unknown) => void;
}

/** A job's progress not yet written, and when its last write went. */
interface Pending {
  job: Job;
  text: string | undefined;
  lastWrite: number;
  timer: TimerHandle | undefined;
  writing: Promise<void> | undefined;
}

/**
 * A worker's progress writes (`ctx.progress`): the first value of a job is written at once, later
 * ones at most once per PROGRESS_INTERVAL_MS (the latest wins), and whatever is unwritten when the
 * attempt ends is written before its outcome, so the stored progress is the handler's last word.
 */
export class ProgressWriter {
  private readonly jobs = new Map<string, Pending>();

  constructor(private readonly deps: ProgressDeps) {}

  report(job: Job, value: unknown): void {
    const { logger, maxBytes } = this.deps;
    let text: string;
    try {
      text = serialiseJson(value, { subject: "progress" });
      const bytes = utf8Length(text);
      if (bytes > maxBytes) throw new ResultTooLargeError(bytes, maxBytes, "the progress value");
    } catch (error) {
      logger.warn("job.progress_refused", { queue: job.queue, id: job.id, error: errorText(error) });
      return;
    }
    this.deps.reported(job.id, job.attempts, value);
    let pending = this.jobs.get(job.id);
    if (!pending) this.jobs.set(job.id, (pending = { job, text: undefined, lastWrite: -Infinity, timer: undefined, writing: undefined }));
    pending.text = text;
    this.schedule(pending);
  }

  /** Writes the job's unwritten progress now; undefined (nothing to wait for) when there is none. */
  flush(id: string): Promise<void> | undefined {
    const pending = this.jobs.get(id);
    if (!pending) return undefined;
    this.jobs.delete(id);
    if (pending.timer) this.deps.clock.clearTimeout(pending.timer);
    const before = pending.writing ?? Promise.resolve();
    return pending.text === undefined ? before : before.then(() => this.write(pending));
  }

  private schedule(pending: Pending): void {
    if (pending.timer || pending.writing) return;
    const wait = pending.lastWrite + PROGRESS_INTERVAL_MS - this.deps.clock.now();
    if (wait <= 0) {
      void this.writeNow(pending);
      return;
    }
    pending.timer = this.deps.clock.setTimeout(() => {
      pending.timer = undefined;
      void this.writeNow(pending);
    }, wait);
  }

  private async writeNow(pending: Pending): Promise<void> {
    pending.writing = this.write(pending);
    await pending.writing;
    pending.writing = undefined;
    // A value reported while this one was written waits its turn.
    if (pending.text !== undefined && this.jobs.get(pending.job.id) === pending) this.schedule(pending);
  }

  private async write(pending: Pending): Promise<void> {
    const text = pending.text;
    if (text === undefined) return;
    pending.text = undefined;
    pending.lastWrite = this.deps.clock.now();
    try {
      await this.deps.store.setProgress({ id: pending.job.id, attempt: pending.job.attempts, progress: text });
    } catch (error) {
      this.deps.storeError("progress", error);
    }
  }
}
