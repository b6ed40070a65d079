import { InvalidInputError, StoreUnavailableError, describe } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { SPAN_KIND, inSpan, messagingAttributes, traceContextOf, type SpanLike, type TracerLike } from "../core/tracing.js";
import { InsertBatcher, type Written } from "./inserts.js";
import type { EnqueuedJob, Job } from "./job.js";
import { keyModeOf, serialisePayload, toJobFields, toNewJobRow, type EnqueueItem, type EnqueueOptions, type QueueConfig } from "./options.js";
import { newJob, setStarted } from "./store/rows.js";
import type { InsertResult, JobFields, KeyMode, NewJobRow, QueueStore, RowSlices, SqlClient } from "./store/store.js";
import type { JobWaits, WaitOptions } from "./waits.js";
import type { QueueWorker } from "./worker/worker.js";
import { layOutFlow, type FlowJob, type FlowSpec } from "./flows.js";

export interface QueueDeps {
  store: QueueStore;
  logger: Logger;
  now: () => number;
  /** This process's worker of the queue, when it has a handler: an enqueue wakes it, or hands it the jobs. */
  worker?: QueueWorker;
  waits: JobWaits;
  /** The declared queues' configs, for a flow's children on other queues. */
  configOf: (queue: string) => QueueConfig | undefined;
  knownQueues: () => string[];
  /** Something is due on `queue`: its worker here, if any, looks. */
  wake: (queue: string) => void;
  /** Enqueues get a span, and their jobs its trace context, when the engine traces. */
  tracer?: TracerLike;
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

  /**
   * Enqueues one job and waits for it to end, wherever it runs: resolves with its result, or rejects
   * as `tw.jobs.wait` does (JobFailedError, JobWaitTimeoutError after `timeout`). With a `key` held by a
   * live job, waits for that job instead. Not inside a transaction (`tx`): the job would not be
   * visible until it commits; enqueue with `tx`, commit, then `tw.jobs.wait(job.id)`.
   */
  async enqueueAndWait<R = unknown>(payload: P, options: Omit<EnqueueOptions, "tx"> & WaitOptions = {}): Promise<R> {
    const where = `queue "${this.name}".enqueueAndWait`;
    if (options === null || typeof options !== "object") throw new InvalidInputError(`${where}: options must be an object, got ${describe(options)}`);
    const { timeout, onProgress, signal, ...enqueue } = options;
    if ("tx" in enqueue) throw new InvalidInputError(`${where}: tx is not supported (the job is not visible until your transaction commits): enqueue with tx, commit, then tw.jobs.wait(job.id)`);
    const wait = this.deps.waits.check({ timeout, onProgress, signal }, where);
    // Listening before the job exists, so no signal of its end can come before anyone hears; within
    // the wait's timeout and signal, and if listening does not start in time nothing is written.
    if (!this.deps.waits.listening) await this.deps.waits.bounded(this.deps.waits.ready(), wait, () => new StoreUnavailableError(`${where}: the store did not start listening for the job's end within the ${wait.timeoutMs} ms timeout; nothing was enqueued`));
    const [job] = await this.insert([{ ...enqueue, payload }], undefined, "enqueueAndWait", true);
    const ended = await this.deps.waits.wait(job!.id, wait, !job!.duplicate);
    return ended.result as R;
  }

  /**
   * Enqueues a flow in one transaction (all of it, or nothing): this queue's job (the root) runs only
   * once every child ended, and reads their results with `ctx.childResults()`. Children may be on any
   * declared queue and have children of their own. A child that fails for good (or is cancelled) fails
   * its parent, or with `onChildFailure: "continue"` is counted (`job.children.failed`) and the parent
   * runs anyway. Returns the flow's ids, as given.
   */
  async enqueueFlow(spec: FlowSpec<P>): Promise<FlowJob> {
    const { tracer } = this.deps;
    if (!tracer) return this.writeFlow(spec);
    return inSpan(tracer, `enqueue ${this.name}`, { kind: SPAN_KIND.PRODUCER, attributes: messagingAttributes("send", "enqueue", this.name) }, async (span) => {
      const flow = await this.writeFlow(spec, traceContextOf(span) ?? undefined, span);
      span.setAttribute("messaging.message.id", flow.id);
      return flow;
    });
  }

