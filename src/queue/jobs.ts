import { INT32_MAX, MAX_INDEXED_TEXT, checkId, checkInt, checkText } from "../core/bounds.js";
import { InvalidInputError, describe } from "../core/errors.js";
import { JobNotFoundError, JobStateError, UnknownQueueError } from "./errors.js";
import type { Logger } from "../core/logger.js";
import { JOB_STATUSES, type Job, type JobStatus } from "./job.js";
import type { QueueCounts, QueueStore } from "./store/store.js";
import type { JobWaits, WaitOptions } from "./waits.js";

export interface JobsDeps {
  store: QueueStore;
  logger: Logger;
  waits: JobWaits;
  now: () => number;
  knownQueues: () => string[];
  wake: (queue: string) => void;
  /** Aborts a job running in this process; true if it was. */
  abortLocal: (id: string) => boolean;
}

export interface ListFilter {
  queue?: string;
  status?: JobStatus;
  key?: string;
  /** Pending jobs due now (true: the backlog) or scheduled for later (false); implies status "pending". */
  due?: boolean;
  /** Jobs that have started at least this many attempts (2: those that failed at least once). */
  minAttempts?: number;
  /** A flow parent's id (a `tw.batch` completion job is one too): its direct children only, not theirs. */
  parent?: string;
  /** Newest first (default) or oldest first. */
  order?: "newest" | "oldest";
  /** Keyset pagination, newest first: pass the last id of the previous page. */
  before?: string;
  /** Keyset pagination, oldest first: pass the last id of the previous page. */
  after?: string;
  /** 1 to 500; default 50. */
  limit?: number;
}

/** `tw.jobs`: look up and operate on jobs, in any queue this engine declares. */
export class Jobs {
  constructor(private readonly deps: JobsDeps) {}

  async get(id: string): Promise<Job | null> {
    return this.deps.store.get({ id: checkId(id, "jobs.get: id") });
  }

  /** Newest first; page with `before: lastPage.at(-1).id`. */
  async list(filter: ListFilter = {}): Promise<Job[]> {
    if (typeof filter !== "object" || filter === null) throw new InvalidInputError(`jobs.list: expected a filter object { queue?, status?, key?, due?, minAttempts?, parent?, order?, before?, after?, limit? }, got ${describe(filter)}`);
    const { queue, status, key, due, minAttempts, parent, order = "newest", before, after, limit = 50 } = filter;
    if (queue !== undefined) this.checkQueue(queue, "jobs.list");
    if (status !== undefined && !JOB_STATUSES.includes(status)) {
      throw new InvalidInputError(`jobs.list: status must be one of ${JOB_STATUSES.join(", ")}, got ${describe(status)}`);
    }
    if (key !== undefined) checkText(key, "jobs.list: key", { max: MAX_INDEXED_TEXT });
    checkInt(limit, "jobs.list: limit", { min: 1, max: 500 });
    if (due !== undefined && typeof due !== "boolean") throw new InvalidInputError(`jobs.list: due must be true (due now) or false (scheduled for later), got ${describe(due)}`);
    if (due !== undefined && status !== undefined && status !== "pending") throw new InvalidInputError(`jobs.list: due applies to pending jobs, not to status "${status}"`);
    if (minAttempts !== undefined) checkInt(minAttempts, "jobs.list: minAttempts", { min: 0, max: INT32_MAX });
    if (order !== "newest" && order !== "oldest") throw new InvalidInputError(`jobs.list: order must be "newest" or "oldest", got ${describe(order)}`);
    if (before !== undefined && order !== "newest") throw new InvalidInputError(`jobs.list: before pages a newest-first list; an oldest-first list pages with after`);
    if (after !== undefined && order !== "oldest") throw new InvalidInputError(`jobs.list: after pages an oldest-first list (order: "oldest"); a newest-first list pages with before`);
    // Checked with the other fields, before the store is asked anything.
    const parentId = parent === undefined ? undefined : checkId(parent, "jobs.list: parent");
    const now = this.deps.now();
    return this.deps.store.list({
      queue, status, key, due, now, minAttempts, parent: parentId, order, limit,
      before: before === undefined ? undefined : checkId(before, "jobs.list: before"),
      after: after === undefined ? undefined : checkId(after, "jobs.list: after"),
    });
  }

  /**
   * Waits for a job to end, from any process: resolves with its result (null if the handler returned
   * nothing) once it succeeded; rejects with JobFailedError once it failed for good or was cancelled
   * (`error.job` holds it), JobWaitTimeoutError after `timeout` (the job goes on), JobNotFoundError
   * if no job has this id. `onProgress` hears each progress value it reports meanwhile.
   */
  async wait<R = unknown>(given: string, options: WaitOptions = {}): Promise<R> {
    const id = checkId(given, "jobs.wait: id");
    const job = await this.deps.waits.wait(id, this.deps.waits.check(options, "jobs.wait"));
    return job.result as R;
  }

