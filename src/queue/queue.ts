import { InvalidInputError, describe } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { InsertBatcher, type Written } from "./inserts.js";
import type { EnqueuedJob, Job } from "./job.js";
import { toNewJobRow, type EnqueueItem, type EnqueueOptions, type QueueConfig } from "./options.js";
import { newJob } from "./rows.js";
import type { InsertResult, NewJobRow, QueueStore, SqlClient } from "./store.js";
import type { QueueWorker } from "./worker.js";

export interface QueueDeps {
  store: QueueStore;
  logger: Logger;
  now: () => number;
  /** This process's worker of the queue, when it has a handler: an enqueue wakes it, or hands it the jobs. */
  worker?: QueueWorker;
}

/** A declared queue: where jobs are enqueued. Its worker, if it has a handler, runs in the engine. */
export class Queue<P = unknown> {
  /** Enqueues outside a caller's transaction, coalesced while an insert is on its way. */
  private readonly inserts = new InsertBatcher((rows) => this.write(rows));

  constructor(
    readonly config: QueueConfig,
    private readonly deps: QueueDeps,
  ) {}

  get name(): string {
    return this.config.name;
  }

  /** Enqueues one job. With a `key` held by a live job of this queue, returns that job with `duplicate: true`. */
  async enqueue(payload: P, options: EnqueueOptions = {}): Promise<EnqueuedJob<P>> {
    if (options === null || typeof options !== "object") throw new InvalidInputError(`queue "${this.name}".enqueue: options must be an object, got ${describe(options)}`);
    const [job] = await this.insert([{ ...options, payload }], options.tx, "enqueue");
    return job!;
  }

  /** Enqueues many jobs in one round trip (one transaction): all are written, or none. */
  async enqueueMany(items: EnqueueItem<P>[], options: { tx?: SqlClient } = {}): Promise<EnqueuedJob<P>[]> {
    if (!Array.isArray(items)) throw new InvalidInputError(`queue "${this.name}".enqueueMany: expected an array of { payload, key?, runAt?, priority? }, got ${describe(items)}`);
    if (items.length === 0) return [];
    return this.insert(items, options.tx, "enqueueMany");
  }

  private async insert(items: EnqueueItem<P>[], tx: SqlClient | undefined, method: string): Promise<EnqueuedJob<P>[]> {
    const now = this.deps.now();
    // Every item is validated and serialised before the first byte is written.
    const rows = items.map((item, i) => {
      if (item === null || typeof item !== "object") throw new InvalidInputError(`queue "${this.name}".${method}[${i}]: expected { payload, ... }, got ${describe(item)}`);
      const where = items.length > 1 || method === "enqueueMany" ? `queue "${this.name}".${method}[${i}]` : `queue "${this.name}".${method}`;
      return toNewJobRow(this.config, item.payload, item, now, where);
    });
    // Inside the caller's transaction the insert is theirs to commit: it goes alone, as it came.
    const { results, now: writtenAt, claimed }: Written = tx
      ? { results: await this.deps.store.insertMany({ queue: this.name, rows, now, tx }), now, claimed: false }
      : await this.inserts.add(rows);
    const jobs = results.map((result, i): EnqueuedJob<P> =>
      result.duplicate ? { ...(result.existing as Job<P>), duplicate: true } : { ...newJob(result.id, this.name, rows[i]!, writtenAt, claimed, items[i]!.payload), duplicate: false },
    );
    const { logger } = this.deps;
    if (logger.enabled("debug")) {
      for (const job of jobs) logger.debug("job.enqueued", { queue: this.name, id: job.id, key: job.key, runAt: job.runAt, duplicate: job.duplicate });
    }
    // Inside the caller's transaction the job is not visible yet; the NOTIFY sent at commit wakes workers.
    // A job handed off is already running here, and a duplicate adds nothing: nobody needs waking.
    if (!tx && !claimed && results.some((r) => !r.duplicate)) this.deps.worker?.wake();
    return jobs;
  }

  /**
   * One insert of rows outside a transaction. Jobs due now, enqueued next to this queue's worker when
   * it has caught up and has a free slot for each, are written already claimed by it and handed to it
   * (a hand-off: see QueueWorker.handoff).
   */
  private async write(rows: NewJobRow[]): Promise<Written> {
    const now = this.deps.now();
    const handoff = rows.every((row) => row.runAt <= now) ? (this.deps.worker?.handoff(rows.length) ?? null) : null;
    let results: InsertResult[];
    try {
      results = await this.deps.store.insertMany({ queue: this.name, rows, now, claim: handoff ? { workerId: handoff.workerId, leaseUntil: handoff.leaseUntil } : undefined });
    } catch (error) {
      handoff?.cancel();
      throw error;
    }
    if (handoff) {
      // The handler gets its own copy of the payload, as from a claim, not the caller's object.
      handoff.take(results.flatMap((result, i) => (result.duplicate ? [] : [newJob(result.id, this.name, rows[i]!, now, true, JSON.parse(rows[i]!.payload))])));
    }
    return { results, now, claimed: handoff !== null };
  }
}
