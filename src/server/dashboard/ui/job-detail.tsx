import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { JobAnswer, JobAttemptView, JobDetail, JobListItem, JobPage } from "../../api/types.js";
import { ApiFailure, type AdminApi } from "./api.js";
import { ConfirmButton } from "./confirm.js";
import { absolute, count, firstLine, relative, span } from "./format.js";
import type { JobActions } from "./job-actions.js";
import { JobState, isScheduled, isWaiting } from "./job-state.js";
import { useLive } from "./live.js";
import { browserHref, jobHref } from "./route.js";

const FINISHED: ReadonlySet<JobDetail["status"]> = new Set(["succeeded", "failed", "cancelled"]);

/** Children a parent's page lists, oldest (first written) first; the job browser pages through them all. */
export const CHILDREN_SHOWN = 20;

/** Characters of a child's result a parent's page shows (as much as a list shows of a payload). */
const RESULT_PREVIEW_CHARS = 200;

const OUTCOME_TONE: Record<JobAttemptView["outcome"], string> = { running: "ok", succeeded: "ok", failed: "bad", snoozed: "", lease_expired: "warn", cancelled: "warn" };

/** JSON, indented; shown as text, never as markup. */
function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? "null";
}

/**
 * One job, refreshed while it is open (a running job's progress and attempts move): its facts,
 * payload, result, progress, every attempt with its error, and what can be done with it now.
 */
export function JobDetailView(props: { api: AdminApi; id: string; refreshMs: number; busy: boolean; actions: JobActions }) {
  const { api, id, busy, actions } = props;
  // While a delete is under way the page shows what it has and asks no more: an answer after the
  // delete would be a 404, for a job the dashboard is about to leave.
  const deleting = useRef<JobAnswer | null>(null);
  const live = useLive(id, () => (deleting.current ? Promise.resolve(deleting.current) : api.call<JobAnswer>("GET", `api/jobs/${id}`)), props.refreshMs);
  const back = (
    <p class="back">
      <a href={browserHref({ state: "all", queue: live.data?.job.queue })}>← Jobs</a>
    </p>
  );
  if (!live.data) {
    if (!live.error) return <p class="loading">Loading…</p>;
    const text = live.error instanceof ApiFailure && live.error.status === 404 ? live.error.message : `Cannot load job ${id}: ${live.error instanceof Error ? live.error.message : String(live.error)}`;
    return (
      <div class="detail">
        {back}
        <p class="problem bad" role="status">
          {text}
        </p>
      </div>
    );
  }
  const { job, now } = live.data;
  const after = (action: Promise<void>) => void action.then(live.reload);
  const remove = async () => {
    deleting.current = live.data;
    if (!(await actions.delete(job.id, job.queue))) deleting.current = null;
  };
  return (
    <div class="detail" data-job-detail={job.id}>
      {back}
      <h2>
        Job #{job.id} <JobState job={job} now={now} />
      </h2>
      <div class="toolbar start">
        {job.status === "failed" || job.status === "cancelled" ? (
          <button type="button" disabled={busy} aria-label={`Retry job ${job.id}`} onClick={() => after(actions.retry(job.id))}>
            Retry
          </button>
        ) : null}
        {isScheduled(job, now) ? (
          <button type="button" disabled={busy} aria-label={`Run job ${job.id} now`} onClick={() => after(actions.promote(job.id))}>
            Run now
          </button>
        ) : null}
        {job.status === "pending" || job.status === "running" ? (
          <button type="button" disabled={busy} aria-label={`Cancel job ${job.id}`} onClick={() => after(actions.cancel(job.id))}>
            Cancel
          </button>
        ) : null}
        {FINISHED.has(job.status) ? (
          <ConfirmButton
            label="Delete"
            ariaLabel={`Delete job ${job.id}`}
            question={`Delete job ${job.id}?`}
            detail="Its payload, result, errors and attempts are gone for good: this cannot be undone."
            confirm="Delete the job"
            disabled={busy}
            onConfirm={() => void remove()}
          />
        ) : null}
      </div>
      {live.error ? (
        <p class="problem bad" role="status">
          Cannot refresh: {live.error instanceof Error ? live.error.message : String(live.error)}
        </p>
      ) : null}
      <Facts job={job} now={now} />
      {job.lastError ? (
        <section aria-label="Last error">
          <h3>{job.status === "succeeded" ? "Last error, of an earlier attempt" : "Last error"}</h3>
          <pre class="error">{job.lastError}</pre>
        </section>
      ) : null}
      {job.children !== null ? <Children api={api} parentId={job.id} total={job.children.total} refreshMs={props.refreshMs} /> : null}
      <Payload api={api} job={job} />
      {job.result !== null || job.status === "succeeded" ? (
        <section aria-label="Result">
          <h3>Result</h3>
          <pre class="json">{pretty(job.result)}</pre>
        </section>
      ) : null}
      {job.progress !== null ? (
        <section aria-label="Progress">
          <h3>Progress</h3>
          <pre class="json">{pretty(job.progress)}</pre>
        </section>
      ) : null}
      <section aria-label="Attempts">
        <h3>Attempts</h3>
        <Attempts history={job.history} now={now} />
      </section>
    </div>
  );
}

