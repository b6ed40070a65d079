/**
 * The flows scenario's own promises, on top of the jobs verdict (every job, acknowledged or only in
 * the tables, ends succeeded with a completed execution of its accepted attempt):
 * - a parent (a flow's inner node or root, a batch's completion job) starts only after every child
 *   ended: each of its executions starts after the child's accepted execution finished, and
 *   `ctx.childResults()` gave it every child, ended;
 * - a dedupe key is held by one live job at a time (skip, replace, debounce): a later job of the key
 *   starts only after the earlier one finished; a throttled key gets a new job at most once per window;
 * - no call answered with anything but a result or a TickworkError, and no statement deadlocked.
 */
import type { LedgerRecord } from "../ledger.js";
import { executions, type Execution, type FinalJob } from "./jobs.js";

export interface FlowFinal extends FinalJob {
  queue: string;
  parentId: string | null;
  key: string | null;
  createdAt: number;
}

export interface FlowsVerdict {
  parents: number;
  keys: number;
  earlyParents: string[];
  dedupe: string[];
  rawErrors: string[];
  deadlocks: string[];
  typedErrors: number;
}

const acceptedDone = (runs: readonly Execution[] | undefined, final: FlowFinal): number | null =>
  runs?.find((e) => e.attempt === final.attempts && e.done !== null)?.done ?? null;

export function judgeFlows(records: readonly LedgerRecord[], finals: readonly FlowFinal[], bounds: { throttleMs: number }): FlowsVerdict {
  const byJob = executions(records);
  const children = new Map<string, FlowFinal[]>();
  for (const j of finals) if (j.parentId !== null) children.set(j.parentId, [...(children.get(j.parentId) ?? []), j]);

  const earlyParents: string[] = [];
  for (const [parentId, kids] of children) {
    for (const e of byJob.get(parentId) ?? []) {
      for (const kid of kids) {
        const ended = acceptedDone(byJob.get(kid.id), kid);
        if (ended === null || ended > e.start) {
          earlyParents.push(`parent ${parentId} attempt ${e.attempt} started at ${e.start}, before its child ${kid.id} ended (${ended === null ? "no completed accepted execution" : `at ${ended}`})`);
        }
      }
    }
  }
  for (const r of records) {
    if (r.k !== "parent.saw") continue;
    const kids = children.get(String(r.job)) ?? [];
    const ids = (r.ids as string[]).map(String);
    const statuses = r.statuses as string[];
    const same = ids.length === kids.length && kids.every((k) => ids.includes(k.id));
    if (!same || r.total !== kids.length || statuses.some((s) => s !== "succeeded")) {
      earlyParents.push(`parent ${String(r.job)} attempt ${String(r.attempt)} read ${ids.length} child results (${statuses.join(", ")}) of ${kids.length} children (total ${String(r.total)})`);
    }
  }

  const dedupe: string[] = [];
  const byKey = new Map<string, FlowFinal[]>();
  for (const j of finals) if (j.key !== null) byKey.set(j.key, [...(byKey.get(j.key) ?? []), j]);
  for (const [key, jobs] of byKey) {
    jobs.sort((a, b) => a.createdAt - b.createdAt || Number(a.id) - Number(b.id));
    const throttled = key.startsWith("throttle-");
    for (let i = 1; i < jobs.length; i++) {
      const [prev, next] = [jobs[i - 1]!, jobs[i]!];
      if (throttled) {
        if (next.createdAt - prev.createdAt < bounds.throttleMs) dedupe.push(`key ${key}: jobs ${prev.id} and ${next.id} created ${next.createdAt - prev.createdAt} ms apart, within the throttle of ${bounds.throttleMs} ms`);
        continue;
      }
      const prevDone = acceptedDone(byJob.get(prev.id), prev);
      const nextStart = Math.min(...(byJob.get(next.id) ?? []).map((e) => e.start));
      if (prevDone !== null && Number.isFinite(nextStart) && nextStart < prevDone) {
        dedupe.push(`key ${key}: job ${next.id} started at ${nextStart} while job ${prev.id} of the same key was live (it finished at ${prevDone})`);
      }
    }
  }

  const rawErrors: string[] = [];
  let typedErrors = 0;
  for (const r of records) {
    if (r.k !== "call.error") continue;
    if (r.typed === true) typedErrors++;
    else rawErrors.push(`pid ${r.pid}, ${String(r.kind)}: ${String(r.name)}: ${String(r.error)}`);
  }
  const deadlocks = records.filter((r) => /deadlock/i.test(JSON.stringify(r))).map((r) => `pid ${r.pid} ${r.k}: ${JSON.stringify(r).slice(0, 300)}`);
  return { parents: children.size, keys: byKey.size, earlyParents, dedupe, rawErrors, deadlocks, typedErrors };
}

/** Every finding of the flows verdict as the report's failures. */
export function flowFailures(v: FlowsVerdict): string[] {
  return [
    ...v.earlyParents.map((s) => `parent early: ${s}`),
    ...v.dedupe.map((s) => `dedupe: ${s}`),
    ...v.rawErrors.map((s) => `raw error: ${s}`),
    ...v.deadlocks.map((s) => `deadlock: ${s}`),
  ];
}
