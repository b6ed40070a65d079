import { z } from "zod";
import type { Store } from "./store/store.js";
import { Jobs } from "./queue/jobs.js";
import type { EnqueuedJob } from "./queue/job.js";
import { parseQueueOptions, type EnqueueOptions, type QueueOptions } from "./queue/options.js";
import { Queue } from "./queue/queue.js";
import { JobAbortedError, QueueWorker } from "./queue/worker.js";
import { Scheduler } from "./schedule/scheduler.js";
import { Cache } from "./cache/cache.js";
import { Idempotency, type IdempotencyOptions } from "./idempotency/idempotency.js";
import type { RunResult, TaskOptions, TaskStatus } from "./schedule/task.js";
import { systemClock, type Clock, type TimerHandle } from "./core/clock.js";
import type { Duration } from "./core/duration.js";
import { InvalidInputError, UnknownQueueError, describe, errorText } from "./core/errors.js";
import { Logger, jsonLines, toSink, type LogLevel, type LoggerOption } from "./core/logger.js";
import { durationMs, fn, parseOptions } from "./core/options.js";
import { onShutdownSignal } from "./core/signals.js";
import { CARRY_WAKE_MS, Outbound } from "./core/outbound.js";
import { Delivery } from "./delivery/delivery.js";
import { parseDeliveryOptions, type DeliveryOptions } from "./delivery/options.js";
import { Fanout } from "./fanout/fanout.js";
import { parseFanoutOptions, type FanoutOptions, type FanoutTarget } from "./fanout/options.js";

const retentionMs = z.union([durationMs, z.literal(false)]);

const engineOptionsSchema = z
  .object({
    store: z.custom<Store>((v) => !!v && typeof v === "object" && "queue" in v && "migrate" in v, "expected a store: sqlite(path) or postgres(url)"),
    logger: z.custom<LoggerOption>((v) => v !== undefined && v !== null, "expected a logger").optional(),
    logLevel: z.enum(["debug", "info", "warn", "error", "critical"]).default("info"),
    clock: z.custom<Clock>((v) => !!v && typeof (v as Clock).now === "function" && typeof (v as Clock).setTimeout === "function", "expected a Clock").optional(),
    /** Identifies this process in leases and logs; default a random id. */
    instanceId: z.string().min(1).max(100).optional(),
    /** Longest an idle worker waits before checking for due jobs by itself; default 2s. */
    pollInterval: durationMs.default(2_000),
    /** How often expired leases are looked for; default 5s. */
    rescueInterval: durationMs.default(5_000),
    /**
     * Outbound calls per tick, shared by deliveries, their retries and fan-out pushes (seed 000: 500,
     * a Durable Object's subrequest limit); what does not fit is carried to the next tick.
     */
    tickBudget: z.number().int().min(1).max(1_000_000).default(500),
    /** How long a graceful stop waits for running jobs; default 30s. */
    shutdownGrace: durationMs.default(30_000),
    /** How long finished jobs are kept; `false` keeps them forever. */
    retention: z
      .object({ succeeded: retentionMs.default(86_400_000), failed: retentionMs.default(14 * 86_400_000), cancelled: retentionMs.default(86_400_000) })
      .strict()
      .default({ succeeded: 86_400_000, failed: 14 * 86_400_000, cancelled: 86_400_000 }),
    /** Idempotency keys: `ttl` (24 h), `staleAfter` (1 min), `isFailure`. */
    idempotency: z.custom<IdempotencyOptions>((v) => typeof v === "object" && v !== null, "expected { ttl?, staleAfter?, isFailure? }").optional(),
    /** Run pending migrations when the engine is created; default true. */
    migrate: z.boolean().default(true),
    /** `start()` stops gracefully on SIGTERM and SIGINT (Node); default true. */
    handleSignals: z.boolean().default(true),
    onError: fn<(error: unknown) => void>("a function").optional(),
  })
  .strict();

export type TickworkOptions = z.input<typeof engineOptionsSchema>;

