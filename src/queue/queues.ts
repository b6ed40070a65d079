import type { Clock } from "../core/clock.js";
import { InvalidInputError, describe } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { TracerLike } from "../core/tracing.js";
import { JobAbortedError, UnknownQueueError } from "./errors.js";
import type { EnqueuedJob } from "./job.js";
import { Jobs } from "./jobs.js";
import { QueueControls } from "./controls.js";
import { Limiters } from "./flow-control/limiter.js";
import { parseQueueOptions, type BatchQueueOptions, type EnqueueOptions, type QueueOptions } from "./options.js";
import { Pruner, type Retention } from "./worker/pruner.js";
import { Queue } from "./queue.js";
import { Rescuer } from "./worker/rescuer.js";
import type { HandedJobs, QueueStore } from "./store/store.js";
import { JobWaits } from "./waits.js";
import { MAX_FLOW_JOBS } from "./flows.js";

/** `tw.batch`'s options: the items' queue, and the job to run once every item has ended. */
export interface BatchOptions {
  queue: string;
  onComplete: { queue: string; payload: unknown };
}

/** A batch as written: the completion job's id, and the items' job ids in the order given. */
export interface BatchJobs {
  id: string;
  jobs: string[];
}
import { QueueWorker } from "./worker/worker.js";

export interface QueuesDeps {
  store: QueueStore;
  clock: Clock;
  logger: Logger;
  instanceId: string;
  /** Longest an idle worker waits before looking for due jobs by itself. */
  pollIntervalMs: number;
  retention: Retention;
  /** The store's signals about awaited jobs from every process, if it has them. */
  subscribeJobs?: (onJob: (id: string) => void) => Promise<() => Promise<void>>;
  /** Spans for enqueues and job runs, when the engine traces. */
  tracer?: TracerLike;
}

/** What one `runDue` pass did, and when the queues next have work. */
export interface QueuesPass {
  /** Jobs run in this pass. */
  ran: number;
  /** The pass stopped at its limit with jobs still due: come back at once. */
  more: boolean;
  /** When a job is next due, a lease next lapses or a rate-limited queue's window reopens; null: none. */
  nextAt: number | null;
}

/**
 * The queue module as the engine drives it: the declared queues, this process's workers for those
 * with a handler, and their maintenance (the rescuer and the pruner).
 */
export class Queues {
  /** `tw.jobs`: jobs of every declared queue, by id. */
  readonly jobs: Jobs;
  /** `tw.queues`: pause, resume and flow-control status. */
  readonly controls: QueueControls;
  /** `tw.limiter(...)`: budgets shared by every process. */
  readonly limiters: Limiters;
  private readonly declared = new Map<string, Queue<unknown>>();
  private readonly workers = new Map<string, QueueWorker>();
  private readonly rescuer: Rescuer;
  private readonly pruner: Pruner;
  /** Callers awaiting jobs' ends (jobs.wait, enqueueAndWait). */
  private readonly waits: JobWaits;
  private started = false;

  constructor(private readonly deps: QueuesDeps) {
    const { store, clock, logger, retention } = deps;
    this.waits = new JobWaits({ store, clock, subscribe: deps.subscribeJobs });
    this.jobs = new Jobs({
      store,
      logger,
      waits: this.waits,
      now: () => clock.now(),
      knownQueues: () => this.names,
      wake: (queue) => this.wake(queue),
      abortLocal: (id) => this.abort(id),
    });
    this.controls = new QueueControls({
      store,
      logger,
      now: () => clock.now(),
      config: (name) => this.declared.get(name)?.config,
      names: () => this.names,
      worker: (name) => this.workers.get(name),
    });
    this.limiters = new Limiters({ store, clock, logger });
    this.rescuer = new Rescuer({ store, clock, logger, workers: this.workers });
    this.pruner = new Pruner({ store, logger, retention });
  }

  /** The declared queues' names, in declaration order. */
  get names(): string[] {
    return [...this.declared.keys()];
  }

