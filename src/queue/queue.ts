import { InvalidInputError, describe } from "../core/errors.js";
import { stringifyChecked } from "../core/json.js";
import type { Logger } from "../core/logger.js";
import { InsertBatcher, type Written } from "./inserts.js";
import type { EnqueuedJob, Job } from "./job.js";
import { toJobFields, toNewJobRow, type EnqueueItem, type EnqueueOptions, type QueueConfig } from "./options.js";
import { newJob } from "./rows.js";
import type { InsertResult, JobFields, NewJobRow, QueueStore, RowSlices, SqlClient } from "./store.js";
import type { QueueWorker } from "./worker.js";

export interface QueueDeps {
  store: QueueStore;
  logger: Logger;
  now: () => number;
  /** This process's worker of the queue, when it has a handler: an enqueue wakes it, or hands it the jobs. */
  worker?: QueueWorker;
}

/**
 * Rows from which a bulk enqueue is written in slices when the store can overlap them (see
 * QueueStore.insertSliced); smaller calls go together with other calls' rows (InsertBatcher).
 */
const SLICED_FROM = 500;

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
    const where = (i: number) => (items.length > 1 || method === "enqueueMany" ? `queue "${this.name}".${method}[${i}]` : `queue "${this.name}".${method}`);
    const check = (item: EnqueueItem<P>, i: number) => {
      if (item === null || typeof item !== "object") throw new InvalidInputError(`${where(i)}: expected { payload, ... }, got ${describe(item)}`);
    };
    const { store } = this.deps;
    let rows: JobFields[];
    let written: Written;
    if (!tx && store.insertSliced && items.length >= SLICED_FROM) {
      // Every item is validated before the first byte is written; the payloads are serialised a
      // slice at a time, each while the store writes the one before.
      rows = items.map((item, i) => (check(item, i), toJobFields(this.config, item.payload, item, now, where(i))));
      let at = 0;
      const slices: RowSlices = {
        count: rows.length,
        next: (chars) => {
          const slice: NewJobRow[] = [];
          for (let used = 0; at < rows.length && (slice.length === 0 || used < chars); at++) {
            const i = at;
            const payload = stringifyChecked(items[i]!.payload, () => ({ where: where(i) }));
            used += payload.length;
            const { key, group, priority, runAt, maxAttempts, maxAttemptsFromQueue } = rows[i]!;
            slice.push({ payload, key, group, priority, runAt, maxAttempts, maxAttemptsFromQueue });
          }
          return slice;
        },
      };
      written = { results: await store.insertSliced({ queue: this.name, rows: slices, now }), now, claimed: false };
    } else {
      // Every item is validated and serialised before the first byte is written.
      const full = items.map((item, i) => (check(item, i), toNewJobRow(this.config, item.payload, item, now, where(i))));
      rows = full;
      // Inside the caller's transaction the insert is theirs to commit: it goes alone, as it came.
      written = tx ? { results: await store.insertMany({ queue: this.name, rows: full, now, tx }), now, claimed: false } : await this.inserts.add(full);
    }
    const { results, now: writtenAt, claimed } = written;
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
