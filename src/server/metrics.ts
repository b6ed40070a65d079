// Types only: `prom-client` is an optional peer, loaded when metrics are asked for.
import type * as promClient from "prom-client";
import { requirePeer } from "../store/peer.js";
import type { Tickwork } from "../tickwork.js";
import type { LogEvent } from "../core/logger.js";
import { JOB_STATUSES } from "../queue/job.js";

/** What the admin app serves at `/metrics`: text in some exposition format. */
export interface MetricsExposition {
  readonly contentType: string;
  render(): Promise<string>;
  /** Stops counting the engine's events. */
  close(): void;
}

const JOB_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];
const TASK_SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
/** A job held by a limit waits from a few milliseconds (a busy slot) to an hour (a paused upstream). */
const LIMIT_WAIT_SECONDS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];
/**
 * Groups exported per queue, the busiest first: group names come from payloads (tenants, symbols),
 * and one series per group of a queue with 100,000 tenants would swamp the scraper.
 */
const GROUP_SERIES = 20;

/**
 * Prometheus metrics of one engine, in a registry of their own (never prom-client's global one, so
 * two engines or the user's own metrics never collide). Counters and histograms are fed by the
 * engine's events through a logger observer, which sees every event whatever the log level; the
 * gauges (jobs by queue and status, task state, delivery outboxes, fan-out targets, queues' flow
 * control and shared budgets) are read from the store at each scrape, so they are true across processes. Node only: prom-client needs Node
 * built-ins that workerd lacks.
 */
