import * as z from "zod";
import type { Store } from "./store/store.js";
import type { Jobs } from "./queue/jobs.js";
import type { EnqueuedJob } from "./queue/job.js";
import type { BatchQueueOptions, EnqueueOptions, QueueOptions } from "./queue/options.js";
import type { Queue } from "./queue/queue.js";
import { calledFromJobHandler } from "./queue/worker/executor.js";
import { Queues, type BatchJobs, type BatchOptions } from "./queue/queues.js";
import type { QueueControls } from "./queue/controls.js";
import type { Limiter, RateOptions } from "./queue/flow-control/limiter.js";
import { TaskScheduler } from "./schedule/scheduler.js";
import { Cache } from "./cache/cache.js";
import { Idempotency, type IdempotencyOptions } from "./idempotency/idempotency.js";
import type { RunResult, TaskOptions, TaskStatus } from "./schedule/task.js";
import { systemClock, type Clock, type TimerHandle } from "./core/clock.js";
import type { Duration } from "./core/duration.js";
import { InvalidInputError, describe, errorText } from "./core/errors.js";
import { Logger, jsonLines, toSink, type LogLevel, type LoggerOption } from "./core/logger.js";
import type { TracerLike } from "./core/tracing.js";
import { durationMs, fn, parseOptions } from "./core/options.js";
import { onShutdownSignal } from "./core/signals.js";
import { CARRY_WAKE_MS, Outbound } from "./core/outbound.js";
import { Delivery } from "./delivery/delivery.js";
import { parseDeliveryOptions, type DeliveryOptions } from "./delivery/options.js";
import { Fanout } from "./fanout/fanout.js";
import { parseFanoutOptions, type FanoutOptions, type FanoutTarget } from "./fanout/options.js";
import type { Notification } from "./notify/notification.js";
import { Notifier } from "./notify/notifier.js";
import { parseNotifyOptions, type NotifyOptions } from "./notify/options.js";

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
     * Outbound calls per tick, shared by deliveries, their retries and fan-out pushes; what does not
     * fit is carried to the next tick. Default 500: half of what one Durable Object invocation may
     * call out, so a tick's own store and log calls always fit beside it.
     */
    tickBudget: z.number().int().min(1).max(1_000_000).default(500),
    /**
     * Delivery retries per tick, within `tickBudget`, shared by every delivery the way the tick budget
     * is (a delivery's own `retryBatch` caps its share). Default 50: a backlog of failed items (a
     * receiver that was down) takes at most that much of a tick, however many deliveries hold one,
     * and fresh items keep the rest. At least 1, or failed items would never be retried nor dropped.
     */
    retryBudget: z.number().int().min(1).max(1_000_000).default(50),
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
    /**
     * OpenTelemetry tracing: a Tracer, such as `trace.getTracer("tickwork")` from the package
     * `@opentelemetry/api`. Enqueues, job runs, task runs, delivery sends and fan-out pushes get spans,
     * and a job's run is linked to the enqueue that created it, in whatever process it runs. Default
     * none: no spans, and nothing is stored with the jobs.
     */
    tracer: z
      .custom<TracerLike>((v) => !!v && typeof v === "object" && typeof (v as TracerLike).startActiveSpan === "function", 'expected an OpenTelemetry Tracer: trace.getTracer("tickwork") from @opentelemetry/api')
      .optional(),
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
  /** Outbound calls made in this tick, out of the tick budget; the delivery retries among them, out of the retry budget. */
  outbound: { used: number; budget: number; retries: number; retryBudget: number };
}

/** Finished jobs, expired idempotency keys and old dead letters are pruned at most this often (rescues run every `rescueInterval`). */
const PRUNE_EVERY_MS = 60_000;
/** The continuous scheduler re-reads task state at least this often (pauses and runs made elsewhere). */
const SCHEDULE_MAX_IDLE_MS = 60_000;

