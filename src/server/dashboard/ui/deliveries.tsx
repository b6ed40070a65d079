import { ConfirmButton } from "./confirm.js";
import type { DeliveryItemView, DeliverySummary } from "../../api/types.js";
import { absolute, count, firstLine, relative } from "./format.js";

function Items(props: { title: string; items: DeliveryItemView[]; now: number; when: (item: DeliveryItemView) => number | undefined }) {
  if (props.items.length === 0) return null;
  return (
    <details>
      <summary class="sub">{props.title}</summary>
      <ul class="items">
        {props.items.map((item) => (
          <li key={item.id}>
            <span title={absolute(props.when(item) ?? null)}>{relative(props.when(item) ?? null, props.now)}</span> {item.key ?? item.id} · attempt {item.attempt}
            <div class="sub bad" title={item.lastError ?? ""}>
              {firstLine(item.lastError)}
            </div>
          </li>
        ))}
      </ul>
    </details>
  );
}

/**
 * The next send. `nextAt` is the soonest due time of a waiting item, so while items wait for a pass
 * (a backlog beyond the budget, workers not started) it is the oldest one's due time, in the past:
 * that reads "due now", with how many wait and since when, never "9s ago".
 */
function NextSend(props: { delivery: DeliverySummary; now: number }) {
  const { delivery: d, now } = props;
  const waiting = d.pending + d.retrying;
  if (d.nextAt === null || d.nextAt > now) return <td data-next-send data-label="Next send" title={absolute(d.nextAt)}>{relative(d.nextAt, now)}</td>;
  return (
    <td data-next-send data-label="Next send" title={`the oldest item has been due since ${absolute(d.nextAt)}`}>
      due now ({count(waiting)} waiting)
      {now - d.nextAt >= 1_000 ? <div class="sub">oldest due {relative(d.nextAt, now)}</div> : null}
    </td>
  );
}

export function Deliveries(props: { deliveries: DeliverySummary[]; now: number; busy: boolean; onReplay: (delivery: string) => void; onPurge: (delivery: string) => void }) {
  const { now } = props;
  if (props.deliveries.length === 0) return <p class="empty">No delivery is declared in this process.</p>;
  return (
    <table class="grid stack" aria-label="Deliveries">
      <thead>
        <tr>
          <th>Delivery</th>
          <th class="num">Pending</th>
          <th class="num">Retrying</th>
          <th class="num">Dropped</th>
          <th>Next send</th>
          <th>Last pass</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {props.deliveries.map((d) => (
          <tr key={d.name} data-delivery={d.name}>
            <td>
              <strong>{d.name}</strong>
              <Items title={`next retries (${d.nextRetries.length} shown)`} items={d.nextRetries} now={now} when={(i) => i.runAt} />
              <Items title={`latest dropped (${d.latestDropped.length} shown)`} items={d.latestDropped} now={now} when={(i) => i.droppedAt} />
            </td>
            <td class="num" data-state="pending" data-label="Pending">
              {count(d.pending)}
            </td>
            <td class={d.retrying > 0 ? "num warn" : "num"} data-state="retrying" data-label="Retrying">
              {count(d.retrying)}
            </td>
            <td class={d.dropped > 0 ? "num bad" : "num"} data-state="dropped" data-label="Dropped">
              {count(d.dropped)}
            </td>
            <NextSend delivery={d} now={now} />
            <td data-label="Last pass">
              {d.lastPass ? (
                <>
                  {relative(d.lastPass.at, now)}: sent {count(d.lastPass.sent)} of {count(d.budget)}
                  {d.lastPass.carried ? <span class="tag warn">budget used up</span> : null}
                  <div class="sub">
                    {count(d.lastPass.delivered)} delivered, {count(d.lastPass.failed)} failed, {count(d.lastPass.dropped)} dropped
                  </div>
                </>
              ) : (
                <span class="sub">none in this process</span>
              )}
            </td>
            <td class="actions">
              {d.dropped > 0 ? (
                <>
                  <button type="button" disabled={props.busy} onClick={() => props.onReplay(d.name)}>
                    Replay {count(d.dropped)} dropped
                  </button>
                  <ConfirmButton
                    label={`Purge ${count(d.dropped)} dropped`}
                    question={`Delete ${d.dropped === 1 ? "the dropped item" : `the ${count(d.dropped)} dropped items`} of ${d.name}?`}
                    detail="They leave the dead-letter table for good and can no longer be replayed."
                    confirm={`Delete ${count(d.dropped)} item${d.dropped === 1 ? "" : "s"}`}
                    disabled={props.busy}
                    onConfirm={() => props.onPurge(d.name)}
                  />
                </>
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
