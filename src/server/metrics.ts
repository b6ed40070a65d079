// Types only: `prom-client` is an optional peer, loaded when metrics are asked for.
import type * as promClient from "prom-client";
import * as z from "zod";
import { InvalidInputError, describe } from "../core/errors.js";
import type { LogEvent } from "../core/logger.js";
import { parseOptions } from "../core/options.js";
import { JOB_STATUSES } from "../queue/job.js";
import { countsOf } from "./shared-counts.js";
import type { ClaimHold } from "../queue/store/store.js";
import { requirePeer } from "../store/peer.js";
import type { Tickwork } from "../tickwork.js";
import { AttemptTimer } from "./attempt-timer.js";
import { ZeroedHistogram } from "./zeroed-histogram.js";

/** What the admin app serves at `/metrics`: text in some exposition format. */
export interface MetricsExposition {
  readonly contentType: string;
  render(): Promise<string>;
  /** Stops counting the engine's events. */
  close(): void;
}

const metricsOptionsSchema = z
  .object({
    /** prom-client's process and Node.js metrics (CPU, memory, event-loop lag, garbage collection, handles) beside the engine's; default true. */
    defaultMetrics: z.boolean({ error: "expected true or false" }).default(true),
  })
  .strict();

export type MetricsOptions = z.input<typeof metricsOptionsSchema>;

/** Checks metrics options where they were given (`where` names the place, e.g. `adminApp: metrics`). */
export function parseMetricsOptions(value: unknown, where: string): z.output<typeof metricsOptionsSchema> {
  if (value !== undefined && (typeof value !== "object" || value === null || Array.isArray(value))) {
    throw new InvalidInputError(`${where}: expected options { defaultMetrics? }, got ${describe(value)}`);
  }
  return parseOptions(metricsOptionsSchema, value, where);
}

const JOB_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];
const TASK_SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
/** A due job waits from a few milliseconds (a free slot) to an hour (a paused queue, an upstream's limit). */
const WAIT_SECONDS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];
/**
 * Groups exported per queue, the busiest first: group names come from payloads (tenants, symbols),
 * and one series per group of a queue with 100,000 tenants would swamp the scraper.
 */
const GROUP_SERIES = 20;
/**
 * How long a scrape waits for the store's gauges before it answers without them: within
 * Prometheus's default scrape timeout (10 s), so a store that is down or stalled never costs the
 * scrape itself (and `up`), only the gauges it holds.
 */
const STORE_READ_MS = 5_000;