function Facts(props: { job: JobDetail; now: number }) {
  const { job, now } = props;
  const time = (at: number | null) => (at === null ? "—" : <span title={absolute(at)}>{relative(at, now)}</span>);
  const rows: [string, ComponentChildren][] = [
    ["Queue", <a href={browserHref({ state: "all", queue: job.queue })}>{job.queue}</a>],
    ["Key", job.key ?? "—"],
    ["Group", job.group ?? "—"],
    ["Priority", String(job.priority)],
    ["Attempts", `${job.attempts} of ${job.maxAttempts}${job.snoozes ? `, snoozed ${job.snoozes}×` : ""}`],
    ["Created", time(job.createdAt)],
    isWaiting(job) ? ["Runs", "once its children have ended"] : [isScheduled(job, now) ? "Runs" : "Due", time(job.runAt)],
    ["Started", time(job.startedAt)],
    ["Finished", time(job.finishedAt)],
  ];
  if (job.lease !== null) rows.push(["Lease", <Lease lease={job.lease} now={now} />]);
  if (job.parentId !== null) rows.push(["Parent", <a href={jobHref(job.parentId)}>#{job.parentId}</a>]);
  if (job.children !== null) rows.push(["Children", `${count(job.children.total)}: ${count(job.children.pending)} not ended, ${count(job.children.failed)} failed`]);
  return (
    <dl class="facts">
      {rows.map(([term, value]) => (
        <div key={term} data-fact={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/**
 * A flow parent's (or a batch completion job's) first children, in the order they were written,
 * refreshed as they run, with a link to the job browser listing them all.
 */
function Children(props: { api: AdminApi; parentId: string; total: number; refreshMs: number }) {
  const { api, parentId, total } = props;
  const live = useLive(`children ${parentId}`, () => api.call<JobPage>("GET", `api/jobs?parent=${parentId}&order=oldest&limit=${CHILDREN_SHOWN}`), props.refreshMs);
  const page = live.data;
  const results = useResultPreviews(api, page?.jobs ?? []);
  const all = browserHref({ state: "all", parent: parentId, order: "oldest" });
  return (
    <section aria-label="Children">
      <h3>
        Children <span class="sub">{total > CHILDREN_SHOWN ? `${CHILDREN_SHOWN} of ${count(total)} shown` : count(total)}</span>
      </h3>
      {live.error ? (
        <p class="problem bad" role="status">
          Cannot list the children: {live.error instanceof Error ? live.error.message : String(live.error)}
        </p>
      ) : null}
      {page === null ? (
        live.error ? null : <p class="loading">Loading…</p>
      ) : page.jobs.length === 0 ? (
        <p class="empty">No child is left: deleted, or pruned by retention.</p>
      ) : (
        <table class="grid stack" aria-label="Children">
          <thead>
            <tr>
              <th>Job</th>
              <th>Queue</th>
              <th>State</th>
              <th class="num">Attempts</th>
              <th>Result or error</th>
            </tr>
          </thead>
          <tbody>
            {page.jobs.map((child) => (
              <tr key={child.id} data-child={child.id}>
                <td>
                  <a href={jobHref(child.id)} aria-label={`Job ${child.id}`}>
                    #{child.id}
                  </a>
                </td>
                <td data-label="Queue">{child.queue}</td>
                <td data-label="State">
                  <JobState job={child} now={page.now} />
                </td>
                <td class="num" data-label="Attempts">
                  {child.attempts}/{child.maxAttempts}
                </td>
                <td class="preview" data-label="Result">
                  {child.status === "succeeded" ? (
                    results.has(child.id) ? <code>{results.get(child.id)}</code> : null
                  ) : child.lastError ? (
                    <span class="bad">{firstLine(child.lastError)}</span>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p class="more">
        <a href={all}>{`All ${count(total)} ${total === 1 ? "child" : "children"}`}</a> in the job browser
      </p>
    </section>
  );
}

/**
 * Previews of the results of the succeeded children shown. Lists carry no results (a page of jobs
 * stays small at each refresh), so each is read once from the child's own answer: a succeeded job's
 * result no longer changes. One that could not be read is asked again at the next refresh.
 */
function useResultPreviews(api: AdminApi, children: JobListItem[]): ReadonlyMap<string, string> {
  const [previews, setPreviews] = useState<ReadonlyMap<string, string>>(() => new Map());
  const asked = useRef(new Set<string>());
  // After every render, so after every refresh of the list: a failure sets no state, so it is not
  // asked again in a loop, only at the next refresh.
  useEffect(() => {
    for (const { id, status } of children) {
      if (status !== "succeeded" || asked.current.has(id)) continue;
      asked.current.add(id);
      api.call<JobAnswer>("GET", `api/jobs/${id}`).then(
        ({ job }) => {
          if (job.result !== null) setPreviews((shown) => new Map(shown).set(id, resultPreview(job.result)));
        },
        () => asked.current.delete(id),
      );
    }
  });
  return previews;
}

/** A result's JSON text, cut to a line's worth; the cut never splits a surrogate pair. */
function resultPreview(result: unknown): string {
  const json = JSON.stringify(result) ?? "null";
  if (json.length <= RESULT_PREVIEW_CHARS) return json;
  const last = json.charCodeAt(RESULT_PREVIEW_CHARS - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? RESULT_PREVIEW_CHARS - 1 : RESULT_PREVIEW_CHARS;
  return `${json.slice(0, end)}…`;
}

/**
 * Who runs the job and for how long its lease lasts unless renewed; a lapsed one (the worker died,
 * or froze) is handed back by the next rescue, and the job runs again.
 */
function Lease(props: { lease: NonNullable<JobDetail["lease"]>; now: number }) {
  const { lease, now } = props;
  return (
    <span data-lease={lease.workerId}>
      held by <code>{lease.workerId}</code> until {absolute(lease.until)}{" "}
      <span class={lease.until < now ? "warn" : "sub"}>({lease.until < now ? `lapsed ${relative(lease.until, now)}` : relative(lease.until, now)})</span>
    </span>
  );
}

/** The payload, indented; a large one comes cut (by the API), with a button that loads the whole. */
function Payload(props: { api: AdminApi; job: JobDetail }) {
  const { api, job } = props;
  const [whole, setWhole] = useState<{ id: string; payload: unknown } | null>(null);
  const [loading, setLoading] = useState<{ id: string; error: string | null } | null>(null);
  const loaded = whole?.id === job.id ? whole : null;
  const pending = loading?.id === job.id ? loading : null;
  const load = async () => {
    setLoading({ id: job.id, error: null });
    try {
      setWhole({ id: job.id, payload: await api.call<unknown>("GET", `api/jobs/${job.id}/payload`) });
      setLoading(null);
    } catch (error) {
      setLoading({ id: job.id, error: error instanceof Error ? error.message : String(error) });
    }
  };
  return (
    <section aria-label="Payload">
      <h3>
        Payload <span class="sub">{count(job.payloadChars)} characters of JSON</span>
      </h3>
      {loaded ? (
        <pre class="json">{pretty(loaded.payload)}</pre>
      ) : job.payloadTruncated ? (
        <>
          <pre class="json cut">{job.payloadPreview}</pre>
          <p class="sub">
            The first {count(job.payloadPreview.length)} characters of {count(job.payloadChars)}.{" "}
            <button type="button" disabled={pending !== null && pending.error === null} onClick={() => void load()}>
              Load the whole payload
            </button>
          </p>
          {pending?.error ? <p class="problem bad">Cannot load the payload: {pending.error}</p> : null}
        </>
      ) : (
        <pre class="json">{pretty(job.payload)}</pre>
      )}
    </section>
  );
}

function Attempts(props: { history: JobAttemptView[]; now: number }) {
  const { now } = props;
  if (props.history.length === 0) return <p class="empty">Not started yet.</p>;
  // Newest first: the attempt that matters is usually the last one.
  const rows = [...props.history].reverse();
  return (
    <table class="grid stack" aria-label="Attempts">
      <thead>
        <tr>
          <th class="num">#</th>
          <th>Outcome</th>
          <th>Started</th>
          <th>Took</th>
          <th>Error</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((a, i) => (
          <tr key={`${a.attempt}-${a.startedAt}-${i}`} data-attempt={a.attempt} data-outcome={a.outcome}>
            <td class="num" data-label="Attempt">
              {a.attempt}
            </td>
            <td data-label="Outcome">
              <span class={`tag ${OUTCOME_TONE[a.outcome]}`}>{a.outcome.replace("_", " ")}</span>
            </td>
            <td data-label="Started" title={absolute(a.startedAt)}>
              {relative(a.startedAt, now)}
            </td>
            <td data-label="Took" title={a.finishedAt === null ? "" : `finished ${absolute(a.finishedAt)}`}>
              {a.finishedAt === null ? `${span(now - a.startedAt)} so far` : span(a.finishedAt - a.startedAt)}
            </td>
            <td class="error">
              {a.error ? (
                <details>
                  <summary>{a.error.split("\n", 1)[0]}</summary>
                  <pre>{a.error}</pre>
                </details>
              ) : (
                "—"
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