/** Creates an engine on a store, runs migrations, and says where its events go. */
export async function createTickwork(options: TickworkOptions): Promise<Tickwork> {
  const o = parseOptions(engineOptionsSchema, options, "createTickwork");
  const tw = new Tickwork(o);
  if (o.migrate) await o.store.migrate();
  tw.announce();
  // Expired idempotency keys are deleted as soon as an engine is created, so a Durable Object cleans up
  // at each initialisation, before any alarm has ticked; then they go with the other pruning.
  await tw.idempotency.prune();
  return tw;
}

/**
 * The engine: the units it drives (queues, tasks, deliveries and fan-outs), each reporting when it
 * next has work, and their upkeep; driven by ticks or by `start()`.
 */
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
  /** Pause and resume queues (or a group of one) in every process; their flow-control `status()`. */
  readonly queues: QueueControls;
  private readonly queueUnits: Queues;
  private started = false;
  private stopped = false;
  private lastPruneAt = Number.NEGATIVE_INFINITY;
  private maintenanceTimer: TimerHandle | undefined;
  /** The upkeep pass in flight: stop() waits for it, so the store never closes under its statements. */
  private maintenance: Promise<void> | undefined;
  private unsubscribe: (() => Promise<void>) | undefined;
  private removeSignalHandler: (() => void) | undefined;
  private readonly defaultedLogger: boolean;
  private readonly schedule: TaskScheduler;
  private readonly outbound: Outbound;
  private readonly deliveryUnits = new Map<string, Delivery<unknown>>();
  private readonly fanoutUnits = new Map<string, Fanout<unknown>>();
  private readonly notifiers: Notifier[] = [];
  /** The notifiers' outboxes (deliveries), whose own events never notify. */
  private readonly notifyOutboxes = new Set<string>();
  /** Fan-outs hearing of a finished task run; a tick waits for them before its outbound pass. */
  private readonly taskHooks = new Set<Promise<void>>();
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
    this.queueUnits = new Queues({ store: this.store.queue, clock: this.clock, logger: this.logger, instanceId: this.instanceId, pollIntervalMs: o.pollInterval, retention: o.retention, subscribeJobs: this.store.subscribeJobs?.bind(this.store), tracer: o.tracer });
    this.jobs = this.queueUnits.jobs;
    this.queues = this.queueUnits.controls;
    this.cache = new Cache(this.store.cache, () => this.clock.now());
    this.idempotency = new Idempotency({ store: this.store.idempotency, clock: this.clock, logger: this.logger }, o.idempotency);
    this.outbound = new Outbound({ clock: this.clock, logger: this.logger, budget: o.tickBudget, retryBudget: o.retryBudget,
      pollMs: o.pollInterval,
      // Fan-outs first: a few pushes that keep every receiver's configuration current come before bulk callbacks.
      units: () => [...this.fanoutUnits.values(), ...this.deliveryUnits.values()],
      onError: o.onError,
    });
    this.schedule = new TaskScheduler({
      store: this.store.schedule,
      clock: this.clock,
      logger: this.logger,
      instanceId: this.instanceId,
      maxIdleMs: SCHEDULE_MAX_IDLE_MS,
      tracer: o.tracer,
      // A fan-out may reconcile after each run of a periodic task: the scheduler reports a finished
      // run here and the fan-outs hear of it, so neither module knows the other.
      onRunFinished: (task) => this.taskFinished(task),
    });
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
      tracing: this.o.tracer ? "the tracer option" : "off",
    });
  }

  /**
   * Declares a queue. With a `handler`, this process runs its jobs (after `start()`, or in `tick()`);
   * without one, it only enqueues. With `batch: { size, wait }`, the handler takes up to `size` jobs
   * at once and answers per job (see BatchHandler). A queue declared already (by a config, say) is
   * returned when no options are given; declaring it again with options is refused.
   */
  queue<P = unknown>(name: string, options: BatchQueueOptions<P>): Queue<P>;
  queue<P = unknown>(name: string, options?: QueueOptions<P>): Queue<P>;
  queue<P = unknown>(name: string, options?: QueueOptions<P> | BatchQueueOptions<P>): Queue<P> {
    return this.queueUnits.declare(name, options);
  }

  /**
   * A rate budget shared by every process on the store: `max` calls per `per` on average, at most
   * `burst` (default 1) at once. Await `acquire()` before each call (in a task, a handler), give it to
   * `createHttpClient({ limiter })`, or to a queue (`limiter`) so its job starts draw from it. The
   * same name gives the same limiter; a name with other settings is refused.
   */
  limiter(name: string, options: RateOptions): Limiter {
    return this.queueUnits.limiters.define(name, options);
  }

  /** The limiters this engine defined, in definition order. */
  limiters(): Limiter[] {
    return this.queueUnits.limiters.all;
  }

  /**
   * Defines a periodic task: `every` ("5m") or `cron` ("*\/15 * * * *", with `timezone`). Exactly
   * one process runs each slot, however many share the store.
   */
  task<R = unknown>(name: string, options: TaskOptions<R>): void {
    this.schedule.define(name, options);
  }

  /**
   * Declares a batched delivery: `emit(items)` writes them to a durable outbox; each tick
   * sends what its budget allows, retries failures on `retry` and drops them to a dead-letter table
   * after the last step.
   */
  delivery<T = unknown>(name: string, options: DeliveryOptions<T>): Delivery<T> {
    if (this.deliveryUnits.has(name)) throw new InvalidInputError(`delivery "${name}" is already declared`);
    const delivery = new Delivery<T>(parseDeliveryOptions(name, options), { store: this.store.delivery, clock: this.clock, logger: this.logger, wake: () => this.outbound.wake(), tracer: this.o.tracer });
    this.deliveryUnits.set(name, delivery as Delivery<unknown>);
    return delivery;
  }

  /**
   * Declares a configuration fan-out: `push(state)` sends each group its projection of
   * the state, retries the targets that failed on `backoff`, and re-pushes everything on `reconcile`:
   * an interval, after each run of a task (`{ after: "crawl" }`), or as a function chooses.
   */
  fanout<S = unknown, G extends FanoutTarget = FanoutTarget>(name: string, options: FanoutOptions<S, G>): Fanout<S> {
    if (this.fanoutUnits.has(name)) throw new InvalidInputError(`fanout "${name}" is already declared`);
    const fanout = new Fanout<S>(parseFanoutOptions(name, options), {
      store: this.store.fanout,
      clock: this.clock,
      logger: this.logger,
      wake: () => this.outbound.wake(),
      knowsTask: (task) => this.schedule.names.includes(task),
      tracer: this.o.tracer,
    });
    this.fanoutUnits.set(name, fanout as Fanout<unknown>);
    return fanout;
  }

  /**
   * Notifies operators of what needs a person: by default a job failed for good (`job.failed`), a
   * task's breaker opened, a delivery item dropped after its last retry, a fan-out stuck (as many
   * failed rounds in a row as `fanoutStuckAfter`). Each sink (`webhookSink`, `slackSink`,
   * `discordSink`) gets a delivery of its own, `notify:<kind>`: a notification is durable once
   * written, retried with backoff while its endpoint fails, and never holds up the code that logged
   * the event. At most `rateLimit.max` per `rateLimit.per` go to each sink; the rest are counted
   * and summarised ("and 20 more job.failed since ..."). Every option is checked before anything
   * is registered. Call it before `start()`.
   */
  notify(options: NotifyOptions): Notifier {
    if (this.stopped) throw new InvalidInputError("notify: this engine was stopped; create a new one");
    if (this.started) throw new InvalidInputError("notify: call tw.notify(...) before start(), so the engine's outbound loop knows its outboxes");
    const config = parseNotifyOptions(options, (name) => this.deliveryUnits.has(name));
    const outboxes = config.sinks.map(({ delivery, send }) => ({ name: delivery, options: { send, timeout: config.timeout, ...(config.retry ? { retry: config.retry } : {}) } }));
    // Every outbox's options pass the delivery module's own checks before the first is declared.
    for (const outbox of outboxes) parseDeliveryOptions(outbox.name, outbox.options);
    const deliveries = outboxes.map((outbox) => {
      this.notifyOutboxes.add(outbox.name);
      return this.delivery<Notification>(outbox.name, outbox.options);
    });
    const notifier = new Notifier(config, deliveries, { clock: this.clock, logger: this.logger, isOutbox: (name) => this.notifyOutboxes.has(name) });
    this.notifiers.push(notifier);
    return notifier;
  }

  /** Declared deliveries by name (for admin surfaces). */
  get deliveries(): ReadonlyMap<string, Delivery<unknown>> {
    return this.deliveryUnits;
  }

  /** Declared fan-outs by name (for admin surfaces). */
  get fanouts(): ReadonlyMap<string, Fanout<unknown>> {
    return this.fanoutUnits;
  }

  /**
   * Enqueues `items` as jobs of `options.queue` and one completion job, `options.onComplete`, that runs
   * once when every item has ended (succeeded or failed for good): its `job.children` holds the counts
   * (`total`, `failed`), its `ctx.childResults()` each item's result. All written in one transaction.
   */
  async batch<P>(items: P[], options: BatchOptions): Promise<BatchJobs> {
    return this.queueUnits.batch(items, options);
  }

  /** Enqueues on a declared queue by name (for code that holds no `Queue` handle: CLIs, admin APIs). */
  async enqueue(queue: string, payload: unknown, options?: EnqueueOptions): Promise<EnqueuedJob> {
    return this.queueUnits.enqueue(queue, payload, options);
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
    this.checkWiring();
    await this.upkeep();
    // Each unit runs what is due and says when it next has work. Tasks go first: a task may enqueue
    // jobs (a recurring producer turning due subscriptions into jobs), which this same tick then runs;
    // jobs before outbound work, which a job may emit.
    const taskWake = await this.schedule.tick({ wait: true });
    const jobs = await this.queueUnits.runDue(maxJobs);
    // A reconciliation that follows a task that just ran goes out in this tick's outbound pass.
    await this.taskHooksSettled();
    // So do notifications of what this tick logged (a job failed for good), and summaries of what a
    // rate limit held back whose window has room again.
    for (const notifier of this.notifiers) await notifier.flushDue();
    const outbound = await this.outbound.pass();
    // Notifications of what the pass itself logged (an item dropped) were written after it read the outboxes.
    let notified = 0;
    for (const notifier of this.notifiers) notified += await notifier.settle();
    const result = { ran: jobs.ran, carried: outbound.carried, outbound: { used: outbound.used, budget: outbound.budget, retries: outbound.retries, retryBudget: outbound.retryBudget } };
    // A job enqueued by the outbound pass (a delivery's onDelivered hook) is due after the queues' pass read its time.
    if (jobs.more || this.queueUnits.hasNewWork || notified > 0) return { nextWakeAt: this.clock.now(), ...result };
    if (outbound.carried) return { nextWakeAt: this.clock.now() + CARRY_WAKE_MS, ...result };
    const times = [taskWake, jobs.nextAt, outbound.nextAt, ...this.notifiers.map((n) => n.nextAt())].filter((at) => at !== null);
    return { nextWakeAt: times.length ? Math.min(...times) : null, ...result };
  }

  /** Runs workers continuously: they claim as jobs arrive, by notification where the store has it. */
  async start(): Promise<void> {
    if (this.stopped) throw new InvalidInputError("this engine was stopped; create a new one");
    if (this.started) return;
    this.checkWiring();
    this.started = true;
    if (this.store.subscribe) {
      this.unsubscribe = await this.store.subscribe(
        (queue) => (queue === "*" ? this.queueUnits.wakeAll() : this.queueUnits.wake(queue)),
        (handoff) => this.queueUnits.handed(handoff),
        (queue, group) => this.queueUnits.pausedElsewhere(queue, group),
      );
    }
    if (this.o.handleSignals) this.removeSignalHandler = onShutdownSignal(() => this.stop());
    await this.maintain();
    this.queueUnits.start();
    this.schedule.start();
    this.outbound.start();
    for (const notifier of this.notifiers) notifier.start();
    this.logger.info("engine.workers_started", {
      queues: this.queueUnits.running,
      tasks: this.schedule.names,
      deliveries: [...this.deliveryUnits.keys()],
      fanouts: [...this.fanoutUnits.keys()],
      tickBudget: this.o.tickBudget,
      retryBudget: this.o.retryBudget,
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
    // Stop waits for the running jobs, the caller's own among them: awaited there, it waits out the
    // whole grace and the job is handed back to run again.
    if (calledFromJobHandler()) {
      this.logger.warn("engine.stop_in_handler", {
        graceMs: this.o.shutdownGrace,
        message: `tw.stop() was called inside a job handler: stop waits for running jobs, this one included, so an awaited stop waits the whole shutdownGrace (${this.o.shutdownGrace} ms) and the job is handed back to run again. Call stop from outside handlers (a signal, a route), or do not await it in the handler.`,
      });
    }
    if (this.maintenanceTimer) this.clock.clearTimeout(this.maintenanceTimer);
    this.removeSignalHandler?.();
    await Promise.all([
      this.maintenance,
      this.schedule.stop(this.o.shutdownGrace),
      this.outbound.stop(),
      this.queueUnits.stop(this.o.shutdownGrace),
    ]);
    // A fan-out hearing of a run that just finished writes to the store: before it closes.
    await this.taskHooksSettled();
    // So do notifications being written, and the summary of what a rate limit still holds back.
    for (const notifier of this.notifiers) await notifier.stop();
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
      queues: this.queueUnits.status(),
    };
  }

  /** A fan-out that reconciles after a task names one that is defined: a typo would silently switch its reconciliation off. */
  private checkWiring(): void {
    for (const fanout of this.fanoutUnits.values()) {
      const task = fanout.followedTask;
      if (task !== null && !this.schedule.names.includes(task)) {
        throw new InvalidInputError(`fanout "${fanout.name}": reconcile: { after: ${JSON.stringify(task)} } names no task; define it with tw.task(${JSON.stringify(task)}, ...)`);
      }
    }
  }

  /** A task's run finished: each fan-out that may follow it hears of it. */
  private taskFinished(task: string): void {
    for (const fanout of this.fanoutUnits.values()) {
      if (!fanout.followsTasks) continue;
      const hook: Promise<void> = fanout
        .afterTask(task)
        .catch((error: unknown) => {
          this.logger.error("store.error", { operation: "fanout after task", fanout: fanout.name, task, error: errorText(error) });
          this.o.onError?.(error);
        })
        .finally(() => this.taskHooks.delete(hook));
      this.taskHooks.add(hook);
    }
  }

  private async taskHooksSettled(): Promise<void> {
    while (this.taskHooks.size > 0) await Promise.all([...this.taskHooks]);
  }

  /** Upkeep on the `rescueInterval` while started; the pass in flight is kept as `maintenance` for stop(). */
  private maintain(): Promise<void> {
    return (this.maintenance = this.maintainOnce());
  }

  private async maintainOnce(): Promise<void> {
    try {
      await this.upkeep();
    } catch (error) {
      this.logger.error("store.error", { operation: "maintenance", error: errorText(error) });
      this.o.onError?.(error);
    }
    if (!this.stopped) this.maintenanceTimer = this.clock.setTimeout(() => void this.maintain(), this.o.rescueInterval);
  }

  /** Lapsed leases rescued on every pass; finished jobs, expired idempotency keys and old dead letters pruned once a minute at most. */
  private async upkeep(): Promise<void> {
    await this.queueUnits.rescue();
    const now = this.clock.now();
    if (now - this.lastPruneAt < PRUNE_EVERY_MS) return;
    this.lastPruneAt = now;
    await this.queueUnits.prune(now);
    await this.idempotency.prune();
    for (const delivery of this.deliveryUnits.values()) await delivery.prune(now);
  }
}

function randomId(): string {
  return globalThis.crypto.randomUUID().slice(0, 8);
}
