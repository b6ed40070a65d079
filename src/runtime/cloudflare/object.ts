import { DurableObject } from "cloudflare:workers";
import type { Duration } from "../../core/duration.js";
import { createTickwork, type Tickwork } from "../../tickwork.js";
import { InvalidInputError, describe, errorText } from "../../core/errors.js";
import { jsonLines, type LogSink, type LoggerOption } from "../../core/logger.js";
import type { DeliveryStatus } from "../../delivery/delivery.js";
import type { FanoutStatus } from "../../fanout/fanout.js";
import type { IdempotencyContext } from "../../idempotency/context.js";
import type { RunOptions as IdempotencyRunOptions } from "../../idempotency/idempotency.js";
import type { EnqueuedJob } from "../../queue/job.js";
import type { EnqueueOptions } from "../../queue/options.js";
import type { RunRecord, RunResult, TaskStatus } from "../../schedule/task.js";
import type { QueueCounts } from "../../queue/store/store.js";
import { nextAlarmAt } from "./alarm.js";
import { IdempotencyCall, checkClaimLostListener, relayClaimLoss, type ClaimLostListener } from "./idempotent.js";
import { kvCache } from "./kv-cache.js";
import { workersLogs, type FlushableSink } from "./logs-sink.js";
import { parseObjectConfig, type ObjectConfig, type TickworkObjectConfig } from "./options.js";
import type { AlarmInfo, KvNamespaceLike, LogsBinding } from "./platform.js";
import { durableObjectStore } from "./store.js";
import { checkWait } from "../../queue/waits.js";

/** Set in the object's storage once its alarm was first armed: from then on a missing alarm was lost. */
const ARMED_KEY = "tickwork:alarm-armed";

/** The `ctx` a Durable Object's constructor receives (`DurableObjectState`). */
export type DurableObjectContext = ConstructorParameters<typeof DurableObject>[0];

/** What the last alarm tick did. */
export interface LastTick {
  at: number;
  durationMs: number;
  /** Jobs run. */
  ran: number;
  /** Work was left for the next tick (budget or `maxJobsPerTick` spent). */
  carried: boolean;
  outbound: { used: number; budget: number };
  nextWakeAt: number | null;
  /** When the alarm was set for. */
  alarmAt: number;
  retryCount: number;
}

/**
 * A payload or result as it crosses Workers RPC: any value but `undefined` (they went through the
 * store as JSON text). Typed `unknown`, a typed stub would make the whole answer `never`; typed as a
 * recursive JSON type, the RPC types recurse past TypeScript's depth limit.
 */
export type RpcValue = NonNullable<unknown> | null;
export type RunRecordRpc = Omit<RunRecord, "result"> & { result: RpcValue };
export type TaskStatusRpc = Omit<TaskStatus, "lastResult" | "history"> & { lastResult: RpcValue; history: RunRecordRpc[] };
export type RunResultRpc = Omit<RunResult, "result"> & { result?: RpcValue };
/** A job's `result` and `progress` are any JSON (unknown): as RpcValue they keep the answer typed through a stub. */
export type EnqueuedJobRpc = Omit<EnqueuedJob<RpcValue>, "result" | "progress"> & { result: RpcValue; progress: RpcValue };

export interface ObjectStatus {
  store: string;
  logSink: string;
  /** When the alarm fires next (null: none, which the watchdog repairs). */
  alarmAt: number | null;
  /** The last tick of this instance (null after an eviction, until the next alarm). */
  lastTick: LastTick | null;
  tickBudget: number;
  maxJobsPerTick: number;
  pausedUntil: number | null;
  tasks: TaskStatusRpc[];
  queues: QueueCounts[];
  deliveries: DeliveryStatus[];
  fanouts: FanoutStatus[];
}

