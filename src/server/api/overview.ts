import type { Hono } from "hono";
import type { Tickwork } from "../../tickwork.js";
import type { Job } from "../../queue/job.js";
import type { TaskStatus } from "../../schedule/task.js";
import type { Throughput } from "../throughput.js";
import { deliverySummary } from "./deliveries.js";
import { fanoutSummary } from "./fanouts.js";
import { queueSummaries } from "./queues.js";
import type { JobSummary, Overview, TaskSummary } from "./types.js";

/** Failed jobs shown at once; older ones are a page of `GET /api/jobs?status=failed` away. */
const FAILED_SHOWN = 20;

export function overviewRoutes(api: Hono, tw: Tickwork, throughput: Throughput): void {
  api.get("/overview", async (c) => {
    const [queues, failed, scheduler, deliveries, fanouts] = await Promise.all([
      queueSummaries(tw),
      tw.jobs.list({ status: "failed", limit: FAILED_SHOWN }),
      tw.scheduler.status(),
      Promise.all([...tw.deliveries.values()].map((d) => deliverySummary(tw, d))),
      Promise.all([...tw.fanouts.values()].map(fanoutSummary)),
    ]);
    const now = tw.clock.now();
    const { instanceId, store, started } = tw.status();
    const overview: Overview = {
      now,
      engine: { instanceId, store, started },
      queues,
      failed: failed.map(jobSummary),
      scheduler: { pausedUntil: scheduler.pausedUntil, tasks: scheduler.tasks.map(taskSummary) },
      throughput: throughput.snapshot(now),
      deliveries,
      fanouts,
    };
    return c.json(overview);
  });
}

function jobSummary({ payload: _payload, ...job }: Job): JobSummary {
  return job;
}

function taskSummary(t: TaskStatus): TaskSummary {
  return {
    name: t.name,
    schedule: t.schedule,
    lastRunAt: t.lastRunAt,
    lastDurationMs: t.lastDurationMs,
    lastOutcome: t.lastOutcome,
    lastError: t.lastError,
    scheduleError: t.scheduleError,
    consecutiveFailures: t.consecutiveFailures,
    nextRunAt: t.nextRunAt,
    nextRunAfter: t.nextRunAfter,
    paused: t.paused,
    pausedUntil: t.pausedUntil,
    breakerOpen: t.breakerOpen,
    running: t.running,
  };
}
