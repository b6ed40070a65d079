import type { TaskStatus } from "../schedule/task.js";
import { firstLine, table, time } from "./output.js";

/** What a task is doing now, in a few words: the breaker, a run, a pause, a backoff, or active. */
export function taskState(task: TaskStatus): string {
  if (task.breakerOpen) return "breaker open";
  if (task.running) return "running";
  if (task.pausedUntil !== null) return `paused until ${time(task.pausedUntil)}`;
  if (task.nextRunAfter !== null) return `backing off until ${time(task.nextRunAfter)}`;
  return "active";
}

/** The tasks' table (`status`, `tasks`), then one line per task whose last run failed. */
export function taskTable(tasks: TaskStatus[]): string[] {
  const headers = ["TASK", "SCHEDULE", "LAST RUN", "OUTCOME", "NEXT RUN", "FAILURES", "STATE"];
  const rows = tasks.map((t) => [t.name, t.schedule, time(t.lastRunAt), t.lastOutcome ?? "-", time(t.nextRunAt), String(t.consecutiveFailures), taskState(t)]);
  const errors = tasks.filter((t) => t.lastOutcome === "failed" && t.lastError).map((t) => `  ${t.name}: ${firstLine(t.lastError, 120)}`);
  return [...table(headers, rows, ["FAILURES"]), ...errors];
}

/** The line that says every task is paused, when they are. */
export function globalPause(pausedUntil: number | null): string[] {
  return pausedUntil === null ? [] : [`every task is paused until ${time(pausedUntil)} (tickwork tasks resume)`];
}
