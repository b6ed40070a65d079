import { MAX_INDEXED_TEXT, checkId, checkInt, checkText } from "../core/bounds.js";
import { InvalidInputError, describe } from "../core/errors.js";
import { JobNotFoundError, JobStateError, UnknownQueueError } from "./errors.js";
import type { Logger } from "../core/logger.js";
import { JOB_STATUSES, type Job, type JobStatus } from "./job.js";
import type { QueueCounts, QueueStore } from "./store.js";

export interface JobsDeps {
  store: QueueStore;
  logger: Logger;
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
  /** Keyset pagination: pass the last id of the previous page. */
  before?: string;
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
    if (typeof filter !== "object" || filter === null) throw new InvalidInputError(`jobs.list: expected a filter object { queue?, status?, key?, before?, limit? }, got ${describe(filter)}`);
    const { queue, status, key, before, limit = 50 } = filter;
    if (queue !== undefined) this.checkQueue(queue, "jobs.list");
    if (status !== undefined && !JOB_STATUSES.includes(status)) {
      throw new InvalidInputError(`jobs.list: status must be one of ${JOB_STATUSES.join(", ")}, got ${describe(status)}`);
    }
    if (key !== undefined) checkText(key, "jobs.list: key", { max: MAX_INDEXED_TEXT });
    checkInt(limit, "jobs.list: limit", { min: 1, max: 500 });
    return this.deps.store.list({ queue, status, key, before: before === undefined ? undefined : checkId(before, "jobs.list: before"), limit });
  }

  /** Job counts by status, per queue. */
  async counts(queue?: string): Promise<QueueCounts[]> {
    if (queue !== undefined) this.checkQueue(queue, "jobs.counts");
    return this.deps.store.countByStatus({ queues: queue === undefined ? undefined : [queue] });
  }

  /** A failed or cancelled job runs again, with a fresh set of attempts; its last error is kept. */
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
    return job;
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

