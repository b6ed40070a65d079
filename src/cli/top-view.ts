// What `tickwork top` shows, as plain lines: the command draws them on the terminal.
import type { QueueFlowStatus } from "../queue/controls.js";
import type { QueueCounts } from "../queue/store/store.js";
import type { TaskStatus } from "../schedule/task.js";
import { table, time } from "./output.js";
import { taskState } from "./task-table.js";

/** Finished jobs per second are measured over this much time, so one busy second does not make the rate jump. */
export const RATE_WINDOW_MS = 10_000;

export interface TopSnapshot {
  /** Epoch ms the numbers were read at. */
  at: number;
  queues: QueueFlowStatus[];
  counts: QueueCounts[];
  scheduler: { pausedUntil: number | null; tasks: TaskStatus[] };
}

export interface TopFrame {
  /** "SQLite ./tickwork.db", from describeDatabase. */
  database: string;
  config: string | undefined;
  intervalMs: number;
  snapshot: TopSnapshot | undefined;
  /** Finished jobs per second by queue; null until two readings are apart. */
  rates: ReadonlyMap<string, number | null>;
  /** The last refresh's failure, shown until one succeeds. */
  problem: string | null;
  /** The last engine warning, as a text line. */
  event: string | null;
}

/**
 * Jobs finished (succeeded or failed) per second by queue, from the counts of successive readings:
 * other processes run the jobs, so their outcomes are seen in the database, not as events.
 */
export class Rates {
  private readonly readings = new Map<string, { at: number; done: number }[]>();

  record({ at, queues, counts }: TopSnapshot): Map<string, number | null> {
    const rates = new Map<string, number | null>();
    for (const { name: queue } of queues) {
      const c = counts.find((x) => x.queue === queue)?.counts;
      const readings = this.readings.get(queue) ?? [];
      // The newest reading from before the window stays as its start: a refresh that came late (a busy
      // machine, a slow store) still shows the rate since then, not a blank or a zero.
      const inside = readings.findIndex((r) => r.at >= at - RATE_WINDOW_MS);
      const kept = inside === -1 ? readings.slice(-1) : readings.slice(Math.max(0, inside - 1));
      kept.push({ at, done: (c?.succeeded ?? 0) + (c?.failed ?? 0) });
      this.readings.set(queue, kept);
      const first = kept[0]!;
      // Retention deletes finished jobs: a count that drops is not negative work.
      rates.set(queue, kept.length < 2 || at === first.at ? null : Math.max(0, (kept.at(-1)!.done - first.done) / ((at - first.at) / 1000)));
    }
    return rates;
  }
}

export function renderTop(frame: TopFrame, width: number, height: number): string[] {
  const every = frame.intervalMs % 1000 === 0 ? `${frame.intervalMs / 1000}s` : `${frame.intervalMs}ms`;
  const at = frame.snapshot ? time(frame.snapshot.at) : "reading…";
  const lines = [`tickwork top · ${frame.database} · config ${frame.config ?? "none"} · ${at} · every ${every} · q quits`, ""];
  const { snapshot } = frame;
  if (snapshot) {
    lines.push(...queueLines(snapshot, frame.rates), "");
    lines.push(...taskLines(snapshot, frame.config !== undefined));
  }
  const footer = [frame.problem ? `refresh failed: ${frame.problem} (trying again)` : null, frame.event ? `last warning: ${frame.event}` : null].filter((l): l is string => l !== null);
  return fit([...lines, ...(footer.length ? ["", ...footer] : [])], width, height);
}

function queueLines({ queues, counts }: TopSnapshot, rates: ReadonlyMap<string, number | null>): string[] {
  if (queues.length === 0) return ["no queues: the config declares none and the database has no job"];
  const headers = ["QUEUE", "STATE", "PENDING", "RUNNING", "FAILED", "SUCCEEDED", "DONE/S"];
  const rows = queues.map((q) => {
    const c: Partial<QueueCounts["counts"]> = counts.find((x) => x.queue === q.name)?.counts ?? {};
    const rate = rates.get(q.name);
    const state = q.paused ? "paused" : q.pausedGroups.length ? `${q.pausedGroups.length} group${q.pausedGroups.length === 1 ? "" : "s"} paused` : "active";
    const running = q.globalConcurrency === null ? String(q.running) : `${q.running}/${q.globalConcurrency}`;
    return [q.name, state, String(q.pending), running, String(c.failed ?? 0), String(c.succeeded ?? 0), rate === null || rate === undefined ? "-" : rate.toFixed(1)];
  });
  return table(headers, rows, headers.slice(2));
}

function taskLines({ scheduler }: TopSnapshot, hasConfig: boolean): string[] {
  const paused = scheduler.pausedUntil === null ? [] : [`every task is paused until ${time(scheduler.pausedUntil)}`];
  if (scheduler.tasks.length === 0) return [...paused, hasConfig ? "the config defines no tasks" : "tasks: start top with the config that defines them (--config)"];
  const headers = ["TASK", "SCHEDULE", "NEXT RUN", "LAST RUN", "OUTCOME", "STATE"];
  const rows = scheduler.tasks.map((t) => [t.name, t.schedule, time(t.nextRunAt), time(t.lastRunAt), t.lastOutcome ?? "-", taskState(t)]);
  return [...paused, ...table(headers, rows)];
}

/** Each line cut to the width, and the lines to the height, saying how many did not fit. */
function fit(lines: string[], width: number, height: number): string[] {
  const cut = (line: string) => (line.length > width ? `${line.slice(0, Math.max(0, width - 1))}…` : line);
  if (lines.length <= height) return lines.map(cut);
  const shown = lines.slice(0, Math.max(0, height - 1));
  return [...shown, `… ${lines.length - shown.length} more lines: make the terminal taller`].map(cut);
}
