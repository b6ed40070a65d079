import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { Overview, QueueControlResult, TaskRunResult } from "../../api/types.js";
import { ApiFailure, hasToken, saveToken, type AdminApi } from "./api.js";
import { Deliveries } from "./deliveries.js";
import { FailedJobs } from "./failed-jobs.js";
import { Fanouts } from "./fanouts.js";
import { jobActions, type Act } from "./job-actions.js";
import { JobBrowser } from "./job-browser.js";
import { JobDetailView } from "./job-detail.js";
import { Queues, type QueueActions } from "./queues.js";
import { Tasks, type TaskActions } from "./tasks.js";
import { ThroughputChart } from "./throughput-chart.js";
import { parseRoute, useRoute, viewOf } from "./route.js";

/** Why the token form shows: no token yet, or the one kept was refused (a 401 with a token sent). */
type TokenNeed = "missing" | "refused";

/** An action's outcome, shown in one view (`viewOf`): the one it was given in, or the one it led to. */
type Notice = { text: string; tone: "ok" | "bad"; view: string };

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
const path = encodeURIComponent;

/**
 * Polls `api/overview` (one request feeds every panel) every `refreshMs` while the tab is visible,
 * and at once after an action. Polling rather than server-sent events: EventSource cannot send the
 * Authorization header, SQLite has no change feed to push from, and a poll is one stateless request
 * that any proxy, and later a Durable Object, serves alike.
 */
