import { useEffect, useState } from "preact/hooks";

/**
 * Where the dashboard is, in the URL's fragment: `#/jobs?state=failed&queue=mail` (the job browser;
 * `#/jobs?parent=42` lists job 42's children), `#/jobs/42` (one job), anything else the overview. A
 * fragment, so that the server serves one page wherever the app is mounted, and a link or a reload
 * opens the same view.
 */

/** The job browser's tabs: pending is split into due now and scheduled for later. */
export const BROWSER_STATES = ["all", "due", "scheduled", "running", "succeeded", "failed", "cancelled"] as const;
export type BrowserState = (typeof BROWSER_STATES)[number];

export interface BrowserFilter {
  state: BrowserState;
  queue?: string;
  key?: string;
  id?: string;
  /** A flow parent's (or a batch completion job's) id: its direct children only. */
  parent?: string;
  /** Oldest first; newest first (the default) when absent, so the plain `#/jobs` stays as it was. */
  order?: "oldest";
}

export type Route = { view: "overview" } | { view: "jobs"; filter: BrowserFilter } | { view: "job"; id: string };

/** Which view a route shows, as one string: the job browser is one view whatever its filter, each job's page its own. */
export function viewOf(route: Route): string {
  return route.view === "job" ? `job ${route.id}` : route.view;
}

const JOB = /^#\/jobs\/([1-9][0-9]{0,18})$/;

export function parseRoute(hash: string): Route {
  const job = JOB.exec(hash);
  if (job) return { view: "job", id: job[1]! };
  if (hash !== "#/jobs" && !hash.startsWith("#/jobs?")) return { view: "overview" };
  const query = new URLSearchParams(hash.slice("#/jobs".length));
  const state = query.get("state") ?? "all";
  const filter: BrowserFilter = { state: (BROWSER_STATES as readonly string[]).includes(state) ? (state as BrowserState) : "all" };
  for (const field of ["queue", "key", "id", "parent"] as const) {
    const value = query.get(field);
    if (value) filter[field] = value;
  }
  if (query.get("order") === "oldest") filter.order = "oldest";
  return { view: "jobs", filter };
}

/** The fragment of the job browser with this filter (empty fields left out). */
export function browserHref(filter: BrowserFilter): string {
  const query = new URLSearchParams();
  if (filter.state !== "all") query.set("state", filter.state);
  for (const field of ["queue", "key", "id", "parent"] as const) {
    const value = filter[field];
    if (value) query.set(field, value);
  }
  if (filter.order === "oldest") query.set("order", "oldest");
  const text = query.toString();
  return text ? `#/jobs?${text}` : "#/jobs";
}

export function jobHref(id: string): string {
  return `#/jobs/${id}`;
}

/** The route of the address bar, followed as it changes (links, back and forward). */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}