/**
 * A Durable Object that runs a tickwork engine on its own SQLite storage, driven by its alarm.
 *
 * - `alarm()` runs one engine tick, then arms the alarm for the engine's next wake-up: 100 ms while
 *   work is carried over, the next due time otherwise, and 5 minutes at most (so a lost alarm is noticed soon). It
 *   never replaces an alarm that is already set sooner.
 * - Arming is the tick's last step: a handler that throws after setting its alarm would cancel the
 *   platform's retries. Only transport failures (the storage, a missing binding) throw, so the
 *   runtime's alarm retry applies; a task's, job's or receiver's failure is logged and kept as its own.
 * - Every RPC call first checks the alarm: one found missing or stuck in the past is re-armed (the
 *   watchdog), so an object whose alarm was lost resumes at the next call.
 * - RPC: `status()`, `refreshNow(task | "all")`, `pauseUntil(time)`, `resume()`, `enqueue(...)` and
 *   `idempotent(...)`: what operations need from elsewhere in the Worker (see state, run now, pause,
 *   resume) without a secret-guarded HTTP endpoint, plus the queue and idempotency keys.
 *
 * ```ts
 * export class SchedulerDO extends TickworkObject<Env> {
 *   constructor(ctx: DurableObjectState, env: Env) {
 *     super(ctx, env, { logger: { binding: "LOGS", appId: "landing-page" } });
 *   }
 *   protected setup(tw: Tickwork) {
 *     // immediately: a new object runs it on its first alarm, not 5 minutes later.
 *     tw.task("prices", { every: "5m", immediately: true, run: (ctx) => refreshPrices(this.env, ctx) });
 *   }
 * }
 * ```
 */
export abstract class TickworkObject<Env = unknown> extends DurableObject<Env> {
  private readonly config: ObjectConfig;
  private ready: Promise<Tickwork> | undefined;
  private sink: FlushableSink | undefined;
  private ticking = false;
  private lastTick: LastTick | null = null;

  constructor(ctx: DurableObjectContext, env: Env, config: TickworkObjectConfig) {
    super(ctx, env);
    this.config = parseObjectConfig(config, new.target.name);
  }

  /**
   * Declares the object's tasks, queues, deliveries and fan-outs on its engine: once per instance,
   * before the first tick or call. The same task code as in Node goes here.
   */
  protected abstract setup(tw: Tickwork): void | Promise<void>;

  // ---- the alarm ----------------------------------------------------------------------------

  /** One engine tick, then the alarm re-armed for the next wake-up (the tick's last step). */
  override async alarm(info?: AlarmInfo): Promise<void> {
    const retryCount = info?.retryCount ?? 0;
    const started = Date.now();
    this.ticking = true;
    try {
      let tw: Tickwork;
      let result: Awaited<ReturnType<Tickwork["tick"]>>;
      try {
        tw = await this.engine();
        result = await tw.tick({ maxJobs: this.config.maxJobsPerTick });
      } catch (error) {
        await this.tickFailed(error, retryCount);
        return;
      }
      const now = Date.now();
      const alarmAt = nextAlarmAt(result, now, { carriedMs: this.config.cadence.carriedOver, ceilingMs: this.config.cadence.ceiling });
      this.lastTick = { at: started, durationMs: now - started, ran: result.ran, carried: result.carried, outbound: result.outbound, nextWakeAt: result.nextWakeAt, alarmAt, retryCount };
      tw.logger.debug("alarm.tick", { ...this.lastTick });
      await this.arm(alarmAt);
    } finally {
      this.ticking = false;
      await this.sink?.flush();
    }
  }

  /**
   * A transport failure: rethrown so the platform retries the alarm (2 s, then exponentially, 6 times).
   * On the last retry the object arms a fallback alarm at the ceiling instead of throwing, so it keeps
   * ticking after the outage rather than waiting for an RPC call to notice.
   */
  private async tickFailed(error: unknown, retryCount: number): Promise<void> {
    const last = retryCount >= this.config.alarmRetries;
    const fields = { error: errorText(error), retryCount, retriesLeft: Math.max(0, this.config.alarmRetries - retryCount) };
    const tw = await this.ready?.catch(() => undefined);
    if (!last) {
      if (tw) tw.logger.error("alarm.failed", { ...fields, action: "thrown: the platform retries the alarm" });
      else console.error(`tickwork: alarm failed (retry ${retryCount}): ${fields.error}`);
      throw error;
    }
    const fallback = Date.now() + this.config.cadence.ceiling;
    if (tw) tw.logger.critical("alarm.retries_exhausted", { ...fields, alarmAt: fallback, action: "re-armed at the ceiling instead of throwing" });
    else console.error(`tickwork: alarm failed on its last retry (${retryCount}), re-armed for ${new Date(fallback).toISOString()}: ${fields.error}`);
    await this.arm(fallback);
  }

  // ---- RPC ----------------------------------------------------------------------------------