export function App(props: { api: AdminApi; refreshMs: number }) {
  const { api } = props;
  const [overview, setOverview] = useState<Overview | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [needsToken, setNeedsToken] = useState<TokenNeed | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [busy, setBusy] = useState(false);
  const loading = useRef<{ again: boolean } | null>(null);
  const route = useRoute();
  // A notice is about its view: another view starts without it (unless the notice was meant for it).
  const view = viewOf(route);
  const viewRef = useRef(view);
  viewRef.current = view;
  useEffect(() => setNotice((n) => (n?.view === view ? n : null)), [view]);
  const shownNotice = notice?.view === view ? notice : null;

  const refresh = useCallback(async (): Promise<void> => {
    // One request at a time; a refresh asked for meanwhile runs once the current one is done.
    if (loading.current) {
      loading.current.again = true;
      return;
    }
    const current = (loading.current = { again: false });
    try {
      setOverview(await api.call<Overview>("GET", "api/overview"));
      setProblem(null);
      setNeedsToken(null);
    } catch (error) {
      if (error instanceof ApiFailure && error.status === 401) setNeedsToken(hasToken() ? "refused" : "missing");
      else setProblem(`Cannot refresh: ${message(error)}`);
    } finally {
      loading.current = null;
      if (current.again) void refresh();
    }
  }, [api]);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const loop = async () => {
      if (document.visibilityState === "visible") await refresh();
      timer = setTimeout(loop, props.refreshMs);
    };
    const onVisible = () => {
      if (document.visibilityState === "visible") void refresh();
    };
    void loop();
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [props.refreshMs, refresh]);

  useEffect(() => {
    if (overview && performance.getEntriesByName("tickwork:first-data").length === 0) performance.mark("tickwork:first-data");
  }, [overview]);

  const act: Act = async (failure, action) => {
    setBusy(true);
    try {
      const outcome = await action();
      if (typeof outcome === "string") setNotice({ text: outcome, tone: "ok", view: viewRef.current });
      else {
        setNotice({ text: outcome.text, tone: "ok", view: viewOf(parseRoute(outcome.goTo)) });
        location.hash = outcome.goTo;
      }
    } catch (error) {
      if (error instanceof ApiFailure && error.status === 401) setNeedsToken(hasToken() ? "refused" : "missing");
      setNotice({ text: `${failure}: ${message(error)}`, tone: "bad", view: viewRef.current });
    } finally {
      setBusy(false);
      await refresh();
    }
  };

  const jobs = jobActions(api, act);
  /** Pauses or resumes a queue, or a group of it; the answer says whether it already was so. */
  const control = (action: "pause" | "resume", queue: string, group?: string) => {
    const what = group === undefined ? queue : `group ${group} of ${queue}`;
    const done = action === "pause" ? "paused" : "resumed";
    return act(`${action === "pause" ? "Pausing" : "Resuming"} ${what} failed`, async () => {
      const { changed } = await api.call<QueueControlResult>("POST", `api/queues/${path(queue)}/${action}`, group === undefined ? undefined : { group });
      const subject = what[0]!.toUpperCase() + what.slice(1);
      return changed ? `${subject} ${done} in every process.` : `${subject} was already ${done}.`;
    });
  };
  const queueActions: QueueActions = {
    retryFailed: (queue) => void jobs.retryFailed(queue),
    cancelPending: (queue) => void jobs.cancelPending(queue),
    pause: (queue, group) => control("pause", queue, group),
    resume: (queue, group) => control("resume", queue, group),
  };
  const replayDropped = (delivery: string) =>
    act(`Replaying the dropped items of ${delivery} failed`, async () => {
      const { replayed } = await api.call<{ replayed: string[] }>("POST", `api/deliveries/${path(delivery)}/replay`, { since: 0 });
      return `${replayed.length} dropped item${replayed.length === 1 ? "" : "s"} of ${delivery} sent again.`;
    });
  const purgeDropped = (delivery: string) =>
    act(`Purging the dropped items of ${delivery} failed`, async () => {
      // Everything dropped before now on the engine's clock (a duration of 0 ago), not the browser's.
      const { purged } = await api.call<{ purged: string[] }>("POST", `api/deliveries/${path(delivery)}/purge`, { before: "0s", limit: 10_000 });
      return `${purged.length} dropped item${purged.length === 1 ? "" : "s"} of ${delivery} deleted.`;
    });
  const reconcile = (fanout: string) =>
    act(`Reconciling ${fanout} failed`, async () => {
      await api.call("POST", `api/fanouts/${path(fanout)}/reconcile`);
      return `${fanout}: every target gets the current state at the next pass.`;
    });
  const taskActions: TaskActions = {
    runNow: (task) =>
      act(`Running ${task} failed`, async () => {
        const { results } = await api.call<{ results: TaskRunResult[] }>("POST", `api/tasks/${path(task)}/run`);
        return results.map((r) => `${r.task}: ${r.outcome.replace("_", " ")}${r.reason ? ` (${r.reason})` : ""}`).join("; ") || "No task to run.";
      }),
    pause: (task, until) =>
      act(`Pausing ${task} failed`, async () => {
        await api.call("POST", `api/tasks/${path(task)}/pause`, { until });
        return task === "all" ? `All tasks paused for ${until}.` : `${task} paused for ${until}.`;
      }),
    resume: (task) =>
      act(`Resuming ${task} failed`, async () => {
        await api.call("POST", `api/tasks/${path(task)}/resume`);
        return task === "all" ? "All tasks resumed." : `${task} resumed.`;
      }),
  };

  if (needsToken) return <TokenForm refused={needsToken === "refused"} onToken={(token) => (saveToken(token), void refresh())} />;
  if (!overview) return <p class={problem ? "problem bad" : "loading"}>{problem ?? "Loading…"}</p>;
  const { engine, now } = overview;
  return (
    <div class="page">
      <header>
        <h1>tickwork</h1>
        <nav class="views" aria-label="Views">
          <a href="#/" aria-current={route.view === "overview" ? "page" : undefined}>
            Overview
          </a>
          <a href="#/jobs" aria-current={route.view === "overview" ? undefined : "page"}>
            Jobs
          </a>
        </nav>
        <span class="sub">
          {engine.store} · instance {engine.instanceId} · {engine.started ? "workers running" : "workers not started"}
        </span>
        <span class={problem ? "live bad" : "live ok"} role="status">
          {problem ?? `live · ${new Date(now).toISOString().slice(11, 19)} UTC`}
        </span>
      </header>
      {shownNotice ? (
        <p class={`notice ${shownNotice.tone}`} role="alert">
          {shownNotice.text}
        </p>
      ) : null}
      {route.view === "jobs" ? (
        <section aria-label="Jobs">
          <h2>Jobs</h2>
          <JobBrowser api={api} filter={route.filter} queues={overview.queues} refreshMs={props.refreshMs} busy={busy} actions={jobs} />
        </section>
      ) : route.view === "job" ? (
        <section aria-label={`Job ${route.id}`}>
          <JobDetailView api={api} id={route.id} refreshMs={props.refreshMs} busy={busy} actions={jobs} />
        </section>
      ) : (
        <>
          <section aria-label="Queues">
            <h2>Queues</h2>
            <Queues queues={overview.queues} throughput={overview.throughput} now={now} busy={busy} actions={queueActions} />
          </section>
          <section aria-label="Throughput">
            <h2>Throughput (this process)</h2>
            <ThroughputChart throughput={overview.throughput} />
          </section>
          <section aria-label="Failed jobs">
            <h2>Failed jobs</h2>
            <FailedJobs jobs={overview.failed} failedCount={overview.queues.reduce((n, q) => n + q.counts.failed, 0)} now={now} busy={busy} onRetry={(id) => void jobs.retry(id)} />
          </section>
          <section aria-label="Tasks">
            <h2>Tasks</h2>
            <Tasks tasks={overview.scheduler.tasks} pausedUntil={overview.scheduler.pausedUntil} now={now} busy={busy} actions={taskActions} />
          </section>
          <section aria-label="Deliveries">
            <h2>Deliveries</h2>
            <Deliveries deliveries={overview.deliveries} now={now} busy={busy} onReplay={replayDropped} onPurge={purgeDropped} />
          </section>
          <section aria-label="Fan-outs">
            <h2>Fan-outs</h2>
            <Fanouts fanouts={overview.fanouts} now={now} busy={busy} onReconcile={reconcile} />
          </section>
        </>
      )}
    </div>
  );
}

/** Asks for the admin token; after a refusal it says so, rather than showing the same form as if nothing had happened. */
function TokenForm(props: { refused: boolean; onToken: (token: string) => void }) {
  const [value, setValue] = useState("");
  return (
    <form
      class="token"
      onSubmit={(e) => {
        e.preventDefault();
        if (value.trim()) props.onToken(value.trim());
      }}
    >
      <h1>tickwork</h1>
      <p>This dashboard needs the admin token: the server's token option, or TICKWORK_ADMIN_TOKEN.</p>
      {props.refused ? (
        <p class="notice bad" role="alert">
          That token was refused: the server answered 401. Check it against the server's token option or TICKWORK_ADMIN_TOKEN.
        </p>
      ) : null}
      <label>
        Admin token <input type="password" name="token" autocomplete="current-password" value={value} onInput={(e) => setValue(e.currentTarget.value)} />
      </label>
      <button type="submit">Open</button>
    </form>
  );
}
