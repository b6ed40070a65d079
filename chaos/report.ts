/** What one scenario on one store found, and how it is printed. */
import type { Cause } from "./verdict/rules.js";
import { spread } from "./stats.js";

export interface Recovery {
  label: string;
  ms: number[];
  /** A bound the figures are compared with (e.g. lease + rescue interval), if any. */
  boundMs?: number;
}

export interface ScenarioReport {
  scenario: string;
  store: string;
  /** Set when the scenario could not run here (and why); a skip is not a failure. */
  skipped?: string;
  /** The scenario itself broke (a deadline passed, a process would not start). */
  error?: string;
  settings: string;
  /** What the scenario pushed through: "10,000 jobs", "48 slots", "1,200 keys". */
  items: string;
  faults: Record<string, number>;
  lost: number;
  lostDetails: string[];
  /** Executions beyond the first of a job, slot or key. */
  reruns: number;
  explained: Partial<Record<Cause, number>>;
  unexplained: string[];
  /** Re-runs whose earlier execution had also completed its work (the handler finished twice). */
  doubleCompletions: number;
  recovery: Recovery[];
  /** Processes that died without being killed, ledger faults, and other findings. */
  failures: string[];
  notes: string[];
  durationMs: number;
}

export function passed(r: ScenarioReport): boolean {
  return r.skipped !== undefined || (r.error === undefined && r.lost === 0 && r.unexplained.length === 0 && r.failures.length === 0);
}

export function emptyReport(scenario: string, store: string, settings: string): ScenarioReport {
  return { scenario, store, settings, items: "", faults: {}, lost: 0, lostDetails: [], reruns: 0, explained: {}, unexplained: [], doubleCompletions: 0, recovery: [], failures: [], notes: [], durationMs: 0 };
}

const MAX_DETAILS = 10;

function list(title: string, items: readonly string[]): string[] {
  if (items.length === 0) return [];
  const shown = items.slice(0, MAX_DETAILS).map((i) => `      ${i}`);
  const more = items.length > MAX_DETAILS ? [`      ... and ${items.length - MAX_DETAILS} more`] : [];
  return [`    ${title}:`, ...shown, ...more];
}

/** What every verdict (jobs, slots, keys) finds, in the report's terms. */
export interface Verdict {
  lost: string[];
  reruns: number;
  explained: Partial<Record<Cause, number>>;
  unexplained: string[];
  doubleCompletions: number;
  recovery: Recovery[];
  notes: string[];
}

/** Copies a verdict's findings into the scenario's report. */
export function recordVerdict(report: ScenarioReport, v: Verdict): void {
  report.lost = v.lost.length;
  report.lostDetails = v.lost;
  report.reruns = v.reruns;
  report.explained = v.explained;
  report.unexplained = v.unexplained;
  report.doubleCompletions = v.doubleCompletions;
  report.recovery = v.recovery;
  report.notes.push(...v.notes);
}

export function formatReport(r: ScenarioReport): string {
  const head = `── ${r.scenario} · ${r.store} `.padEnd(78, "─");
  if (r.skipped) return `${head}\n  skipped: ${r.skipped}`;
  const faults = Object.entries(r.faults).map(([k, v]) => `${v} ${k}`).join(", ") || "none";
  const causes = Object.entries(r.explained).map(([k, v]) => `${v} ${k}`).join(", ");
  const lines = [
    head,
    `  settings: ${r.settings}`,
    `  ${r.items}; faults: ${faults}`,
    `  lost: ${r.lost}`,
    ...list("lost", r.lostDetails),
    `  re-runs: ${r.reruns} (${r.unexplained.length === 0 ? "all inside the documented window" : `${r.unexplained.length} UNEXPLAINED`}${causes ? `; ${causes}` : ""}); double completions: ${r.doubleCompletions}`,
    ...list("unexplained", r.unexplained),
    ...r.recovery.map((x) => `  ${x.label}: ${spread(x.ms)}${x.boundMs !== undefined && x.ms.length ? `; bound ${(x.boundMs / 1000).toFixed(1)} s, over it: ${x.ms.filter((v) => v > x.boundMs!).length}` : ""}`),
    ...list("failures", r.failures),
    ...r.notes.map((n) => `  note: ${n}`),
    ...(r.error ? [`  ERROR: ${r.error}`] : []),
    `  duration: ${(r.durationMs / 1000).toFixed(1)} s  →  ${passed(r) ? "PASS" : "FAIL"}`,
  ];
  return lines.join("\n");
}