  /**
   * Deletes a finished job (succeeded, failed or cancelled) now, before its retention would. Returns
   * it. A key it held for a period (`unique`, `throttle`) is free again.
   */
  async delete(given: string): Promise<Job> {
    const id = checkId(given, "jobs.delete: id");
    const job = await this.deps.store.deleteFinished({ id });
    if (!job) {
      const current = await this.mustGet(id);
      throw new JobStateError(`job ${id} is ${current.status}; only finished jobs (succeeded, failed, cancelled) can be deleted: cancel it first`);
    }
    this.deps.logger.info("job.deleted", { queue: job.queue, id: job.id, status: job.status });
    return job;
  }

  /** A pending job scheduled for later runs now (its runAt becomes now); one already due is left as it is. */
  async promote(given: string): Promise<Job> {
    const id = checkId(given, "jobs.promote: id");
    const job = await this.deps.store.promote({ id, now: this.deps.now() });
    if (!job) {
      const current = await this.mustGet(id);
      if (current.status === "pending") throw new JobStateError(`job ${id} waits for ${current.children!.pending} of its children; a flow's parent runs when they end`);
      throw new JobStateError(`job ${id} is ${current.status}; only a pending job can be promoted`);
    }
    this.deps.logger.info("job.promoted", { queue: job.queue, id: job.id });
    this.deps.wake(job.queue);
    return job;
  }

  /** Job counts by status, per queue. */
  async counts(queue?: string): Promise<QueueCounts[]> {
    if (queue !== undefined) this.checkQueue(queue, "jobs.counts");
    return this.deps.store.countByStatus({ queues: queue === undefined ? undefined : [queue] });
  }

  /**
   * A failed or cancelled job runs again, with a fresh set of attempts; its last error is kept. In a
   * flow a retried child reopens its parent's wait; a child of a running parent, and a parent that
   * fails with a child that has failed, are refused (JobStateError).
   */
  async retry(given: string): Promise<Job> {
    const id = checkId(given, "jobs.retry: id");
    const job = await this.deps.store.retry({ id, now: this.deps.now() });
    if (job) {
      this.deps.logger.info("job.retried", { queue: job.queue, id: job.id });
      this.deps.wake(job.queue);
      return job;
    }
    const current = await this.mustGet(id);
    if (current.status === "failed" || current.status === "cancelled") {
      throw new JobStateError(`job ${id} cannot be retried: its key "${current.key}" is held by another live job of queue "${current.queue}"`);
    }
    throw new JobStateError(`job ${id} is ${current.status}; only failed or cancelled jobs can be retried`);
  }

  /** Every failed job of `queue` runs again. Returns how many. */
  async retryFailed(queue: string): Promise<number> {
    this.checkQueue(queue, "jobs.retryFailed");
    const count = await this.deps.store.retryFailed({ queue, now: this.deps.now() });
    this.deps.logger.info("job.retried", { queue, count });
    if (count) this.deps.wake(queue);
    return count;
  }

  /**
   * A pending job will not run; a running job's outcome will be refused and, if it runs in this
   * process, its signal is aborted (elsewhere the owner notices at its next heartbeat).
   */
  async cancel(given: string): Promise<Job> {
    const id = checkId(given, "jobs.cancel: id");
    const job = await this.deps.store.cancel({ id, now: this.deps.now() });
    if (!job) {
      const current = await this.mustGet(id);
      throw new JobStateError(`job ${id} is ${current.status}; only pending or running jobs can be cancelled`);
    }
    this.deps.logger.info("job.cancelled", { queue: job.queue, id: job.id });
    this.deps.abortLocal(job.id);
    this.deps.waits.signal(job.id);
    return job;
  }

  /**
   * Every pending job of `queue`, due now or scheduled for later, is cancelled; running jobs go on.
   * A flow parent counts each cancelled child as failed. Returns how many.
   */
  async cancelPending(queue: string): Promise<number> {
    this.checkQueue(queue, "jobs.cancelPending");
    const { cancelled, waited } = await this.deps.store.cancelPending({ queue, now: this.deps.now() });
    this.deps.logger.info("job.cancelled", { queue, count: cancelled });
    for (const id of waited) this.deps.waits.signal(id);
    return cancelled;
  }

  private async mustGet(id: string): Promise<Job> {
    const job = await this.deps.store.get({ id });
    if (!job) throw new JobNotFoundError(id);
    return job;
  }

  /** A queue this engine declares; a name no store could hold is refused as such first, not reported unknown. */
  private checkQueue(queue: string, where: string): void {
    checkText(queue, `${where}: queue`, { max: MAX_INDEXED_TEXT });
    const known = this.deps.knownQueues();
    if (!known.includes(queue)) throw new UnknownQueueError(queue, known);
  }
}

