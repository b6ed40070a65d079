import { useEffect, useState } from "preact/hooks";
import type { JobListItem, JobPage, JobStatusName, QueueSummary } from "../../api/types.js";
import type { AdminApi } from "./api.js";
import { ConfirmButton } from "./confirm.js";
import { absolute, count, firstLine } from "./format.js";
import type { JobActions } from "./job-actions.js";
import { JobState, isWaiting, jobTime } from "./job-state.js";
import { useLive } from "./live.js";
import { BROWSER_STATES, browserHref, jobHref, type BrowserFilter, type BrowserState } from "./route.js";

/** Jobs a page shows: a screenful, and little to poll. */
export const PAGE_SIZE = 25;

const TAB: Record<BrowserState, string> = {
  all: "All",
  due: "Due now",
  scheduled: "Scheduled",
  running: "Running",
  succeeded: "Succeeded",
  failed: "Failed",
  cancelled: "Cancelled",
};

/** The API's filter for a tab (pending jobs split by whether they are due), from `cursor` on. */
function query(filter: BrowserFilter, cursor: string | undefined): string {
  const q = new URLSearchParams();
  if (filter.queue) q.set("queue", filter.queue);
  if (filter.state === "due" || filter.state === "scheduled") {
    q.set("status", "pending");
    q.set("due", String(filter.state === "due"));
  } else if (filter.state !== "all") q.set("status", filter.state);
  if (filter.key) q.set("key", filter.key);
  if (filter.id) q.set("id", filter.id);
  if (filter.parent) q.set("parent", filter.parent);
  // Each order pages with its own parameter: ids below the cursor newest first, above it oldest first.
  if (filter.order === "oldest") q.set("order", "oldest");
  if (cursor) q.set(filter.order === "oldest" ? "after" : "before", cursor);
  q.set("limit", String(PAGE_SIZE));
  return q.toString();
}

/**
 * A tab's count, from the overview's counts (due and scheduled are not counted apart). A parent's
 * children are not counted by state anywhere: their tabs go without, rather than show the queue's.
 */
function tabCount(state: BrowserState, queues: QueueSummary[], filter: BrowserFilter): number | null {
  const { queue } = filter;
  if (state === "due" || state === "scheduled" || filter.parent) return null;
  const shown = queues.filter((q) => queue === undefined || q.name === queue);
  const statuses: JobStatusName[] = state === "all" ? ["pending", "running", "succeeded", "failed", "cancelled"] : [state];
  return shown.reduce((n, q) => n + statuses.reduce((m, s) => m + q.counts[s], 0), 0);
}

/** What the pager's buttons say in each order: the first page, back, and on, by the jobs they lead to. */
const PAGER = {
  newest: { first: "Newest", back: "Newer", on: "Older" },
  oldest: { first: "Oldest", back: "Older", on: "Newer" },
} as const;

/**
 * Jobs by queue and state, searched by id or key, newest or oldest first, in keyset pages: each
 * page asks for the jobs past the last one shown, so paging stays as fast at the millionth job as
 * at the first, and a page does not shift when new jobs arrive.
 */
export function JobBrowser(props: { api: AdminApi; filter: BrowserFilter; queues: QueueSummary[]; refreshMs: number; busy: boolean; actions: JobActions }) {
  const { api, filter, queues, busy, actions } = props;
  // The order is in the key: another order starts again at its first page.
  const filterKey = browserHref(filter);
  const pager = PAGER[filter.order ?? "newest"];
  // The cursor of each page after the first, so going back retraces the way forward came.
  const [trail, setTrail] = useState<{ filterKey: string; cursors: string[] }>({ filterKey, cursors: [] });
  const cursors = trail.filterKey === filterKey ? trail.cursors : [];
  const cursor = cursors.at(-1);
  const live = useLive(`${filterKey} ${cursor ?? ""}`, () => api.call<JobPage>("GET", `api/jobs?${query(filter, cursor)}`), props.refreshMs);
  const page = live.data;
  const declared = queues.filter((q) => q.declared);
  const selected = queues.find((q) => q.name === filter.queue);

  return (
    <div class="browser">
      <nav class="tabs" aria-label="Job states">
        {BROWSER_STATES.map((state) => {
          const n = tabCount(state, queues, filter);
          return (
            <a key={state} href={browserHref({ ...filter, state })} aria-current={state === filter.state ? "page" : undefined} data-state={state}>
              {TAB[state]}
              {n !== null ? <span class="count">{count(n)}</span> : null}
            </a>
          );
        })}
      </nav>
      {filter.parent ? (
        <p class="sub" data-parent={filter.parent}>
          Children of <a href={jobHref(filter.parent)}>#{filter.parent}</a>
        </p>
      ) : null}
      <Filters filter={filter} queues={declared} />
      {/* Retry all acts on the whole queue, not on the children shown: a parent's list goes without it. */}
      {filter.parent ? null : filter.state === "failed" && selected?.declared && selected.counts.failed > 0 ? (
        <div class="toolbar bulk">
          <ConfirmButton
            label={`Retry all ${count(selected.counts.failed)} failed`}
            question={`Retry all ${count(selected.counts.failed)} failed jobs of ${selected.name}?`}
            detail="Each runs again with a fresh set of attempts; its last error is kept."
            confirm={`Retry ${count(selected.counts.failed)} jobs`}
            disabled={busy}
            onConfirm={() => void actions.retryFailed(selected.name).then(live.reload)}
          />
        </div>
      ) : filter.state === "failed" && !filter.queue ? (
        <p class="sub">Choose a queue to retry all of its failed jobs at once.</p>
      ) : null}
      {live.error ? (
        <p class="problem bad" role="status">
          Cannot list jobs: {live.error instanceof Error ? live.error.message : String(live.error)}
        </p>
      ) : null}
      {page === null ? (
        live.error ? null : <p class="loading">Loading…</p>
      ) : page.jobs.length === 0 ? (
        <p class="empty">{cursors.length > 0 ? `No ${pager.on.toLowerCase()} job.` : "No job matches."}</p>
      ) : (
        <JobTable jobs={page.jobs} now={page.now} />
      )}
      <div class="pager">
        <button type="button" disabled={cursors.length === 0} onClick={() => setTrail({ filterKey, cursors: [] })}>
          {pager.first}
        </button>
        <button type="button" disabled={cursors.length === 0} onClick={() => setTrail({ filterKey, cursors: cursors.slice(0, -1) })}>
          {pager.back}
        </button>
        <span class="sub" data-page={cursors.length + 1}>
          page {cursors.length + 1}
        </span>
        <button type="button" disabled={!page?.next} onClick={() => page?.next && setTrail({ filterKey, cursors: [...cursors, page.next] })}>
          {pager.on}
        </button>
      </div>
    </div>
  );
}