export interface TickResult {
  /** When the engine next has work: a job due, a lease to rescue. null: nothing scheduled. */
  nextWakeAt: number | null;
  /** Jobs run in this tick. */
  ran: number;
  /** Deliveries or fan-out pushes were left for the next tick (the budget ran out): come back in 100 ms. */
  carried: boolean;
  /** Outbound calls made in this tick, out of the tick budget. */
  outbound: { used: number; budget: number };
}

const PRUNE_EVERY_MS = 60_000;
/** The continuous scheduler re-reads task state at least this often (pauses and runs made elsewhere). */
const SCHEDULE_MAX_IDLE_MS = 60_000;
const PRUNE_BATCH = 1_000;
const RESCUE_BATCH = 1_000;

/** Creates an engine on a store, runs migrations, and says where its events go. */
export async function createTickwork(options: TickworkOptions): Promise<Tickwork> {
  const o = parseOptions(engineOptionsSchema, options, "createTickwork");
  const tw = new Tickwork(o);
  if (o.migrate) await o.store.migrate();
  tw.announce();
  // Seed 002: expired idempotency keys are removed at start (and then with the other pruning).
  await tw.idempotency.prune();
  return tw;
}

/** The engine: declared queues (and, later, tasks, deliveries, fan-outs), driven by ticks or by `start()`. */
export class Tickwork {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly instanceId: string;
  readonly jobs: Jobs;
  /** Values fetched on a schedule, read with the staleness a reader accepts: `put(key, value)`, `get(key, { maxAge })`. */
  readonly cache: Cache;
  /** Check, claim, complete: `run({ scope, key, operation, claimScope?, fingerprint? }, fn)`. */
  readonly idempotency: Idempotency;
  private readonly queues = new Map<string, Queue<unknown>>();
  private readonly workers = new Map<string, QueueWorker>();
  private started = false;
  private stopped = false;
  private lastPruneAt = Number.NEGATIVE_INFINITY;
  private maintenanceTimer: TimerHandle | undefined;
  /** The maintenance pass in flight: stop() waits for it, so the store never closes under its statements. */
  private maintenance: Promise<void> | undefined;
  private unsubscribe: (() => Promise<void>) | undefined;
  private removeSignalHandler: (() => void) | undefined;
  private readonly defaultedLogger: boolean;
  private readonly schedule: Scheduler;
  private readonly outbound: Outbound;
  private readonly deliveryUnits = new Map<string, Delivery<unknown>>();
  private readonly fanoutUnits = new Map<string, Fanout<unknown>>();
  /**
   * Periodic tasks' operations: `status()`, `runNow(task | "all")`, `pauseUntil(time, task?)`,
   * `resume(task?)`, `backfill(task, from, to)`.
   */
  readonly scheduler: {
    status(): Promise<{ pausedUntil: number | null; tasks: TaskStatus[] }>;
    runNow(task: string): Promise<RunResult[]>;
    pauseUntil(until: Date | number | Duration, task?: string): Promise<void>;
    resume(task?: string): Promise<void>;
    backfill(task: string, from: Date | number, to: Date | number): Promise<RunResult[]>;
  };

  /** @internal use `createTickwork`. */
  constructor(private readonly o: z.output<typeof engineOptionsSchema>) {
    this.store = o.store;
    this.clock = o.clock ?? systemClock;
    this.defaultedLogger = o.logger === undefined;
    this.logger = new Logger(o.logger === undefined ? jsonLines() : toSink(o.logger), () => this.clock.now(), o.logLevel as LogLevel);
    this.instanceId = o.instanceId ?? randomId();
    this.jobs = new Jobs({
      store: this.store.queue,
      logger: this.logger,
      now: () => this.clock.now(),
      knownQueues: () => [...this.queues.keys()],
      wake: (queue) => this.wake(queue),
      abortLocal: (id) => [...this.workers.values()].some((w) => w.abort(id, new JobAbortedError("cancelled", `job ${id} was cancelled`))),
    });
    this.cache = new Cache(this.store.cache, () => this.clock.now());
    this.idempotency = new Idempotency({ store: this.store.idempotency, clock: this.clock, logger: this.logger }, o.idempotency);
    this.outbound = new Outbound({ clock: this.clock, logger: this.logger, budget: o.tickBudget,
      pollMs: o.pollInterval,
      // Fan-outs first: a few pushes that keep every receiver's configuration current come before bulk callbacks.
      units: () => [...this.fanoutUnits.values(), ...this.deliveryUnits.values()],
      onError: o.onError,
    });
    this.schedule = new Scheduler({ store: this.store.schedule, clock: this.clock, logger: this.logger, instanceId: this.instanceId, maxIdleMs: SCHEDULE_MAX_IDLE_MS });
    const schedule = this.schedule;
    this.scheduler = {
      status: () => schedule.status(),
      runNow: (task) => schedule.runNow(task),
      pauseUntil: (until, task) => schedule.pauseUntil(until, task),
      resume: (task) => schedule.resume(task),
      backfill: (task, from, to) => schedule.backfill(task, from, to),
    };
  }