  private async writeFlow(spec: FlowSpec<P>, traceContext?: string, span?: SpanLike): Promise<FlowJob> {
    const { store, now: clockNow, configOf, knownQueues, wake } = this.deps;
    const now = clockNow();
    const { nodes, tree } = layOutFlow({ queue: this.name, spec }, configOf, knownQueues, now, `queue "${this.name}".enqueueFlow`);
    if (traceContext) for (const node of nodes) node.traceContext = traceContext;
    span?.setAttribute("messaging.batch.message_count", nodes.length);
    const ids = await store.insertFlow({ nodes, now });
    for (const queue of new Set(nodes.filter((n) => n.children === 0 && n.runAt <= now).map((n) => n.queue))) wake(queue);
    this.deps.logger.info("flow.enqueued", { queue: this.name, id: ids[0], jobs: ids.length });
    return tree(ids);
  }

  /** Enqueues many jobs in one round trip (one transaction): all are written, or none. */
  async enqueueMany(items: EnqueueItem<P>[], options: { tx?: SqlClient } = {}): Promise<EnqueuedJob<P>[]> {
    if (!Array.isArray(items)) throw new InvalidInputError(`queue "${this.name}".enqueueMany: expected an array of { payload, key?, runAt?, priority? }, got ${describe(items)}`);
    if (items.length === 0) return [];
    return this.insert(items, options.tx, "enqueueMany");
  }

  /**
   * Writes the items as jobs; with a tracer, in an `enqueue <queue>` span (the messaging conventions'
   * send, its context the creation context of every job it writes: one span per call, not per job,
   * so a bulk enqueue of 10,000 jobs does not make 10,000 spans).
   */
  private insert(items: EnqueueItem<P>[], tx: SqlClient | undefined, method: string, waited = false): Promise<EnqueuedJob<P>[]> {
    const { tracer } = this.deps;
    if (!tracer) return this.insertItems(items, tx, method, waited);
    const attributes = messagingAttributes("send", "enqueue", this.name);
    if (items.length > 1) attributes["messaging.batch.message_count"] = items.length;
    return inSpan(tracer, `enqueue ${this.name}`, { kind: SPAN_KIND.PRODUCER, attributes }, async (span) => {
      const jobs = await this.insertItems(items, tx, method, waited, traceContextOf(span) ?? undefined);
      if (jobs.length === 1) {
        span.setAttribute("messaging.message.id", jobs[0]!.id);
        span.setAttribute("tickwork.job.duplicate", jobs[0]!.duplicate);
      }
      return jobs;
    });
  }

