import type { FanoutSummary } from "../../api/types.js";
import { absolute, firstLine, relative } from "./format.js";

export function Fanouts(props: { fanouts: FanoutSummary[]; now: number; busy: boolean; onReconcile: (fanout: string) => void }) {
  const { now } = props;
  if (props.fanouts.length === 0) return <p class="empty">No fan-out is declared in this process.</p>;
  return (
    <table class="grid stack" aria-label="Fan-outs">
      <thead>
        <tr>
          <th>Fan-out</th>
          <th class="num">Version</th>
          <th>Targets</th>
          <th class="num">Failures in a row</th>
          <th>Next round</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {props.fanouts.map((f) => {
          const behind = f.targets.filter((t) => t.behind || t.failures > 0);
          return (
            <tr key={f.name} data-fanout={f.name}>
              <td>
                <strong>{f.name}</strong>
                {f.lastSuccessAt !== null ? <div class="sub">last converged {relative(f.lastSuccessAt, now)}</div> : null}
              </td>
              <td class="num" data-label="Version">{f.version}</td>
              <td data-label="Targets">
                {f.converged ? <span class="tag ok">all {f.targets.length} current</span> : <span class="tag warn">{`${behind.length} of ${f.targets.length} behind`}</span>}
                {behind.length > 0 ? (
                  <ul class="items">
                    {behind.map((t) => (
                      <li key={t.id}>
                        {t.id} <span class="sub">({t.group}, has v{t.version}, {t.failures} failed)</span>
                        {t.lastError ? (
                          <div class="sub bad" title={t.lastError}>
                            {firstLine(t.lastError)}
                          </div>
                        ) : null}
                      </li>
                    ))}
                  </ul>
                ) : null}
              </td>
              <td class={f.consecutiveFailures > 0 ? "num bad" : "num"} data-label="Failures in a row">{f.consecutiveFailures}</td>
              <td data-label="Next round" title={absolute(f.nextAt)}>{f.nextAt === null ? "—" : `${f.nextReason ?? "push"} ${relative(f.nextAt, now)}`}</td>
              <td class="actions">
                <button type="button" disabled={props.busy} aria-label={`Reconcile ${f.name} now`} onClick={() => props.onReconcile(f.name)}>
                  Reconcile now
                </button>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