  /** @internal the start-up event: which store, and which sink every later event goes to. */
  announce(): void {
    this.logger.announce("engine.started", {
      instanceId: this.instanceId,
      store: this.store.name,
      logSink: this.logger.sink.name,
      logSinkChosenBy: this.defaultedLogger ? "default (no logger option given)" : "the logger option",
      logLevel: this.o.logLevel,
      clock: this.clock === systemClock ? "system" : "injected",
    });
  }

  /**
   * Declares a queue. With a `handler`, this process runs its jobs (after `start()`, or in `tick()`);
   * without one, it only enqueues.
   */
  queue<P = unknown>(name: string, options: QueueOptions<P> = {}): Queue<P> {
    if (this.queues.has(name)) throw new InvalidInputError(`queue "${name}" is already declared`);
    const config = parseQueueOptions(name, options);
    const queue = new Queue<P>(config, {
      store: this.store.queue,
      logger: this.logger,
      now: () => this.clock.now(),
      wake: (q) => this.wake(q),
      handoff: (q, count) => this.workers.get(q)?.handoff(count) ?? null,
    });
    this.queues.set(name, queue as Queue<unknown>);
    if (config.handler) {
      const worker = new QueueWorker(config, { store: this.store.queue, clock: this.clock, logger: this.logger, instanceId: this.instanceId, pollIntervalMs: this.o.pollInterval });
      this.workers.set(name, worker);
      if (this.started) worker.start();
    }
    return queue;
  }

  /**
   * Defines a periodic task: `every` ("5m") or `cron` ("*\/15 * * * *", with `timezone`). Exactly
   * one process runs each slot, however many share the store.
   */
  task<R = unknown>(name: string, options: TaskOptions<R>): void {
    this.schedule.define(name, options);
  }

  /**
   * Declares a batched delivery (seed 000): `emit(items)` writes them to a durable outbox; each tick
   * sends what its budget allows, retries failures on `retry` and drops them to a dead-letter table
   * after the last step.
   */
  delivery<T = unknown>(name: string, options: DeliveryOptions<T>): Delivery<T> {
    if (this.deliveryUnits.has(name)) throw new InvalidInputError(`delivery "${name}" is already declared`);
    const delivery = new Delivery<T>(parseDeliveryOptions(name, options), { store: this.store.delivery, clock: this.clock, logger: this.logger, wake: () => this.outbound.wake() });
    this.deliveryUnits.set(name, delivery as Delivery<unknown>);
    return delivery;
  }

  /**
   * Declares a configuration fan-out (seed 001): `push(state)` sends each group its projection of
   * the state, retries the targets that failed on `backoff`, and re-pushes everything every `reconcile`.
   */
  fanout<S = unknown, G extends FanoutTarget = FanoutTarget>(name: string, options: FanoutOptions<S, G>): Fanout<S> {
    if (this.fanoutUnits.has(name)) throw new InvalidInputError(`fanout "${name}" is already declared`);
    const fanout = new Fanout<S>(parseFanoutOptions(name, options), { store: this.store.fanout, clock: this.clock, logger: this.logger, wake: () => this.outbound.wake() });
    this.fanoutUnits.set(name, fanout as Fanout<unknown>);
    return fanout;
  }

