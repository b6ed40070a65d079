import type { BucketView, JobStatusName, QueueFlowView, QueueSummary } from "../../api/types.js";
import { absolute, count, relative } from "./format.js";

const STATUSES: JobStatusName[] = ["pending", "running", "succeeded", "failed", "cancelled"];

export interface QueueActions {
  retryFailed(queue: string): void;
  /** Pauses (resumes) the queue, or one group of it, in every process. */
  pause(queue: string, group?: string): void;
  resume(queue: string, group?: string): void;
}

/** What held this process's last claim back, in words; the engine's names are in the tooltip. */
const HELD: Record<string, string> = {
  paused: "waiting on paused groups",
  globalConcurrency: "at its globalConcurrency",
  groupConcurrency: "groups at their groupConcurrency",
  rateLimit: "waiting for rate tokens",
  groupRateLimit: "groups waiting for rate tokens",
};

/** Why no job of the queue starts now, or that they do. */
function flowState(flow: QueueFlowView): { text: string; tone: string } {
  if (flow.paused) return { text: "paused", tone: "warn" };
  if (flow.heldBy !== null) return { text: HELD[flow.heldBy] ?? `held by ${flow.heldBy}`, tone: "warn" };
  return { text: "running", tone: "ok" };
}

function tokens(b: BucketView, now: number): string {
  if (b.pausedUntil !== null) return `paused, resumes ${relative(b.pausedUntil, now)}`;
  const shown = Number.isInteger(b.tokens) ? String(b.tokens) : b.tokens.toFixed(1);
  return b.tokens > 0 ? `${shown} of ${b.burst} token${b.burst === 1 ? "" : "s"}` : `no token, next ${relative(b.nextTokenAt, now)}`;
}

function Flow(props: { queue: string; flow: QueueFlowView; now: number; busy: boolean; actions: QueueActions }) {
  const { queue, flow, now, busy, actions } = props;
  const s = flowState(flow);
  const paused = new Set(flow.pausedGroups);
  // The busiest groups, then the paused ones that are not among them: a paused group stays in sight.
  const groups = [...flow.groups, ...flow.pausedGroups.filter((g) => !flow.groups.some((x) => x.group === g)).map((group) => ({ group, pending: null, running: null }))];
  return (
    <td class="flow" data-flow={queue}>
      <span class={`tag ${s.tone}`} data-flow-state={s.text} title={flow.pausedAt !== null ? `paused at ${absolute(flow.pausedAt)}` : flow.heldBy !== null ? `held by ${flow.heldBy} at this process's last claim` : ""}>
        {s.text}
      </span>
      <div class="sub" data-flow-running>
        {count(flow.running)}
        {flow.globalConcurrency !== null ? ` of ${count(flow.globalConcurrency)}` : ""} running in every process
        {flow.groupConcurrency !== null ? ` · ${count(flow.groupConcurrency)} per group` : ""}
      </div>
      {flow.buckets.map((b) => (
        <div class={b.pausedUntil !== null ? "sub warn" : "sub"} key={b.bucket} data-bucket={b.bucket} title={b.pausedUntil !== null ? `paused until ${absolute(b.pausedUntil)}` : ""}>
          {b.bucket}: {tokens(b, now)}
        </div>
      ))}
      {groups.length > 0 ? (
        <ul class="items" aria-label={`Groups of ${queue}`}>
          {groups.map((g) => (
            <li key={g.group} data-group={g.group}>
              {g.group}
              {g.pending !== null ? (
                <span class="sub">
                  {" "}
                  · {count(g.pending)} pending, {count(g.running)} running
                </span>
              ) : null}
              {paused.has(g.group) ? <span class="tag warn">paused</span> : null}
              {paused.has(g.group) ? (
                <button type="button" disabled={busy} aria-label={`Resume group ${g.group} of ${queue}`} onClick={() => actions.resume(queue, g.group)}>
                  Resume
                </button>
              ) : (
                <button type="button" disabled={busy} aria-label={`Pause group ${g.group} of ${queue}`} onClick={() => actions.pause(queue, g.group)}>
                  Pause
                </button>
              )}
            </li>
          ))}
        </ul>
      ) : null}
    </td>
  );
}

export function Queues(props: { queues: QueueSummary[]; now: number; busy: boolean; actions: QueueActions }) {
  const { now, busy, actions } = props;
  if (props.queues.length === 0) return <p class="empty">No queue is declared and the store holds no job.</p>;
  return (
    <table class="grid" aria-label="Queues">
      <thead>
        <tr>
          <th>Queue</th>
          {STATUSES.map((s) => (
            <th class="num">{s[0]!.toUpperCase() + s.slice(1)}</th>
          ))}
          <th>Flow</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {props.queues.map((q) => (
          <tr key={q.name} data-queue={q.name}>
            <td>
              <strong>{q.name}</strong>
              {!q.declared ? <span class="tag">not declared here</span> : !q.hasHandler ? <span class="tag">producer</span> : null}
            </td>
            {STATUSES.map((s) => (
              <td class={s === "failed" && q.counts.failed > 0 ? "num bad" : "num"} data-status={s}>
                {count(q.counts[s])}
              </td>
            ))}
            {q.flow ? <Flow queue={q.name} flow={q.flow} now={now} busy={busy} actions={actions} /> : <td class="sub">—</td>}
            <td class="actions">
              {q.flow?.paused ? (
                <button type="button" disabled={busy} aria-label={`Resume queue ${q.name}`} onClick={() => actions.resume(q.name)}>
                  Resume
                </button>
              ) : q.flow ? (
                <button type="button" disabled={busy} aria-label={`Pause queue ${q.name}`} onClick={() => actions.pause(q.name)}>
                  Pause
                </button>
              ) : null}
              {q.declared && q.counts.failed > 0 ? (
                <button type="button" disabled={busy} onClick={() => actions.retryFailed(q.name)}>
                  Retry {count(q.counts.failed)} failed
                </button>
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
