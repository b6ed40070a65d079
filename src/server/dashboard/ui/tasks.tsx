import type { TaskSummary } from "../../api/types.js";
import { absolute, firstLine, relative, span } from "./format.js";

export interface TaskActions {
  runNow(task: string): void;
  pause(task: string, until: string): void;
  resume(task: string): void;
}

const PAUSE_FOR = "1h";

/** What the task is doing or waiting for, the most pressing first. */
function state(task: TaskSummary, now: number): { text: string; tone: string } {
  if (task.breakerOpen) return { text: `breaker open after ${task.consecutiveFailures} failure${task.consecutiveFailures === 1 ? "" : "s"}`, tone: "bad" };
  if (task.pausedUntil !== null) return { text: `paused until ${absolute(task.pausedUntil)}`, tone: "warn" };
  if (task.running) return { text: "running", tone: "ok" };
  if (task.nextRunAfter !== null) return { text: `backing off, runs ${relative(task.nextRunAfter, now)}`, tone: "warn" };
  return { text: "scheduled", tone: "" };
}

/**
 * When the task really runs next (`runsAt`: its slot pushed past a pause or a backoff), never the bare
 * slot: a paused task's slot passes while it waits, and "now" beside "paused" misleads.
 */
function NextRun(props: { task: TaskSummary; now: number }) {
  const { task, now } = props;
  if (task.breakerOpen) return <td data-next-run data-label="Next run">when resumed</td>;
  if (task.runsAt === null) return <td data-next-run data-label="Next run">{task.scheduleError !== null ? "cannot compute" : "—"}</td>;
  if (task.pausedUntil !== null) {
    return (
      <td data-next-run data-label="Next run" title={`runs ${absolute(task.runsAt)}`}>
        paused until {absolute(task.pausedUntil)}
        {task.runsAt > task.pausedUntil ? <div class="sub">then runs {relative(task.runsAt, now)}</div> : null}
      </td>
    );
  }
  const backingOff = task.nextRunAfter !== null && task.runsAt === task.nextRunAfter;
  return (
    <td data-next-run data-label="Next run" title={absolute(task.runsAt)}>
      {relative(task.runsAt, now)}
      {backingOff ? <div class="sub">after its backoff</div> : null}
    </td>
  );
}

const OUTCOME_TONE = { succeeded: "ok", failed: "bad", backed_off: "warn" } as const;

export function Tasks(props: { tasks: TaskSummary[]; pausedUntil: number | null; now: number; busy: boolean; actions: TaskActions }) {
  const { tasks, now, busy, actions } = props;
  if (tasks.length === 0) return <p class="empty">No periodic task is defined in this process.</p>;
  return (
    <div>
      <div class="toolbar">
        {props.pausedUntil !== null && props.pausedUntil > now ? <span class="tag warn">all tasks paused until {absolute(props.pausedUntil)}</span> : null}
        <button type="button" disabled={busy} onClick={() => actions.runNow("all")}>
          Run all now
        </button>
        <button type="button" disabled={busy} onClick={() => actions.pause("all", PAUSE_FOR)}>
          Pause all {PAUSE_FOR}
        </button>
        <button type="button" disabled={busy} onClick={() => actions.resume("all")}>
          Resume all
        </button>
      </div>
      <table class="grid stack" aria-label="Tasks">
        <thead>
          <tr>
            <th>Task</th>
            <th>Last run</th>
            <th>Next run</th>
            <th class="num">Failures in a row</th>
            <th>State</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {tasks.map((task) => {
            const s = state(task, now);
            const held = task.breakerOpen || task.pausedUntil !== null;
            return (
              <tr key={task.name} data-task={task.name}>
                <td>
                  <strong>{task.name}</strong>
                  <div class="sub">{task.schedule}</div>
                </td>
                <td data-label="Last run" title={absolute(task.lastRunAt)}>
                  {task.lastRunAt === null ? "never" : relative(task.lastRunAt, now)}
                  {task.lastOutcome ? <span class={`tag ${OUTCOME_TONE[task.lastOutcome]}`}>{task.lastOutcome.replace("_", " ")}</span> : null}
                  {task.lastDurationMs !== null ? <div class="sub">took {span(task.lastDurationMs)}</div> : null}
                  {task.lastOutcome !== "succeeded" && task.lastError ? (
                    <div class="sub bad" title={task.lastError}>
                      {firstLine(task.lastError)}
                    </div>
                  ) : null}
                </td>
                <NextRun task={task} now={now} />
                <td class={task.consecutiveFailures > 0 ? "num bad" : "num"} data-label="Failures in a row">{task.consecutiveFailures}</td>
                <td data-label="State">
                  <span class={`tag ${s.tone}`}>{s.text}</span>
                </td>
                <td class="actions">
                  <button type="button" disabled={busy} aria-label={`Run ${task.name} now`} onClick={() => actions.runNow(task.name)}>
                    Run now
                  </button>
                  {held ? (
                    <button type="button" disabled={busy} aria-label={`Resume ${task.name}`} onClick={() => actions.resume(task.name)}>
                      Resume
                    </button>
                  ) : (
                    <button type="button" disabled={busy} aria-label={`Pause ${task.name}`} onClick={() => actions.pause(task.name, PAUSE_FOR)}>
                      Pause {PAUSE_FOR}
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