  /** Declared deliveries by name (for admin surfaces). */
  get deliveries(): ReadonlyMap<string, Delivery<unknown>> {
    return this.deliveryUnits;
  }

  /** Declared fan-outs by name (for admin surfaces). */
  get fanouts(): ReadonlyMap<string, Fanout<unknown>> {
    return this.fanoutUnits;
  }

  /** Enqueues on a declared queue by name (for code that holds no `Queue` handle: CLIs, admin APIs). */
  async enqueue(queue: string, payload: unknown, options?: EnqueueOptions): Promise<EnqueuedJob> {
    const q = this.queues.get(queue);
    if (!q) throw new UnknownQueueError(queue, [...this.queues.keys()]);
    return q.enqueue(payload, options);
  }

  /**
   * One bounded pass of all due work: expired leases rescued, due tasks run, due jobs run (at most
   * `maxJobs`), deliveries and fan-out pushes sent within the tick budget, old finished jobs pruned.
   * Returns when the engine next wants to run: in 100 ms while outbound work is carried over. Only a
   * store failure escapes; a job's, task's or receiver's failure is its own.
   */
  async tick(options: { maxJobs?: number } = {}): Promise<TickResult> {
    if (this.started) throw new InvalidInputError("tick() drives the engine by hand; it cannot run while start() drives it");
    const maxJobs = options.maxJobs ?? 1_000;
    if (!Number.isInteger(maxJobs) || maxJobs < 1) throw new InvalidInputError(`tick: maxJobs must be an integer >= 1, got ${describe(maxJobs)}`);
    await this.rescue();
    await this.pruneIfDue();
    // Tasks first: a task may enqueue jobs (seed 004's scheduler), which this same tick then runs.
    const taskWake = await this.schedule.tick({ wait: true });
    let ran = 0;
    let more = false;
    // A rate-limited queue's due jobs wait for its window, not for the store's due times.
    const limitedUntil = new Map<string, number>();
    for (const [name, worker] of this.workers) {
      if (ran >= maxJobs) {
        more = true;
        break;
      }
      const result = await worker.runDue(maxJobs - ran);
      ran += result.ran;
      more ||= result.more;
      if (result.rateLimitedUntil !== undefined) limitedUntil.set(name, result.rateLimitedUntil);
    }
    const outbound = await this.outbound.pass();
    const result = { ran, carried: outbound.carried, outbound: { used: outbound.used, budget: outbound.budget } };
    if (more) return { nextWakeAt: this.clock.now(), ...result };
    if (outbound.carried) return { nextWakeAt: this.clock.now() + CARRY_WAKE_MS, ...result };
    const free = [...this.workers.keys()].filter((name) => !limitedUntil.has(name));
    const times = [...limitedUntil.values()];
    if (taskWake !== null) times.push(taskWake);
    const due = await this.store.queue.nextWakeAt({ queues: free });
    if (due !== null) times.push(due);
    if (outbound.nextAt !== null) times.push(outbound.nextAt);
    return { nextWakeAt: times.length ? Math.min(...times) : null, ...result };
  }

  /** Runs workers continuously: they claim as jobs arrive, by notification where the store has it. */
  async start(): Promise<void> {
    if (this.stopped) throw new InvalidInputError("this engine was stopped; create a new one");
    if (this.started) return;
    this.started = true;
    if (this.store.subscribe) {
      this.unsubscribe = await this.store.subscribe((queue) => (queue === "*" ? this.wakeAll() : this.wake(queue)));
    }
    if (this.o.handleSignals) this.removeSignalHandler = onShutdownSignal(() => this.stop());
    await this.maintain();
    for (const worker of this.workers.values()) worker.start();
    this.schedule.start();
    this.outbound.start();
    this.logger.info("engine.workers_started", {
      queues: [...this.workers.values()].map((w) => ({ queue: w.config.name, concurrency: w.config.concurrency })),
      tasks: this.schedule.names,
      deliveries: [...this.deliveryUnits.keys()],
      fanouts: [...this.fanoutUnits.keys()],
      tickBudget: this.o.tickBudget,
      wakeUps: this.store.subscribe ? "store notifications" : `poll every ${this.o.pollInterval} ms (and enqueues in this process)`,
    });
  }