/** Queue, order, key and id: the queue and the order apply at once, the texts on Search (or Enter). */
function Filters(props: { filter: BrowserFilter; queues: QueueSummary[] }) {
  const { filter } = props;
  const [key, setKey] = useState(filter.key ?? "");
  const [id, setId] = useState(filter.id ?? "");
  useEffect(() => {
    setKey(filter.key ?? "");
    setId(filter.id ?? "");
  }, [filter.key, filter.id]);
  const go = (next: BrowserFilter) => (location.hash = browserHref(next));
  return (
    <form
      class="filters"
      role="search"
      aria-label="Filter jobs"
      onSubmit={(e) => {
        e.preventDefault();
        go({ ...filter, key: key.trim() || undefined, id: id.trim() || undefined });
      }}
    >
      <label>
        Queue
        <select value={filter.queue ?? ""} onChange={(e) => go({ ...filter, queue: e.currentTarget.value || undefined })}>
          <option value="">All queues</option>
          {props.queues.map((q) => (
            <option key={q.name} value={q.name}>
              {q.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Order
        <select value={filter.order ?? "newest"} onChange={(e) => go({ ...filter, order: e.currentTarget.value === "oldest" ? "oldest" : undefined })}>
          <option value="newest">Newest first</option>
          <option value="oldest">Oldest first</option>
        </select>
      </label>
      <label>
        Key
        <input type="search" name="key" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
      </label>
      <label>
        Job id
        <input type="search" name="id" inputMode="numeric" value={id} onInput={(e) => setId(e.currentTarget.value)} />
      </label>
      <button type="submit">Search</button>
      {filter.key || filter.id || filter.queue || filter.parent ? (
        <button type="button" onClick={() => go({ state: filter.state, order: filter.order })}>
          Clear
        </button>
      ) : null}
    </form>
  );
}

function JobTable(props: { jobs: JobListItem[]; now: number }) {
  const { now } = props;
  return (
    <table class="grid stack" aria-label="Jobs">
      <thead>
        <tr>
          <th>Job</th>
          <th>Queue</th>
          <th>State</th>
          <th class="num">Attempts</th>
          <th>When</th>
          <th>Error or payload</th>
        </tr>
      </thead>
      <tbody>
        {props.jobs.map((job) => {
          const time = jobTime(job, now);
          return (
            <tr key={job.id} data-job={job.id}>
              <td>
                <a href={jobHref(job.id)} aria-label={`Job ${job.id}`}>
                  #{job.id}
                </a>
                {job.key ? <div class="sub key">{job.key}</div> : null}
              </td>
              <td data-label="Queue">
                {job.queue}
                {job.group ? <div class="sub">group {job.group}</div> : null}
              </td>
              <td data-label="State">
                <JobState job={job} now={now} />
              </td>
              <td class="num" data-label="Attempts">
                {job.attempts}/{job.maxAttempts}
              </td>
              <td title={absolute(time.at)}>
                {/* A parent waiting for its children links to them: they are what it waits for. */}
                {isWaiting(job) ? <a href={browserHref({ state: "all", parent: job.id, order: "oldest" })}>{time.text}</a> : time.text}
              </td>
              <td class="preview">{job.lastError && job.status !== "succeeded" ? <span class="bad">{firstLine(job.lastError)}</span> : <code>{job.payloadPreview}</code>}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