/** `read()`'s value, or null when it fails or takes longer than `ms`. */
async function readAtMost<T>(ms: number, read: () => Promise<T>): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
  try {
    return await Promise.race([read().catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** How an attempt that ran in this process ended: its `job.*` event, as the `outcome` label says it. */
const JOB_OUTCOMES = { "job.succeeded": "succeeded", "job.retry_scheduled": "retried", "job.snoozed": "snoozed", "job.failed": "failed", "job.outcome_refused": "refused" } as const;
/** How a delivery's send ended, as `tickwork_delivery_sends_total` labels it (the `delivery.sent` event's fields). */
const SEND_OUTCOMES = ["delivered", "failed", "dropped"] as const;
const TASK_OUTCOMES = { "task.succeeded": "succeeded", "task.failed": "failed", "task.backoff": "backed_off", "task.outcome_refused": "refused" } as const;
/** Every limit a claim can be held by (a Record, so a new kind of hold fails to compile until it is listed). */
const HOLDS = Object.keys({ paused: 1, globalConcurrency: 1, groupConcurrency: 1, rateLimit: 1, limiter: 1, groupRateLimit: 1 } satisfies Record<ClaimHold, 1>);
/**
 * The operations `store.error` names across the engine, each a series from start-up so that the
 * first error after a restart shows in `increase()`. An operation missing here is still counted, from
 * its first error on.
 */
const STORE_OPERATIONS = [
  "claim", "settle", "heartbeat", "release", "holdSlots", "nextWakeAt", "maintenance", "schedule tick", "task run",
  "renewLease", "outbound", "fanout after task", "idempotency find", "idempotency renew", "readyz",
];

/** The units of an engine that label its series. */
interface Units {
  queues: readonly string[];
  /** Queues with flow limits: the ones `tickwork_job_limit_wait_seconds` and the claim holds apply to. */
  limited: readonly string[];
  tasks: readonly string[];
  deliveries: readonly string[];
  fanouts: readonly string[];
  limiters: readonly string[];
}

/**
 * prom-client's default metrics describe the process, not an engine, and each collection adds
 * observers (garbage collection, event-loop delay) that are never released: one registry of the
 * process, made on first use, serves every engine's scrape (and prom-client's global registry stays
 * the user's).
 */
let processRegistry: promClient.Registry | undefined;
const MISNAMED_DEFAULTS = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

function processMetrics(client: typeof promClient): promClient.Registry {
  if (processRegistry === undefined) {
    const registry = new client.Registry();
    client.collectDefaultMetrics({ register: registry });
    // Gauges named like counters, which Prometheus's own lint refuses (`promtool check metrics`): the
    // same counts by type stay, as nodejs_active_handles{type} and the like.
    for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
    processRegistry = registry;
  }
  return processRegistry;
}

/**
 * Prometheus metrics of one engine, in a registry of their own (never prom-client's global one, so
 * two engines or the user's own metrics never collide), followed by the process's default metrics
 * unless `defaultMetrics: false`. Counters and histograms are fed by the engine's events through a
 * logger observer, which sees every event whatever the log level, and start at zero for every queue,
 * task, delivery, fan-out and limiter the engine declares, so `increase()` sees the first event after
 * a restart. The gauges (jobs by queue and status, the oldest due job, task state, delivery outboxes,
 * fan-out targets, queues' flow control and shared budgets) are read from the store at each scrape,
 * so they are true across processes. Node only: prom-client needs Node built-ins that workerd lacks.
 */
export function prometheusMetrics(tw: Tickwork, options: MetricsOptions = {}): MetricsExposition {
  const o = parseMetricsOptions(options, "prometheusMetrics");
  const client = requirePeer<typeof promClient>("prom-client", "Prometheus metrics (prometheusMetrics, or adminApp and serve without { metrics: false })");
  const { Counter, Gauge, Histogram, Registry } = client;
  const registry = new Registry();
  const registers = [registry];
  const defaults = o.defaultMetrics ? processMetrics(client) : undefined;

  const jobs = new Gauge({ name: "tickwork_jobs", help: "Jobs in the store by queue and status; running: started by a handler, the claimed ones not started yet are tickwork_queue_held (read at scrape from the counts the store's writes keep).", labelNames: ["queue", "status"], registers });
  const pendingJobs = new Gauge({ name: "tickwork_job_pending", help: "A queue's pending jobs by state: due (run time reached: the backlog) or scheduled (run time ahead: delays, backoffs, flow parents waiting) (read at scrape).", labelNames: ["queue", "state"], registers });
  const oldestDue = new Gauge({ name: "tickwork_job_oldest_due_age_seconds", help: "How long the oldest due pending job of a queue has been due (0: none is due) (read at scrape).", labelNames: ["queue"], registers });
  const succeeded = new Counter({ name: "tickwork_job_succeeded_total", help: "Job attempts that succeeded in this process.", labelNames: ["queue"], registers });
  const retries = new Counter({ name: "tickwork_job_retries_total", help: "Failed job attempts with a retry scheduled.", labelNames: ["queue"], registers });
  const failed = new Counter({ name: "tickwork_job_failed_total", help: "Jobs that failed for good after their last attempt (dead: kept as failed, retried only by hand).", labelNames: ["queue"], registers });
  const leases = new Counter({ name: "tickwork_job_leases_expired_total", help: "Jobs rescued from a worker whose lease lapsed.", labelNames: ["queue"], registers });
  const jobSeconds = new ZeroedHistogram(new Histogram({ name: "tickwork_job_duration_seconds", help: "Duration of job attempts in this process, from start to recorded outcome, by outcome: succeeded, retried, snoozed (put back without spending an attempt), failed, refused (the job was cancelled or its lease lost meanwhile).", labelNames: ["queue", "outcome"], buckets: JOB_SECONDS, registers }));
  const wait = new ZeroedHistogram(new Histogram({ name: "tickwork_job_wait_seconds", help: "How long jobs waited from their run time (when they were due) until this process started them.", labelNames: ["queue"], buckets: WAIT_SECONDS, registers }));

  const taskRuns = new Counter({ name: "tickwork_task_runs_total", help: "Task runs by outcome: succeeded, failed, backed_off, refused (another process took the run over).", labelNames: ["task", "outcome"], registers });
  const taskSeconds = new ZeroedHistogram(new Histogram({ name: "tickwork_task_run_duration_seconds", help: "Duration of task runs.", labelNames: ["task", "outcome"], buckets: TASK_SECONDS, registers }));
  const breakers = new Counter({ name: "tickwork_task_breakers_opened_total", help: "Times a task's breaker opened after consecutive failures.", labelNames: ["task"], registers });
  const consecutive = new Gauge({ name: "tickwork_task_consecutive_failures", help: "Consecutive failed runs of each task (read at scrape).", labelNames: ["task"], registers });
  const paused = new Gauge({ name: "tickwork_task_paused", help: "1 while a task is paused or its breaker is open (read at scrape).", labelNames: ["task"], registers });
  const breakerOpen = new Gauge({ name: "tickwork_task_breaker_open", help: "1 while a task's breaker is open: it stays paused until resumed by hand (read at scrape).", labelNames: ["task"], registers });
  const backedOff = new Gauge({ name: "tickwork_task_backed_off", help: "1 while a task is skipped for an adaptive backoff (read at scrape).", labelNames: ["task"], registers });

  const emitted = new Counter({ name: "tickwork_delivery_items_emitted_total", help: "Items written to a delivery's outbox.", labelNames: ["delivery"], registers });
  const deliveryRetries = new Counter({ name: "tickwork_delivery_retries_total", help: "Failed delivery sends with a retry scheduled.", labelNames: ["delivery"], registers });
  const deliveryDropped = new Counter({ name: "tickwork_delivery_dropped_total", help: "Delivery items dropped to the dead-letter table after their last retry.", labelNames: ["delivery"], registers });
  const sends = new Counter({ name: "tickwork_delivery_sends_total", help: "Delivery sends in this process by outcome: delivered, failed (a retry to come), dropped (after the last retry).", labelNames: ["delivery", "outcome"], registers });
  const exhausted = new Counter({ name: "tickwork_delivery_budget_exhausted_total", help: "Delivery passes that used their whole budget and carried work to the next tick.", labelNames: ["delivery"], registers });
  const deliveryItems = new Gauge({ name: "tickwork_delivery_items", help: "Delivery items by state: pending (first send), retrying, dropped (read at scrape).", labelNames: ["delivery", "state"], registers });
  const deliveryBudget = new Gauge({ name: "tickwork_delivery_budget", help: "Sends per tick a delivery may take from the tick's outbound budget.", labelNames: ["delivery"], registers });
  const lastPassSent = new Gauge({ name: "tickwork_delivery_last_pass_sent", help: "Sends in this process's last pass of a delivery (divide by tickwork_delivery_budget for the budget used).", labelNames: ["delivery"], registers });
  const pushFailures = new Counter({ name: "tickwork_fanout_push_failures_total", help: "Fan-out pushes to one target that failed.", labelNames: ["fanout"], registers });
  const fanoutRetries = new Counter({ name: "tickwork_fanout_retries_total", help: "Fan-out rounds that failed and scheduled a retry on the backoff.", labelNames: ["fanout"], registers });
  const behind = new Gauge({ name: "tickwork_fanout_targets_behind", help: "Targets that have not acknowledged a fan-out's current version (read at scrape).", labelNames: ["fanout"], registers });
  const fanoutFailures = new Gauge({ name: "tickwork_fanout_consecutive_failures", help: "Consecutive failed rounds of a fan-out (read at scrape).", labelNames: ["fanout"], registers });

  const queuePaused = new Gauge({ name: "tickwork_queue_paused", help: "1 while a queue is paused for every process (read at scrape).", labelNames: ["queue"], registers });
  const queueRunning = new Gauge({ name: "tickwork_queue_running", help: "Jobs of a queue whose handler started, in every process (read at scrape).", labelNames: ["queue"], registers });
  const queueHeld = new Gauge({ name: "tickwork_queue_held", help: "Jobs of a queue claimed by a worker in some process and not started yet: prefetched, or handed over and not begun (read at scrape).", labelNames: ["queue"], registers });
  const globalConcurrency = new Gauge({ name: "tickwork_queue_global_concurrency", help: "A queue's globalConcurrency, for queues that set one (compare with tickwork_queue_running).", labelNames: ["queue"], registers });
  const groupJobs = new Gauge({ name: "tickwork_group_jobs", help: `Jobs of a grouped queue's busiest groups (at most ${GROUP_SERIES} per queue) by state: pending, running (read at scrape).`, labelNames: ["queue", "group", "state"], registers });
  const limitTokens = new Gauge({ name: "tickwork_limit_tokens", help: "Tokens in a shared budget now: a queue's global rate limit (queue:<name>) or a limiter (limiter:<name>) (read at scrape).", labelNames: ["bucket"], registers });
  const limitPaused = new Gauge({ name: "tickwork_limit_paused", help: "1 while a shared budget is paused for every process, by an upstream's rate-limit answer or by hand (read at scrape).", labelNames: ["bucket"], registers });
  const throttled = new Counter({ name: "tickwork_queue_throttled_total", help: "Times this process's worker of a queue started being held back, by the limit that held it.", labelNames: ["queue", "by"], registers });
  const limitWait = new ZeroedHistogram(new Histogram({ name: "tickwork_job_limit_wait_seconds", help: "How long jobs of a limited queue waited past their run time before this process started them.", labelNames: ["queue"], buckets: WAIT_SECONDS, registers }));
  const limiterPauses = new Counter({ name: "tickwork_limiter_paused_total", help: "Pauses of a limiter made in this process (an upstream's 429 or rate-limit headers, or by hand).", labelNames: ["limiter"], registers });

  const storeErrors = new Counter({ name: "tickwork_store_errors_total", help: "Store calls that failed in the background (retried).", labelNames: ["operation"], registers });
  const storeRead = new Gauge({ name: "tickwork_metrics_store_read", help: `1 when this scrape read the gauges kept in the store; 0 when the store failed or took over ${STORE_READ_MS / 1000} s, and they are left out (the process's own counters are always there).`, registers });
  const events = new Counter({ name: "tickwork_events_total", help: "Every event the engine emitted, by name and level, whatever the log level.", labelNames: ["event", "level"], registers });

  /** Creates the series of every unit at zero; those that exist keep their values. */
  const zeroes = (u: Units): void => {
    for (const queue of u.queues) {
      for (const counter of [succeeded, retries, failed, leases]) counter.inc({ queue }, 0);
      for (const outcome of Object.values(JOB_OUTCOMES)) jobSeconds.zero({ queue, outcome });
      wait.zero({ queue });
      throttled.inc({ queue, by: "paused" }, 0);
    }
    for (const queue of u.limited) {
      limitWait.zero({ queue });
      for (const by of HOLDS) throttled.inc({ queue, by }, 0);
    }
    for (const task of u.tasks) {
      breakers.inc({ task }, 0);
      for (const outcome of Object.values(TASK_OUTCOMES)) {
        taskRuns.inc({ task, outcome }, 0);
        taskSeconds.zero({ task, outcome });
      }
    }
    for (const delivery of u.deliveries) {
      for (const counter of [emitted, deliveryRetries, deliveryDropped, exhausted]) counter.inc({ delivery }, 0);
      for (const outcome of SEND_OUTCOMES) sends.inc({ delivery, outcome }, 0);
    }
    for (const fanout of u.fanouts) for (const counter of [pushFailures, fanoutRetries]) counter.inc({ fanout }, 0);
    for (const limiter of u.limiters) limiterPauses.inc({ limiter }, 0);
  };
  for (const operation of STORE_OPERATIONS) storeErrors.inc({ operation }, 0);
  // What is known before the first scrape; tasks, and queues' limits, are read with the first scrape.
  zeroes({ queues: tw.status().queues.map((q) => q.name), limited: [], tasks: [], deliveries: [...tw.deliveries.keys()], fanouts: [...tw.fanouts.keys()], limiters: tw.limiters().map((l) => l.name) });

  const timer = new AttemptTimer();
  const observe = (e: LogEvent): void => {
    events.inc({ event: e.event, level: e.level });
    const queue = typeof e.queue === "string" ? e.queue : undefined;
    const task = typeof e.task === "string" ? e.task : undefined;
    const id = typeof e.id === "string" ? e.id : undefined;
    const attempt = typeof e.attempt === "number" ? e.attempt : undefined;
    const seconds = typeof e.durationMs === "number" ? e.durationMs / 1000 : undefined;
    switch (e.event) {
      case "job.started":
        if (id !== undefined && attempt !== undefined) timer.start(id, attempt, e.time);
        if (queue !== undefined && typeof e.runAt === "number") wait.observe({ queue }, Math.max(0, e.time - e.runAt) / 1000);
        break;
      case "job.succeeded":
      case "job.retry_scheduled":
      case "job.snoozed":
      case "job.failed":
      case "job.outcome_refused": {
        if (queue === undefined) break;
        if (e.event === "job.succeeded") succeeded.inc({ queue });
        else if (e.event === "job.retry_scheduled") retries.inc({ queue });
        else if (e.event === "job.failed") failed.inc({ queue });
        // A rescued job's `job.failed` finds no start: `job.lease_expired` came first and forgot it.
        const ms = id !== undefined && attempt !== undefined ? timer.end(id, attempt, e.time) : undefined;
        const took = ms !== undefined ? ms / 1000 : seconds;
        if (took !== undefined) jobSeconds.observe({ queue, outcome: JOB_OUTCOMES[e.event] }, took);
        break;
      }
      case "job.lease_expired":
        if (queue !== undefined) leases.inc({ queue });
        if (id !== undefined) timer.forget(id);
        break;
      case "job.released":
        if (id !== undefined) timer.forget(id);
        break;
      case "task.succeeded":
      case "task.failed":
      case "task.backoff":
      case "task.outcome_refused": {
        if (task === undefined) break;
        const outcome = TASK_OUTCOMES[e.event];
        taskRuns.inc({ task, outcome });
        if (seconds !== undefined) taskSeconds.observe({ task, outcome }, seconds);
        break;
      }
      case "task.breaker_opened":
        if (task !== undefined) breakers.inc({ task });
        break;
      case "delivery.emitted":
        if (typeof e.delivery === "string") emitted.inc({ delivery: e.delivery }, typeof e.count === "number" ? e.count : 1);
        break;
      case "delivery.failed":
        if (typeof e.delivery === "string") deliveryRetries.inc({ delivery: e.delivery });
        break;
      case "delivery.dropped":
        if (typeof e.delivery === "string") deliveryDropped.inc({ delivery: e.delivery });
        break;
      case "delivery.carried":
        if (typeof e.delivery === "string") exhausted.inc({ delivery: e.delivery });
        break;
      case "delivery.sent":
        if (typeof e.delivery === "string") for (const outcome of SEND_OUTCOMES) if (typeof e[outcome] === "number" && e[outcome] > 0) sends.inc({ delivery: e.delivery, outcome }, e[outcome]);
        break;
      case "fanout.push_failed":
        if (typeof e.fanout === "string") pushFailures.inc({ fanout: e.fanout });
        break;
      case "fanout.retry_scheduled":
        if (typeof e.fanout === "string") fanoutRetries.inc({ fanout: e.fanout });
        break;
      case "queue.throttled":
        if (queue !== undefined) throttled.inc({ queue, by: typeof e.by === "string" ? e.by : "unknown" });
        break;
      case "queue.limited_claim":
        if (queue === undefined || !Array.isArray(e.waitedMs)) break;
        for (const ms of e.waitedMs) if (typeof ms === "number") limitWait.observe({ queue }, ms / 1000);
        break;
      case "limiter.paused":
        if (typeof e.limiter === "string") limiterPauses.inc({ limiter: e.limiter });
        break;
      case "store.error":
        storeErrors.inc({ operation: typeof e.operation === "string" ? e.operation : "unknown" });
        break;
    }
  };
  const stop = tw.logger.observe(observe);
  const counted = countsOf(tw);

  /** What a scrape reads from the store, every process's view alike. */
  const readStore = async (now: number, declared: string[]) => {
    const [stored, scheduler, deliveries, fanouts, flows, limiters, dueSince, scheduled] = await Promise.all([
      // Counters the store's writes keep, read at every scrape (shared-counts.ts).
      counted.get(),
      tw.scheduler.status(),
      Promise.all([...tw.deliveries.values()].map((d) => d.status())),
      Promise.all([...tw.fanouts.values()].map((f) => f.status())),
      tw.queues.status(undefined, { groups: GROUP_SERIES }),
      Promise.all(tw.limiters().map(async (l) => ({ name: l.name, bucket: l.spec.bucket, state: await l.state() }))),
      // The earliest run time of a pending job: an index probe per queue, no count.
      Promise.all(declared.map((queue) => tw.store.queue.nextWakeAt({ queues: [queue], leases: false }))),
      // The scheduled jobs counted on the claim index (never the backlog); the due ones are the rest.
      tw.store.queue.countScheduled({ queues: declared, now }),
    ]);
    return { stored, scheduler, deliveries, fanouts, flows, limiters, dueSince, scheduled };
  };
  type StoreRead = Awaited<ReturnType<typeof readStore>>;
  /** The gauges read from the store, set from one read. */
  const STORE_GAUGES = [jobs, oldestDue, pendingJobs, consecutive, paused, breakerOpen, backedOff, deliveryItems, deliveryBudget, lastPassSent, behind, fanoutFailures, queuePaused, queueRunning, queueHeld, globalConcurrency, groupJobs, limitTokens, limitPaused];
  const fromStore = ({ stored, scheduler, deliveries, fanouts, flows, limiters, dueSince, scheduled }: StoreRead, now: number, declared: string[]): void => {
    zeroes({
      queues: declared,
      limited: flows.filter((f) => f.globalConcurrency !== null || f.groupConcurrency !== null || f.buckets.length > 0).map((f) => f.name),
      tasks: scheduler.tasks.map((t) => t.name),
      deliveries: deliveries.map((d) => d.name),
      fanouts: fanouts.map((f) => f.name),
      limiters: limiters.map((l) => l.name),
    });

    jobs.reset();
    oldestDue.reset();
    pendingJobs.reset();
    const countsOf = new Map(stored.map((c) => [c.queue, c.counts]));
    // Live counts from the flow-control state read at this scrape (fresh on every store), the
    // finished ones from the counts (at most a minute old on SQLite).
    const live = new Map(flows.map((f) => [f.name, f]));
    for (const queue of new Set([...countsOf.keys(), ...declared])) {
      const flow = live.get(queue);
      for (const status of JOB_STATUSES) jobs.set({ queue, status }, (flow && status === "pending" ? flow.pending : flow && status === "running" ? flow.running : countsOf.get(queue)?.[status]) ?? 0);
    }
    declared.forEach((queue, i) => {
      const due = dueSince[i];
      oldestDue.set({ queue }, due != null && due <= now ? (now - due) / 1000 : 0);
      const pending = live.get(queue)?.pending ?? countsOf.get(queue)?.pending ?? 0;
      pendingJobs.set({ queue, state: "due" }, Math.max(0, pending - (scheduled[queue] ?? 0)));
      pendingJobs.set({ queue, state: "scheduled" }, scheduled[queue] ?? 0);
    });

    for (const gauge of [consecutive, paused, breakerOpen, backedOff]) gauge.reset();
    for (const t of scheduler.tasks) {
      consecutive.set({ task: t.name }, t.consecutiveFailures);
      paused.set({ task: t.name }, t.paused ? 1 : 0);
      breakerOpen.set({ task: t.name }, t.breakerOpen ? 1 : 0);
      backedOff.set({ task: t.name }, t.nextRunAfter !== null ? 1 : 0);
    }
    for (const gauge of [deliveryItems, deliveryBudget, lastPassSent, behind, fanoutFailures]) gauge.reset();
    for (const d of deliveries) {
      for (const state of ["pending", "retrying", "dropped"] as const) deliveryItems.set({ delivery: d.name, state }, d[state]);
      deliveryBudget.set({ delivery: d.name }, d.budget);
      if (d.lastPass) lastPassSent.set({ delivery: d.name }, d.lastPass.sent);
    }
    for (const f of fanouts) {
      behind.set({ fanout: f.name }, f.targets.filter((t) => t.behind).length);
      fanoutFailures.set({ fanout: f.name }, f.consecutiveFailures);
    }
    for (const gauge of [queuePaused, queueRunning, queueHeld, globalConcurrency, groupJobs, limitTokens, limitPaused]) gauge.reset();
    const buckets = new Map<string, { tokens: number; pausedUntil: number | null }>();
    for (const f of flows) {
      queuePaused.set({ queue: f.name }, f.paused ? 1 : 0);
      queueRunning.set({ queue: f.name }, f.running);
      queueHeld.set({ queue: f.name }, f.held);
      if (f.globalConcurrency !== null) globalConcurrency.set({ queue: f.name }, f.globalConcurrency);
      for (const g of f.groups) {
        groupJobs.set({ queue: f.name, group: g.group, state: "pending" }, g.pending);
        groupJobs.set({ queue: f.name, group: g.group, state: "running" }, g.running);
      }
      for (const b of f.buckets) buckets.set(b.bucket, b);
    }
    // A limiter no queue draws from (one a handler or an HTTP client acquires) is a budget too.
    for (const { bucket, state } of limiters) buckets.set(bucket, state);
    for (const [bucket, b] of buckets) {
      limitTokens.set({ bucket }, b.tokens);
      limitPaused.set({ bucket }, b.pausedUntil !== null ? 1 : 0);
    }
  };

  return {
    contentType: registry.contentType,
    async render() {
      const now = tw.clock.now();
      const declared = tw.status().queues.map((q) => q.name);
      const read = await readAtMost(STORE_READ_MS, () => readStore(now, declared));
      storeRead.set(read ? 1 : 0);
      if (read) fromStore(read, now, declared);
      // A scrape while the store is down or slow still answers, with the process's own counters
      // (store errors among them): the gauges read from the store are left out, not shown stale.
      else for (const gauge of STORE_GAUGES) gauge.reset();
      const [own, ofProcess] = await Promise.all([registry.metrics(), defaults?.metrics() ?? ""]);
      return own + ofProcess;
    },
    close: stop,
  };
}
