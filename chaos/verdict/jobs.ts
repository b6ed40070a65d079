/**
 * The verdict on a queue scenario: every acknowledged job ran to success with a completed execution
 * of the attempt tickwork accepted, and every second execution of a job is explained by a rule of
 * rules.ts. Inputs: the ledger (executions, acks, faults, events) and the jobs as tickwork reports
 * them at the end (`tw.jobs.list`).
 */
import type { LedgerRecord } from "../ledger.js";
import type { Recovery } from "../report.js";
import { eventsOf, freezeWithin, indexFaults, killWithin, storeErrorWithin, windowWithin, type FaultIndex } from "./faults.js";
import type { Cause } from "./rules.js";

export interface FinalJob {
  id: string;
  status: string;
  attempts: number;
}

export interface Execution {
  job: string;
  attempt: number;
  pid: number;
  start: number;
  done: number | null;
}

export interface JobsVerdict {
  acked: number;
  inTable: number;
  executions: number;
  lost: string[];
  reruns: number;
  explained: Partial<Record<Cause, number>>;
  unexplained: string[];
  doubleCompletions: number;
  recovery: Recovery[];
  notes: string[];
}

/** Each job's executions in the ledger (a `start`, and its `done` if it finished), by attempt. */
export function executions(records: readonly LedgerRecord[]): Map<string, Execution[]> {
  const done = new Map<string, number>();
  for (const r of records) if (r.k === "done") done.set(`${r.job}|${r.attempt}|${r.pid}`, r.t);
  const byJob = new Map<string, Execution[]>();
  for (const r of records) {
    if (r.k !== "start") continue;
    const e: Execution = { job: String(r.job), attempt: Number(r.attempt), pid: r.pid, start: r.t, done: done.get(`${r.job}|${r.attempt}|${r.pid}`) ?? null };
    byJob.set(e.job, [...(byJob.get(e.job) ?? []), e]);
  }
  for (const list of byJob.values()) list.sort((a, b) => a.attempt - b.attempt || a.start - b.start);
  return byJob;
}

/** Why `prev` did not settle its job, so that `next` ran it again; and the fault's time, if one caused it. */
function explain(index: FaultIndex, prev: Execution, next: Execution, leaseMs: number): { cause: Cause; faultAt: number | null } | null {
  const killedAt = killWithin(index, prev.pid, prev.start, next.start);
  if (killedAt !== undefined) return { cause: "killed", faultAt: killedAt };
  const fenced = [...eventsOf(index, prev.pid, "job.lease_lost"), ...eventsOf(index, prev.pid, "job.outcome_refused")].some(
    (r) => String(r.id) === prev.job && Number(r.attempt) === prev.attempt,
  );
  const from = Math.min(prev.start, next.start);
  if (fenced) {
    const freeze = freezeWithin(index, prev.pid, prev.start, next.start, leaseMs);
    if (freeze) return { cause: "frozen past the lease", faultAt: freeze.start };
    return { cause: "lease lapsed", faultAt: windowWithin(index, from, next.start)?.start ?? null };
  }
  const errorAt = storeErrorWithin(index, prev.pid, from, Math.max(prev.start, next.start));
  if (errorAt !== undefined) return { cause: "store failure", faultAt: windowWithin(index, from, next.start)?.start ?? null };
  return null;
}