  /**
   * Graceful stop: no new claims, prefetched jobs handed back, running jobs given `shutdownGrace` to
   * finish and released after it; then the store is closed.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.maintenanceTimer) this.clock.clearTimeout(this.maintenanceTimer);
    this.removeSignalHandler?.();
    await Promise.all([
      this.maintenance,
      this.schedule.stop(this.o.shutdownGrace),
      this.outbound.stop(),
      ...[...this.workers.values()].map((w) => w.stop(this.o.shutdownGrace)),
    ]);
    await this.unsubscribe?.();
    await this.store.close();
    this.logger.info("engine.stopped", { instanceId: this.instanceId });
  }

  /** What this engine is and does right now. */
  status() {
    return {
      instanceId: this.instanceId,
      store: this.store.name,
      logSink: this.logger.sink.name,
      started: this.started,
      stopped: this.stopped,
      queues: [...this.queues.values()].map((q) => ({
        name: q.name,
        concurrency: q.config.concurrency,
        hasHandler: this.workers.has(q.name),
        ...(this.workers.get(q.name)?.stats ?? {}),
      })),
    };
  }

  private wake(queue: string): void {
    this.workers.get(queue)?.wake();
  }

  private wakeAll(): void {
    for (const worker of this.workers.values()) worker.wake();
  }

  /** Periodic upkeep while started: rescue expired leases, prune history. Kept as `maintenance` for stop(). */
  private maintain(): Promise<void> {
    return (this.maintenance = this.maintainOnce());
  }

  private async maintainOnce(): Promise<void> {
    try {
      await this.rescue();
      await this.pruneIfDue();
    } catch (error) {
      this.logger.error("store.error", { operation: "maintenance", error: errorText(error) });
      this.o.onError?.(error);
    }
    if (!this.stopped) this.maintenanceTimer = this.clock.setTimeout(() => void this.maintain(), this.o.rescueInterval);
  }

  private async rescue(): Promise<void> {
    const queues = [...this.workers.keys()];
    const rescued = await this.store.queue.rescueExpired({ queues, now: this.clock.now(), limit: RESCUE_BATCH });
    for (const job of rescued) {
      this.logger.warn("job.lease_expired", { queue: job.queue, id: job.id, attempt: job.attempts, attempts: job.attempts, maxAttempts: job.maxAttempts, status: job.status });
      if (job.status !== "failed") continue;
      this.logger.error("job.failed", { queue: job.queue, id: job.id, attempt: job.attempts, attempts: job.attempts, maxAttempts: job.maxAttempts, error: "lease expired on the last attempt" });
      const worker = this.workers.get(job.queue);
      const failed = worker?.config.onFailed ? await this.store.queue.get({ id: job.id }) : null;
      if (worker && failed) await worker.failed(failed, failed.lastError ?? "lease expired");
    }
    for (const queue of new Set(rescued.filter((j) => j.status === "pending").map((j) => j.queue))) this.wake(queue);
  }

  private async pruneIfDue(): Promise<void> {
    const now = this.clock.now();
    if (now - this.lastPruneAt < PRUNE_EVERY_MS) return;
    this.lastPruneAt = now;
    for (const status of ["succeeded", "failed", "cancelled"] as const) {
      const keep = this.o.retention[status];
      if (keep === false) continue;
      let pruned = 0;
      for (let n = PRUNE_BATCH; n === PRUNE_BATCH; pruned += n) {
        n = await this.store.queue.pruneFinished({ status, before: now - keep, limit: PRUNE_BATCH });
      }
      if (pruned) this.logger.info("jobs.pruned", { status, count: pruned, olderThanMs: keep });
    }
    await this.idempotency.prune();
  }
}

function randomId(): string {
  return globalThis.crypto.randomUUID().slice(0, 8);
}