export function prometheusMetrics(tw: Tickwork): MetricsExposition {
  const { Counter, Gauge, Histogram, Registry } = requirePeer<typeof promClient>("prom-client", "Prometheus metrics (prometheusMetrics, or adminApp and serve without { metrics: false })");
  const registry = new Registry();
  const registers = [registry];

  const jobs = new Gauge({ name: "tickwork_jobs", help: "Jobs in the store by queue and status (read at scrape).", labelNames: ["queue", "status"], registers });
  const succeeded = new Counter({ name: "tickwork_jobs_succeeded_total", help: "Job attempts that succeeded in this process.", labelNames: ["queue"], registers });
  const retries = new Counter({ name: "tickwork_job_retries_total", help: "Failed job attempts with a retry scheduled.", labelNames: ["queue"], registers });
  const failed = new Counter({ name: "tickwork_jobs_failed_total", help: "Jobs that failed for good after their last attempt (dropped from the queue, kept as failed).", labelNames: ["queue"], registers });
  const leases = new Counter({ name: "tickwork_job_leases_expired_total", help: "Jobs rescued from a worker whose lease lapsed.", labelNames: ["queue"], registers });
  const jobSeconds = new Histogram({ name: "tickwork_job_duration_seconds", help: "Duration of successful job attempts, from claim to completion.", labelNames: ["queue"], buckets: JOB_SECONDS, registers });

  const taskRuns = new Counter({ name: "tickwork_task_runs_total", help: "Task runs by outcome: succeeded, failed, backed_off.", labelNames: ["task", "outcome"], registers });
  const taskSeconds = new Histogram({ name: "tickwork_task_run_duration_seconds", help: "Duration of task runs.", labelNames: ["task", "outcome"], buckets: TASK_SECONDS, registers });
  const breakers = new Counter({ name: "tickwork_task_breakers_opened_total", help: "Times a task's breaker opened after consecutive failures.", labelNames: ["task"], registers });
  const consecutive = new Gauge({ name: "tickwork_task_consecutive_failures", help: "Consecutive failed runs of each task (read at scrape).", labelNames: ["task"], registers });
  const paused = new Gauge({ name: "tickwork_task_paused", help: "1 while a task is paused or its breaker is open (read at scrape).", labelNames: ["task"], registers });
  const backedOff = new Gauge({ name: "tickwork_task_backed_off", help: "1 while a task is skipped for an adaptive backoff (read at scrape).", labelNames: ["task"], registers });

  const emitted = new Counter({ name: "tickwork_delivery_items_emitted_total", help: "Items written to a delivery's outbox.", labelNames: ["delivery"], registers });
  const deliveryRetries = new Counter({ name: "tickwork_delivery_retries_total", help: "Failed delivery sends with a retry scheduled.", labelNames: ["delivery"], registers });
  const deliveryDropped = new Counter({ name: "tickwork_delivery_dropped_total", help: "Delivery items dropped to the dead-letter table after their last retry.", labelNames: ["delivery"], registers });
  const exhausted = new Counter({ name: "tickwork_delivery_budget_exhausted_total", help: "Delivery passes that used their whole budget and carried work to the next tick.", labelNames: ["delivery"], registers });
  const deliveryItems = new Gauge({ name: "tickwork_delivery_items", help: "Delivery items by state: pending (first send), retrying, dropped (read at scrape).", labelNames: ["delivery", "state"], registers });
  const deliveryBudget = new Gauge({ name: "tickwork_delivery_budget", help: "Sends per tick a delivery may take from the tick's outbound budget.", labelNames: ["delivery"], registers });
  const lastPassSent = new Gauge({ name: "tickwork_delivery_last_pass_sent", help: "Sends in this process's last pass of a delivery (divide by tickwork_delivery_budget for the budget used).", labelNames: ["delivery"], registers });
  const pushFailures = new Counter({ name: "tickwork_fanout_push_failures_total", help: "Fan-out pushes to one target that failed.", labelNames: ["fanout"], registers });
  const fanoutRetries = new Counter({ name: "tickwork_fanout_retries_total", help: "Fan-out rounds that failed and scheduled a retry on the backoff.", labelNames: ["fanout"], registers });
  const behind = new Gauge({ name: "tickwork_fanout_targets_behind", help: "Targets that have not acknowledged a fan-out's current version (read at scrape).", labelNames: ["fanout"], registers });
  const fanoutFailures = new Gauge({ name: "tickwork_fanout_consecutive_failures", help: "Consecutive failed rounds of a fan-out (read at scrape).", labelNames: ["fanout"], registers });

  const queuePaused = new Gauge({ name: "tickwork_queue_paused", help: "1 while a queue is paused for every process (read at scrape).", labelNames: ["queue"], registers });
  const queueRunning = new Gauge({ name: "tickwork_queue_running", help: "Jobs of a queue running in every process, leases not lapsed (read at scrape).", labelNames: ["queue"], registers });
  const globalConcurrency = new Gauge({ name: "tickwork_queue_global_concurrency", help: "A queue's globalConcurrency, for queues that set one (compare with tickwork_queue_running).", labelNames: ["queue"], registers });
  const groupJobs = new Gauge({ name: "tickwork_group_jobs", help: `Jobs of a grouped queue's busiest groups (at most ${GROUP_SERIES} per queue) by state: pending, running (read at scrape).`, labelNames: ["queue", "group", "state"], registers });
  const limitTokens = new Gauge({ name: "tickwork_limit_tokens", help: "Tokens in a shared budget now: a queue's global rate limit (queue:<name>) or a limiter (limiter:<name>) (read at scrape).", labelNames: ["bucket"], registers });
  const limitPaused = new Gauge({ name: "tickwork_limit_paused", help: "1 while a shared budget is paused for every process, by an upstream's rate-limit answer or by hand (read at scrape).", labelNames: ["bucket"], registers });
  const throttled = new Counter({ name: "tickwork_queue_throttled_total", help: "Times this process's worker of a queue started being held back, by the limit that held it.", labelNames: ["queue", "by"], registers });
  const limitWait = new Histogram({ name: "tickwork_job_limit_wait_seconds", help: "How long jobs of a limited queue waited past their run time before this process started them.", labelNames: ["queue"], buckets: LIMIT_WAIT_SECONDS, registers });
  const limiterPauses = new Counter({ name: "tickwork_limiter_paused_total", help: "Pauses of a limiter made in this process (an upstream's 429 or rate-limit headers, or by hand).", labelNames: ["limiter"], registers });

  const storeErrors = new Counter({ name: "tickwork_store_errors_total", help: "Store calls that failed in the background (retried).", labelNames: ["operation"], registers });
  const events = new Counter({ name: "tickwork_events_total", help: "Every event the engine emitted, by name and level, whatever the log level.", labelNames: ["event", "level"], registers });

  const observe = (e: LogEvent): void => {
    events.inc({ event: e.event, level: e.level });
    const queue = typeof e.queue === "string" ? e.queue : undefined;
    const task = typeof e.task === "string" ? e.task : undefined;
    const seconds = typeof e.durationMs === "number" ? e.durationMs / 1000 : undefined;
    switch (e.event) {
      case "job.succeeded":
        if (queue === undefined) break;
        succeeded.inc({ queue });
        if (seconds !== undefined) jobSeconds.observe({ queue }, seconds);
        break;
      case "job.retry_scheduled":
        if (queue !== undefined) retries.inc({ queue });
        break;
      case "job.failed":
        if (queue !== undefined) failed.inc({ queue });
        break;
      case "job.lease_expired":
        if (queue !== undefined) leases.inc({ queue });
        break;
      case "task.succeeded":
      case "task.failed":
      case "task.backoff": {
        if (task === undefined) break;
        const outcome = e.event === "task.succeeded" ? "succeeded" : e.event === "task.failed" ? "failed" : "backed_off";
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

  return {
    contentType: registry.contentType,
    async render() {
      const [counts, scheduler, deliveries, fanouts, flows, limiters] = await Promise.all([
        tw.jobs.counts(),
        tw.scheduler.status(),
        Promise.all([...tw.deliveries.values()].map((d) => d.status())),
        Promise.all([...tw.fanouts.values()].map((f) => f.status())),
        tw.queues.status(undefined, { groups: GROUP_SERIES }),
        Promise.all(tw.limiters().map(async (l) => ({ bucket: l.spec.bucket, state: await l.state() }))),
      ]);
      const declared = tw.status().queues.map((q) => q.name);
      jobs.reset();
      for (const queue of declared) for (const status of JOB_STATUSES) jobs.set({ queue, status }, 0);
      for (const { queue, counts: byStatus } of counts) for (const status of JOB_STATUSES) jobs.set({ queue, status }, byStatus[status]);
      consecutive.reset();
      paused.reset();
      backedOff.reset();
      for (const t of scheduler.tasks) {
        consecutive.set({ task: t.name }, t.consecutiveFailures);
        paused.set({ task: t.name }, t.paused ? 1 : 0);
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
      for (const gauge of [queuePaused, queueRunning, globalConcurrency, groupJobs, limitTokens, limitPaused]) gauge.reset();
      const buckets = new Map<string, { tokens: number; pausedUntil: number | null }>();
      for (const f of flows) {
        queuePaused.set({ queue: f.name }, f.paused ? 1 : 0);
        queueRunning.set({ queue: f.name }, f.running);
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
      return registry.metrics();
    },
    close: stop,
  };
}