export function judgeJobs(records: readonly LedgerRecord[], finals: readonly FinalJob[], bounds: { leaseMs: number; rescueMs: number }): JobsVerdict {
  const index = indexFaults(records);
  const byJob = executions(records);
  const acked = new Set<string>();
  for (const r of records) if (r.k === "ack") for (const id of r.ids as string[]) acked.add(String(id));
  const finalById = new Map(finals.map((j) => [j.id, j]));
  const rescuedAt = new Map<string, number[]>();
  for (const list of index.events.values()) {
    for (const r of list) if (r.event === "job.lease_expired") rescuedAt.set(String(r.id), [...(rescuedAt.get(String(r.id)) ?? []), r.t]);
  }

  const lost: string[] = [];
  const unexplained: string[] = [];
  const explained: Partial<Record<Cause, number>> = {};
  const killToRerun: number[] = [];
  const killToPending: number[] = [];
  const freezeToRerun: number[] = [];
  const faultToRerun: number[] = [];
  let reruns = 0;
  let doubleCompletions = 0;
  let executionCount = 0;
  let staleStarts = 0;
  let rescuedAgain = 0;

  for (const id of new Set([...acked, ...finalById.keys()])) {
    const final = finalById.get(id);
    const runs = byJob.get(id) ?? [];
    executionCount += runs.length;
    const where = `job ${id}`;
    if (!final) {
      lost.push(`${where}: acknowledged to the producer but not in the table`);
      continue;
    }
    if (final.status !== "succeeded") {
      lost.push(`${where}: ended ${final.status} after ${final.attempts} attempts (${runs.length} executions in the ledger)`);
      continue;
    }
    const accepted = runs.find((e) => e.attempt === final.attempts && e.done !== null);
    if (!accepted) lost.push(`${where}: succeeded at attempt ${final.attempts}, but the ledger has no completed execution of that attempt (${runs.map((e) => `a${e.attempt}${e.done ? "" : " unfinished"}`).join(", ") || "none"})`);
    for (const e of runs.filter((e) => e.attempt > final.attempts)) {
      unexplained.push(`${where}: attempt ${e.attempt} (pid ${e.pid}) started, yet tickwork accepted attempt ${final.attempts}: an outcome was accepted after a later claim`);
    }
    for (let i = 1; i < runs.length; i++) {
      const prev = runs[i - 1]!;
      const next = runs[i]!;
      reruns++;
      if (prev.done !== null) doubleCompletions++;
      // The same attempt again is the documented window of a held job whose start was not yet written
      // when its holder lost it (killed, frozen, its lease lapsed: the attempt was given back); without
      // such a fault it is one claim run twice.
      if (next.attempt === prev.attempt && !explain(index, prev, next, bounds.leaseMs)) {
        unexplained.push(`${where}: attempt ${prev.attempt} executed twice (pids ${prev.pid} and ${next.pid}): one claim ran twice`);
        continue;
      }
      const why = explain(index, prev, next, bounds.leaseMs);
      // The earlier attempt's execution began after the later one: its worker started a job whose
      // lease had already lapsed (claimed before a freeze or a stall, started after it).
      if (prev.start > next.start) staleStarts++;
      if (!why) {
        unexplained.push(`${where}: attempt ${prev.attempt} (pid ${prev.pid}, started ${new Date(prev.start).toISOString()}${prev.done ? ", completed" : ""}) ran again as attempt ${next.attempt} (pid ${next.pid}) ${next.start - prev.start} ms later; its process was neither killed nor frozen and logged no lost lease, refused outcome or store error`);
        continue;
      }
      explained[why.cause] = (explained[why.cause] ?? 0) + 1;
      const faultAt = why.faultAt;
      if (faultAt === null) continue;
      const delay = next.start - faultAt;
      if (why.cause === "killed") {
        killToRerun.push(delay);
        const rescues = rescuedAt.get(id)?.filter((t) => t >= faultAt && t <= next.start) ?? [];
        if (rescues[0] !== undefined) killToPending.push(rescues[0] - faultAt);
        if (rescues.length > 1) rescuedAgain++;
      } else if (why.cause === "frozen past the lease") freezeToRerun.push(delay);
      else faultToRerun.push(delay);
    }
  }

  const bound = bounds.leaseMs + bounds.rescueMs;
  const recovery: Recovery[] = [];
  if (killToRerun.length) recovery.push({ label: "kill → re-run", ms: killToRerun, boundMs: bound });
  if (killToPending.length) recovery.push({ label: "kill → back to pending (rescued)", ms: killToPending, boundMs: bound });
  if (freezeToRerun.length) recovery.push({ label: "freeze → re-run elsewhere", ms: freezeToRerun, boundMs: bound });
  if (faultToRerun.length) recovery.push({ label: "fault → re-run", ms: faultToRerun });
  const notes: string[] = [];
  const notAcked = finals.filter((j) => !acked.has(j.id)).length;
  if (rescuedAgain) {
    notes.push(`${rescuedAgain} re-run(s) came after two or more rescues: the rescued job was claimed again by a worker killed before it started it, so its recovery spans several leases`);
  }
  if (staleStarts) {
    notes.push(
      `${staleStarts} execution(s) started after their lease had lapsed: claimed before a freeze or stall, started by that worker after it (the job had already been rescued and run again elsewhere); each outcome was refused`,
    );
  }
  if (notAcked) notes.push(`${notAcked} job(s) in the table were never acknowledged to the producer (an enqueue whose answer was lost, retried); they ran like the rest`);
  return { acked: acked.size, inTable: finals.length, executions: executionCount, lost, reruns, explained, unexplained, doubleCompletions, recovery, notes };
}
