import type { BucketView, QueueFlowView, QueueSummary, ThroughputSnapshot } from "../../api/types.js";
import { ConfirmButton } from "./confirm.js";
import { absolute, count, relative, span } from "./format.js";
import { browserHref, type BrowserState } from "./route.js";

export interface QueueActions {
  retryFailed(queue: string): void;
  cancelPending(queue: string): void;
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
  limiter: "waiting for its limiter's tokens",
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
    <td class="flow" data-flow={queue} data-label="Flow">
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

/** A count that links to the job browser's tab for it, for a queue declared here (the browser filters on those only). */
function Counted(props: { q: QueueSummary; state: BrowserState; text: string; title?: string }) {
  return props.q.declared ? (
    <a href={browserHref({ state: props.state, queue: props.q.name })} title={props.title}>
      {props.text}
    </a>
  ) : (
    <span title={props.title}>{props.text}</span>
  );
}

/** A split count: past the split's bound it is a lower bound. */

/** Pending jobs whose run time has come, and how long the oldest of them has waited. */
function Due(props: { q: QueueSummary; now: number }) {
  const { q, now } = props;
  const { due, oldestDueAt } = q.pending;
  return (
    <td class="num" data-status="due" data-label="Due now">
      <Counted q={q} state="due" text={count(due)} title={`${count(q.counts.pending)} pending: due now, and scheduled for later`} />
      {due > 0 && oldestDueAt !== null ? (
        <div class={now - oldestDueAt >= 60_000 ? "sub warn" : "sub"} data-oldest-due title={`due since ${absolute(oldestDueAt)}`}>
          oldest due {relative(oldestDueAt, now)}
        </div>
      ) : null}
    </td>
  );
}

/** "25%", "0.4%": whole percents but under 10. */
function percent(part: number, whole: number): string {
  const p = (part / whole) * 100;
  return `${p >= 10 || Number.isInteger(p) ? Math.round(p) : p.toFixed(1)}%`;
}

/**
 * The share of the attempts this process finished over the throughput window (10 minutes) that
 * failed, retried or for good: from the server's in-memory buckets, so it costs the store nothing.
 */
function FailureRate(props: { queue: string; throughput: ThroughputSnapshot; window: string }) {
  const { queues, failed } = props.throughput;
  const sum = (counts: number[] | undefined) => (counts ?? []).reduce((n, c) => n + c, 0);
  const finished = sum(queues[props.queue]);
  const failures = sum(failed[props.queue]);
  const title = `Attempts that failed (retried or failed for good) among those this process finished in the last ${props.window}`;
  if (finished === 0) {
    return (
      <td class="num sub" data-failure-rate data-label="Failed attempts" title={title}>
        no attempts
      </td>
    );
  }
  return (
    <td class={failures > 0 ? "num bad" : "num"} data-failure-rate data-label="Failed attempts" title={title}>
      {percent(failures, finished)}
      <div class="sub">
        {count(failures)} of {count(finished)} attempts failed
      </div>
    </td>
  );
}

export function Queues(props: { queues: QueueSummary[]; throughput: ThroughputSnapshot; now: number; busy: boolean; actions: QueueActions }) {
  const { now, busy, actions } = props;
  if (props.queues.length === 0) return <p class="empty">No queue is declared and the store holds no job.</p>;
  // The snapshot's whole window, from its first bucket to the end of the current one (taken at `now`).
  const { bucketMs, start } = props.throughput;
  const window = span((Math.floor(now / bucketMs) + 1) * bucketMs - start);
  return (
    <table class="grid stack" aria-label="Queues">
      <thead>
        <tr>
          <th>Queue</th>
          <th class="num">Due now</th>
          <th class="num">Scheduled</th>
          <th class="num">Running</th>
          <th class="num">Failed</th>
          <th class="num" title={`failed attempts among those this process finished in the last ${window}`}>
            Failed attempts ({window})
          </th>
          <th class="num">Succeeded</th>
          <th class="num">Cancelled</th>
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
            <Due q={q} now={now} />
            <td class="num" data-status="scheduled" data-label="Scheduled">
              <Counted q={q} state="scheduled" text={count(q.pending.scheduled)} title="pending jobs whose run time is ahead: delays, retries' backoffs, flow parents waiting" />
            </td>
            <td class="num" data-status="running" data-label="Running">
              <Counted q={q} state="running" text={count(q.counts.running)} />
              {q.flow && q.flow.held > 0 ? (
                <div class="sub" data-held title="claimed by a worker, to start as its slots free (prefetched, or handed over)">
                  {count(q.flow.held)} held to start
                </div>
              ) : null}
            </td>
            <td class={q.counts.failed > 0 ? "num bad" : "num"} data-status="failed" data-label="Failed">
              <Counted q={q} state="failed" text={count(q.counts.failed)} />
            </td>
            <FailureRate queue={q.name} throughput={props.throughput} window={window} />
            <td class="num" data-status="succeeded" data-label="Succeeded">
              <Counted q={q} state="succeeded" text={count(q.counts.succeeded)} />
            </td>
            <td class="num" data-status="cancelled" data-label="Cancelled">
              <Counted q={q} state="cancelled" text={count(q.counts.cancelled)} />
            </td>
            {q.flow ? <Flow queue={q.name} flow={q.flow} now={now} busy={busy} actions={actions} /> : <td class="sub" data-label="Flow">—</td>}
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
                <ConfirmButton
                  label={`Retry ${count(q.counts.failed)} failed`}
                  question={`Retry all ${count(q.counts.failed)} failed jobs of ${q.name}?`}
                  detail="Each runs again with a fresh set of attempts; its last error is kept."
                  confirm={`Retry ${count(q.counts.failed)} jobs`}
                  disabled={busy}
                  onConfirm={() => actions.retryFailed(q.name)}
                />
              ) : null}
              {q.declared && q.counts.pending > 0 ? (
                <ConfirmButton
                  label={`Cancel ${count(q.counts.pending)} pending`}
                  question={`Cancel all ${count(q.counts.pending)} pending jobs of ${q.name}?`}
                  detail="Due and scheduled jobs alike will not run; running jobs go on. Retry brings a cancelled job back."
                  confirm={`Cancel ${count(q.counts.pending)} jobs`}
                  disabled={busy}
                  onConfirm={() => actions.cancelPending(q.name)}
                />
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