  /** The engine's state: tasks (`lastRunAt`, `lastResult`, `consecutiveFailures`...), queues, the alarm, the last tick. */
  async status(): Promise<ObjectStatus> {
    return this.call(async (tw) => {
      const [scheduler, queues, deliveries, fanouts, alarmAt] = await Promise.all([
        tw.scheduler.status(),
        tw.jobs.counts(),
        Promise.all([...tw.deliveries.values()].map((d) => d.status())),
        Promise.all([...tw.fanouts.values()].map((f) => f.status())),
        this.ctx.storage.getAlarm(),
      ]);
      return {
        store: tw.store.name,
        logSink: tw.logger.sink.name,
        alarmAt,
        lastTick: this.lastTick,
        tickBudget: this.config.tickBudget,
        maxJobsPerTick: this.config.maxJobsPerTick,
        pausedUntil: scheduler.pausedUntil,
        tasks: scheduler.tasks as TaskStatusRpc[],
        queues,
        deliveries,
        fanouts,
      };
    });
  }

  /**
   * Runs a task (or `"all"`) now, whatever its schedule, pause or backoff, and returns the results.
   * What the run produced (jobs enqueued, callbacks emitted) goes out at a tick armed right after.
   */
  async refreshNow(task = "all"): Promise<RunResultRpc[]> {
    return this.call(async (tw) => {
      const results = await tw.scheduler.runNow(task);
      await this.arm(Date.now());
      return results as RunResultRpc[];
    });
  }

  /** The ops kill switch: no task runs on schedule until `until` (epoch ms, a Date, or a duration from now such as "1h"). */
  async pauseUntil(until: number | Date | Duration, task?: string): Promise<{ pausedUntil: number }> {
    return this.call(async (tw) => {
      await tw.scheduler.pauseUntil(until, task);
      const status = await tw.scheduler.status();
      const pausedUntil = task === undefined ? status.pausedUntil : status.tasks.find((t) => t.name === task)?.pausedUntil;
      return { pausedUntil: pausedUntil ?? Date.now() };
    });
  }

  /** Undoes `pauseUntil` and closes open breakers; due tasks run at the next alarm, armed now. */
  async resume(task?: string): Promise<void> {
    return this.call(async (tw) => {
      await tw.scheduler.resume(task);
      await this.arm(Date.now());
    });
  }

  /** Enqueues a job on a queue the object declared; the alarm is brought forward to the job's due time. */
  async enqueue(queue: string, payload: unknown, options?: EnqueueOptions): Promise<EnqueuedJobRpc> {
    return this.call(async (tw) => {
      const job = await tw.enqueue(queue, payload, options);
      await this.arm(job.runAt);
      return job as EnqueuedJobRpc;
    });
  }

  /**
   * Enqueues a job and answers with its result once it ran, or rejects with its failure
   * (JobFailedError) or, past `timeout`, JobWaitTimeoutError (the job goes on). The job runs in this
   * object's own alarm tick, armed at its due time, and the tick tells the waiter at once: nothing polls.
   */
  async enqueueAndWait(queue: string, payload: unknown, options: Omit<EnqueueOptions, "tx"> & { timeout?: Duration } = {}): Promise<RpcValue> {
    return this.call(async (tw) => {
      if (options === null || typeof options !== "object") throw new InvalidInputError(`enqueueAndWait: options must be an object, got ${describe(options)}`);
      const { timeout, ...enqueue } = options;
      // Checked before the job is written; the timeout counts from here.
      const { deadline } = checkWait({ timeout }, "enqueueAndWait", tw.clock.now());
      const job = await tw.enqueue(queue, payload, enqueue);
      await this.arm(job.runAt);
      const left = deadline === undefined ? undefined : Math.max(0, deadline - tw.clock.now());
      return (await tw.jobs.wait(job.id, { timeout: left })) as RpcValue;
    });
  }

  /**
   * Check, claim, complete (`tw.idempotency.run`) in this object's store: the first call with a key runs `fn`,
   * later ones get its result. Inside the object, `fn` gets the claim's context (`signal` aborts when
   * the claim is lost). A caller in the Worker may pass a function too (Workers RPC calls it back) and
   * hears of a lost claim through `onLost`; `idempotentCall(stub, options, fn)` does both and gives
   * `fn` a signal of its own.
   */
  async idempotent<T>(options: IdempotencyRunOptions, fn: (context: IdempotencyContext) => T | Promise<T>, onLost?: ClaimLostListener): Promise<T> {
    if (typeof fn !== "function") throw new InvalidInputError(`idempotent: expected a function to run, got ${describe(fn)}`);
    const listener = checkClaimLostListener(onLost);
    return this.call((tw) =>
      tw.idempotency.run(options, async ({ signal }) => {
        const stopRelay = relayClaimLoss(signal, listener);
        try {
          return await fn(new IdempotencyCall(signal));
        } finally {
          stopRelay();
        }
      }),
    );
  }