  private async insertItems(items: EnqueueItem<P>[], tx: SqlClient | undefined, method: string, waited: boolean, traceContext?: string): Promise<EnqueuedJob<P>[]> {
    const now = this.deps.now();
    const where = (i: number) => (items.length > 1 || method === "enqueueMany" ? `queue "${this.name}".${method}[${i}]` : `queue "${this.name}".${method}`);
    const check = (item: EnqueueItem<P>, i: number) => {
      if (item === null || typeof item !== "object") throw new InvalidInputError(`${where(i)}: expected { payload, ... }, got ${describe(item)}`);
    };
    const { store } = this.deps;
    let rows: JobFields[];
    let written: Written;
    const modes = items.map((item, i) => (check(item, i), keyModeOf(item, where(i))));
    if (modes.some((m) => m !== null)) {
      if (tx) throw new InvalidInputError(`${where(modes.findIndex((m) => m !== null))}: dedupe "replace", debounce, throttle and unique are not supported inside your transaction (tx)`);
      const full = items.map((item, i) => toNewJobRow(this.config, item.payload, item, now, where(i)));
      mark(full, waited, traceContext);
      rows = full;
      written = await this.writeKeyed(full, modes, now);
    } else if (!tx && store.insertSliced && items.length >= SLICED_FROM) {
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
            const payload = serialisePayload(this.config, items[i]!.payload, () => where(i));
            used += payload.length;
            const { key, group, priority, runAt, maxAttempts, maxAttemptsFromQueue } = rows[i]!;
            slice.push(traceContext ? { payload, key, group, priority, runAt, maxAttempts, maxAttemptsFromQueue, traceContext } : { payload, key, group, priority, runAt, maxAttempts, maxAttemptsFromQueue });
          }
          return slice;
        },
      };
      written = { results: await store.insertSliced({ queue: this.name, rows: slices, now }), now, claimed: false };
    } else {
      // Every item is validated and serialised before the first byte is written.
      const full = items.map((item, i) => (check(item, i), toNewJobRow(this.config, item.payload, item, now, where(i))));
      mark(full, waited, traceContext);
      rows = full;
      // Inside the caller's transaction the insert is theirs to commit: it goes alone, as it came.
      written = tx ? { results: await store.insertMany({ queue: this.name, rows: full, now, tx }), now, claimed: false } : await this.inserts.add(full);
    }
    const { results, now: writtenAt, claimed } = written;
    const jobs = results.map((result, i): EnqueuedJob<P> => {
      if (result.duplicate) return { ...(result.existing as Job<P>), duplicate: true };
      const { handedTo } = result;
      const job = newJob(result.id, this.name, rows[i]!, writtenAt, claimed || handedTo !== undefined, items[i]!.payload);
      // Handed to another process's worker: the row is running under its lease.
      // Handed to another process's worker: written running under its lease, started when it says so.
      if (handedTo) {
        Object.assign(job, { maxAttempts: handedTo.maxAttempts, lease: { workerId: handedTo.workerId, until: handedTo.leaseUntil } });
        setStarted(job, null);
      }
      return { ...job, duplicate: false };
    });
    const { logger } = this.deps;
    if (logger.enabled("debug")) {
      for (const job of jobs) logger.debug("job.enqueued", { queue: this.name, id: job.id, key: job.key, runAt: job.runAt, duplicate: job.duplicate });
    }
    // Inside the caller's transaction the job is not visible yet; the NOTIFY sent at commit wakes workers.
    // A job handed off is already running here, and a duplicate adds nothing: nobody needs waking.
    if (!tx && !claimed && results.some((r) => !r.duplicate && !r.handedTo)) this.deps.worker?.wake();
    return jobs;
  }

  /**
   * Rows of which some have a key mode, in order: each keyed one in its own transaction of
   * conditional writes (see KeyedSql), the others as plain inserts. Not one transaction for the batch:
   * a repeated key's answer depends on every write before it, in any process.
   */
  private async writeKeyed(rows: NewJobRow[], modes: (KeyMode | null)[], now: number): Promise<Written> {
    const results: InsertResult[] = [];
    for (const [i, row] of rows.entries()) {
      const mode = modes[i];
      // Each row at the time of its own write, not of the call: the rows before it took their time.
      const at = i === 0 ? now : this.deps.now();
      // A debounced job runs `ms` after its enqueue: the job answered says so, as its row does.
      if (mode?.kind === "debounce") row.runAt = at + mode.ms;
      const [result] = mode ? [await this.deps.store.insertKeyed({ queue: this.name, row: row as NewJobRow & { key: string }, mode, now: at })] : await this.deps.store.insertMany({ queue: this.name, rows: [row], now: at });
      results.push(result!);
    }
    return { results, now, claimed: false };
  }

  /**
   * One insert of rows outside a transaction. Jobs due now, enqueued next to this queue's worker when
   * it has caught up and has a free slot for each, are written already claimed by it and handed to it
   * (a hand-off: see Handoffs).
   */
  private async write(rows: NewJobRow[]): Promise<Written> {
    const now = this.deps.now();
    const handoff = rows.every((row) => row.runAt <= now) ? (this.deps.worker?.handoff(rows.length) ?? null) : null;
    let results: InsertResult[];
    try {
      results = await this.deps.store.insertMany({
        queue: this.name, rows, now,
        ...(handoff ? { claim: { workerId: handoff.workerId, leaseUntil: handoff.leaseUntil } } : { passOver: this.deps.worker?.workerId }),
      });
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

/** Marks rows awaited (`enqueueAndWait`) and with their enqueue's trace context; an untraced, unawaited row is left as it is. */
function mark(rows: NewJobRow[], waited: boolean, traceContext: string | undefined): void {
  if (!waited && !traceContext) return;
  for (const row of rows) {
    if (waited) row.waited = true;
    if (traceContext) row.traceContext = traceContext;
  }
}