  /**
   * Declares a queue; with a handler, this process gets a worker for it (running at once if started).
   * A queue declared already is looked up when no options are given (a producer's handle for a queue
   * a config declared), and refused with options: one declaration says how a queue runs.
   */
  declare<P>(name: string, options: QueueOptions<P> | BatchQueueOptions<P> | undefined): Queue<P> {
    const existing = this.declared.get(name);
    if (existing && options === undefined) return existing as Queue<P>;
    if (existing) {
      throw new InvalidInputError(
        `queue "${name}" is already declared: keep the Queue its declaration returned, or get it again with tw.queue(${JSON.stringify(name)}) and no options`,
      );
    }
    const config = parseQueueOptions(name, options ?? {});
    const ceiling = this.deps.store.maxPayloadBytes;
    if (ceiling !== undefined && config.maxPayloadBytes > ceiling) {
      throw new InvalidInputError(`queue "${name}": maxPayloadBytes ${config.maxPayloadBytes} is over this store's ceiling of ${ceiling} bytes`);
    }
    const { store, clock, logger, instanceId, pollIntervalMs, tracer } = this.deps;
    const waits = this.waits;
    const worker = config.handler ? new QueueWorker(config, { store, clock, logger, instanceId, pollIntervalMs, waits, wake: (name) => this.wake(name), tracer }) : undefined;
    const queue = new Queue<P>(config, {
      store, logger, now: () => clock.now(), worker, waits, tracer,
      configOf: (name) => this.declared.get(name)?.config, knownQueues: () => this.names, wake: (name) => this.wake(name),
    });
    this.declared.set(name, queue as Queue<unknown>);
    if (worker) {
      this.workers.set(name, worker);
      if (this.started) worker.start();
    }
    return queue;
  }

  /** Enqueues on a declared queue by name. */
  async enqueue(queue: string, payload: unknown, options?: EnqueueOptions): Promise<EnqueuedJob> {
    const q = this.declared.get(queue);
    if (!q) throw new UnknownQueueError(queue, this.names);
    return q.enqueue(payload, options);
  }

  /**
   * Enqueues `items` as jobs of `queue` and one completion job (`onComplete`) that runs once, when all
   * of them have ended, failed ones included: a flow whose root is the completion job, reading the
   * counts in `job.children` and each result with `ctx.childResults()`.
   */
  async batch<P>(items: P[], options: BatchOptions): Promise<BatchJobs> {
    const where = "tw.batch";
    if (!Array.isArray(items)) throw new InvalidInputError(`${where}: items must be an array of payloads, got ${describe(items)}`);
    if (items.length === 0) throw new InvalidInputError(`${where}: items is empty: a batch needs at least one item`);
    if (items.length >= MAX_FLOW_JOBS) throw new InvalidInputError(`${where}: items holds ${items.length} payloads; a batch holds at most ${MAX_FLOW_JOBS - 1}`);
    if (options === null || typeof options !== "object") throw new InvalidInputError(`${where}: options must be { queue, onComplete: { queue, payload } }, got ${describe(options)}`);
    for (const name of Object.keys(options)) {
      if (name === "tx") throw new InvalidInputError(`${where}: tx is not supported: a batch is written in a transaction of its own (all of it, or nothing); write it after your transaction commits`);
      if (name !== "queue" && name !== "onComplete") throw new InvalidInputError(`${where}: unknown option "${name}" (expected queue, onComplete)`);
    }
    const { queue, onComplete } = options;
    if (typeof queue !== "string") throw new InvalidInputError(`${where}: queue must be a declared queue's name, got ${describe(queue)}`);
    if (onComplete === null || typeof onComplete !== "object") throw new InvalidInputError(`${where}: onComplete must be { queue, payload }, got ${describe(onComplete)}`);
    for (const name of Object.keys(onComplete)) if (name !== "queue" && name !== "payload") throw new InvalidInputError(`${where}: unknown option "onComplete.${name}" (expected queue, payload)`);
    const done = this.declared.get(onComplete.queue);
    if (!done) throw new UnknownQueueError(String(onComplete.queue), this.names);
    const flow = await done.enqueueFlow({
      payload: onComplete.payload,
      onChildFailure: "continue",
      children: items.map((payload) => ({ queue, payload })),
    });
    return { id: flow.id, jobs: flow.children.map((c) => c.id) };
  }

