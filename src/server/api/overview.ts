import type { Hono } from "hono";
import type { Tickwork } from "../../tickwork.js";
import type { TaskStatus } from "../../schedule/task.js";
import type { Throughput } from "../throughput.js";
import { deliverySummary } from "./deliveries.js";
import { fanoutSummary } from "./fanouts.js";
import { jobSummary } from "./jobs.js";
import { queueSummaries } from "./queues.js";
import type { Overview, TaskSummary } from "./types.js";

/** Failed jobs shown at once; the dashboard's job browser pages through the rest (`GET /api/jobs?status=failed`). */
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
    runsAt: runsAt(t),
    paused: t.paused,
    pausedUntil: t.pausedUntil,
    breakerOpen: t.breakerOpen,
    running: t.running,
  };
}

/**
 * When the scheduler will really start the task: its next slot, unless a pause or a backoff holds it
 * past that; then at the hold's end, since a slot that fell due meanwhile runs as soon as it ends
 * (the engine's status gives the slot alone, `nextRunAt`). An open breaker holds it until a resume.
 */
function runsAt(t: TaskStatus): number | null {
  if (t.breakerOpen || t.nextRunAt === null) return null;
  return Math.max(t.nextRunAt, t.pausedUntil ?? t.nextRunAt, t.nextRunAfter ?? t.nextRunAt);
}
