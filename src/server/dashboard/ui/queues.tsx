import type { JobStatusName, QueueSummary } from "../../api/types.js";
import { count } from "./format.js";

const STATUSES: JobStatusName[] = ["pending", "running", "succeeded", "failed", "cancelled"];

export function Queues(props: { queues: QueueSummary[]; busy: boolean; onRetryFailed: (queue: string) => void }) {
  if (props.queues.length === 0) return <p class="empty">No queue is declared and the store holds no job.</p>;
  return (
    <table class="grid" aria-label="Queues">
      <thead>
        <tr>
          <th>Queue</th>
          {STATUSES.map((s) => (
            <th class="num">{s[0]!.toUpperCase() + s.slice(1)}</th>
          ))}
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
            <td class="actions">
              {q.declared && q.counts.failed > 0 ? (
                <button type="button" disabled={props.busy} onClick={() => props.onRetryFailed(q.name)}>
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