  /** Something may be due on `queue` (a notification, a retry): its worker here, if any, looks. */
  wake(queue: string): void {
    this.workers.get(queue)?.wake();
  }

  wakeAll(): void {
    for (const worker of this.workers.values()) worker.wake();
  }

  /**
   * Jobs another process enqueued into the offered slots of `workerId` (see SlotOffer), if it is a
   * worker of this process; `*` for every worker: notifications may have been missed.
   */
  handed(handoff: HandedJobs | "*"): void {
    for (const worker of this.workers.values()) {
      if (handoff === "*") worker.handed("*");
      else if (worker.workerId === handoff.workerId) return worker.handed(handoff);
    }
  }

  /** Another process paused `queue` (group null) or one of its groups: this process's worker of it hands its prefetched jobs back. */
  pausedElsewhere(queue: string, group: string | null): void {
    this.workers.get(queue)?.pausedHere(group);
  }

  /** Aborts a cancelled job's signal if a worker of this process holds it; true if one did. */
  abort(id: string): boolean {
    return [...this.workers.values()].some((w) => w.abort(id, new JobAbortedError("cancelled", `job ${id} was cancelled`)));
  }

  /**
   * Runs due jobs queue by queue, in declaration order, until none is due or `maxJobs` have run (the
   * tick driver). A rate-limited queue's due jobs wait for its window, not for the store's due times.
   */
  async runDue(maxJobs: number): Promise<QueuesPass> {
    let ran = 0;
    let more = false;
    const limitedUntil = new Map<string, number>();
    for (const [name, worker] of this.workers) {
      if (ran >= maxJobs) {
        more = true;
        break;
      }
      const result = await worker.runDue(maxJobs - ran);
      ran += result.ran;
      more ||= result.more;
      if (result.heldUntil !== undefined) limitedUntil.set(name, result.heldUntil);
    }
    if (more) return { ran, more, nextAt: this.deps.clock.now() };
    const free = [...this.workers.keys()].filter((name) => !limitedUntil.has(name));
    const times = [...limitedUntil.values()];
    const due = await this.deps.store.nextWakeAt({ queues: free });
    if (due !== null) times.push(due);
    return { ran, more, nextAt: times.length ? Math.min(...times) : null };
  }

  /** A job was enqueued or retried here after the last `runDue` read the next due time: run again now. */
  get hasNewWork(): boolean {
    return [...this.workers.values()].some((w) => w.hasNewWork);
  }

  /** Returns the jobs of lapsed leases to their queues (see Rescuer). */
  rescue(): Promise<void> {
    return this.rescuer.rescue();
  }

  /** Deletes finished jobs past their retention (see Pruner). */
  prune(now: number): Promise<void> {
    return this.pruner.prune(now);
  }

  /** Starts the workers (the continuous driver); queues declared later start as they are declared. */
  start(): void {
    this.started = true;
    for (const worker of this.workers.values()) worker.start();
  }

  /** Stops every worker gracefully, giving running jobs `graceMs` (see QueueWorker.stop). */
  async stop(graceMs: number): Promise<void> {
    await Promise.all([...this.workers.values()].map((w) => w.stop(graceMs)));
    await this.waits.close();
  }

  /** The queues whose jobs this process runs, as the start-up event lists them. */
  get running(): { queue: string; concurrency: number }[] {
    return [...this.workers.values()].map((w) => ({ queue: w.config.name, concurrency: w.config.concurrency }));
  }

  /** Each declared queue, and what its worker here is doing. */
  status() {
    return [...this.declared.values()].map((q) => ({
      name: q.name,
      concurrency: q.config.concurrency,
      hasHandler: this.workers.has(q.name),
      ...(this.workers.get(q.name)?.stats ?? {}),
    }));
  }
}