  // ---- for subclasses -----------------------------------------------------------------------

  /**
   * The object's engine, created on first use (migrations, then `setup`) while other calls wait. A
   * failure is not kept: the next call tries again.
   */
  protected engine(): Promise<Tickwork> {
    this.ready ??= this.ctx.blockConcurrencyWhile(() => this.create()).catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  /**
   * Runs `fn` as an RPC call of the object: the engine ready, the alarm checked by the watchdog, and
   * the batched logs sent before the call returns. Subclasses wrap their own RPC methods in it.
   */
  protected async call<T>(fn: (tw: Tickwork) => Promise<T>): Promise<T> {
    try {
      const tw = await this.engine();
      await this.watchdog(tw);
      return await fn(tw);
    } finally {
      await this.sink?.flush();
    }
  }

  /** Sets the alarm for `at` unless one is already set sooner (a retry or a delivery never pushes an earlier wake-up back). */
  protected async arm(at: number): Promise<void> {
    const existing = await this.ctx.storage.getAlarm();
    if (existing !== null && existing <= at) return;
    await this.ctx.storage.setAlarm(at);
  }

  // ---- internals ----------------------------------------------------------------------------

  private async create(): Promise<Tickwork> {
    const { config } = this;
    const logger = this.resolveLogger();
    const cache = config.cache === "store" ? undefined : kvCache(this.binding<KvNamespaceLike>(config.cache.kv, "a KV namespace", "kv_namespaces"), config.cache);
    const store = durableObjectStore(this.ctx.storage, { name: `durableObject(${this.objectName()})`, ...(cache ? { cache } : {}) });
    const tw = await createTickwork({
      ...config.engine,
      store,
      logger,
      logLevel: config.logLevel,
      tickBudget: config.tickBudget,
      handleSignals: false,
    });
    await this.setup(tw);
    return tw;
  }

  private resolveLogger(): LoggerOption {
    const choice = this.config.logger;
    if (choice === "console") return jsonLines();
    if (typeof choice === "object" && "binding" in choice && "appId" in choice) {
      const sink = workersLogs(this.binding<LogsBinding>(choice.binding, "a logging service", "services"), { appId: choice.appId, context: { object: this.objectName() } });
      this.sink = sink;
      return sink;
    }
    return choice as LogSink | LoggerOption;
  }

  /** The class and the name the object was found by (`SchedulerDO:v1`), or its id. */
  private objectName(): string {
    return `${this.constructor.name}:${this.ctx.id.name ?? this.ctx.id.toString()}`;
  }

  /** A binding of the object's `env`, or an error that says how to bind it: never a silent fallback. */
  private binding<T>(name: string, what: string, wranglerKey: string): T {
    const value = (this.env as Record<string, unknown> | undefined)?.[name];
    if (value === undefined || value === null) {
      throw new InvalidInputError(`${this.constructor.name}: env.${name} is not bound; it should be ${what} (wrangler.jsonc "${wranglerKey}" with binding "${name}")`);
    }
    return value as T;
  }

  /**
   * Re-arms an alarm found missing or stuck: once armed, the object always has an alarm at most
   * `ceiling` ahead, so none at all means it was lost (deleted, or dropped after the platform's
   * retries); one further in the past than `stuckAfter` (beyond the platform's retry window) will not
   * fire by itself. A new object has none yet: its first call arms it. Skipped while this instance's
   * tick runs: its last step arms the alarm.
   */
  private async watchdog(tw: Tickwork): Promise<void> {
    if (this.ticking) return;
    const at = await this.ctx.storage.getAlarm();
    const now = Date.now();
    if (at !== null && at >= now - this.config.watchdog.stuckAfter) return;
    const armedBefore = at !== null || (await this.ctx.storage.get<boolean>(ARMED_KEY)) === true;
    await this.ctx.storage.setAlarm(now);
    await this.ctx.storage.put(ARMED_KEY, true);
    if (!armedBefore) tw.logger.info("alarm.armed", { reason: "the object's first call", alarmAt: now });
    else tw.logger.warn("alarm.rearmed", { reason: at === null ? "missing" : "stuck", found: at, alarmAt: now });
  }
}
