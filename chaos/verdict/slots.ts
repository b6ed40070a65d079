/**
 * The verdict on the periodic scenario: every slot of the task's span is accounted for (it ran, was
 * skipped as an overlap, or was counted as missed by the run after it); a run killed mid-way is
 * taken over by another process; a slot runs twice only after its first runner was killed or lost
 * its lease (rules.ts).
 */
import type { LedgerRecord } from "../ledger.js";
import type { Recovery } from "../report.js";
import { eventsOf, indexFaults, killWithin, storeErrorWithin } from "./faults.js";
import type { Cause } from "./rules.js";

interface Run {
  slot: number;
  pid: number;
  start: number;
  done: number | null;
  missed: number;
}

export interface SlotsVerdict {
  slots: number;
  runs: number;
  skipped: number;
  lost: string[];
  reruns: number;
  explained: Partial<Record<Cause, number>>;
  unexplained: string[];
  doubleCompletions: number;
  recovery: Recovery[];
  notes: string[];
}

export function judgeSlots(records: readonly LedgerRecord[], everyMs: number, leaseMs: number): SlotsVerdict {
  const index = indexFaults(records);
  const done = new Map<string, number>();
  for (const r of records) if (r.k === "run.done") done.set(`${r.slot}|${r.pid}`, r.t);
  const runs: Run[] = records
    .filter((r) => r.k === "run.start" && r.t < index.teardownAt)
    .map((r) => ({ slot: Number(r.slot), pid: r.pid, start: r.t, done: done.get(`${r.slot}|${r.pid}`) ?? null, missed: Number(r.missed ?? 0) }));
  const skipped = new Set(records.filter((r) => r.k === "event" && r.event === "task.overlap_skipped").map((r) => Number(r.scheduledAt)));

  const bySlot = new Map<number, Run[]>();
  for (const run of runs) bySlot.set(run.slot, [...(bySlot.get(run.slot) ?? []), run]);
  const lost: string[] = [];
  const unexplained: string[] = [];
  const explained: Partial<Record<Cause, number>> = {};
  const killToTakeover: number[] = [];
  let reruns = 0;
  let doubleCompletions = 0;

  for (const [slot, list] of bySlot) {
    list.sort((a, b) => a.start - b.start);
    const at = new Date(slot).toISOString();
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1]!;
      const next = list[i]!;
      reruns++;
      if (prev.done !== null) doubleCompletions++;
      const killedAt = killWithin(index, prev.pid, prev.start, next.start);
      if (killedAt !== undefined) {
        explained.killed = (explained.killed ?? 0) + 1;
        killToTakeover.push(next.start - killedAt);
        continue;
      }
      const fenced = [...eventsOf(index, prev.pid, "task.lease_lost"), ...eventsOf(index, prev.pid, "task.outcome_refused", (r) => Number(r.scheduledAt) === slot)].some((r) => r.t >= prev.start);
      if (fenced) {
        explained["lease lapsed"] = (explained["lease lapsed"] ?? 0) + 1;
        continue;
      }
      if (storeErrorWithin(index, prev.pid, prev.start, next.start) !== undefined) {
        explained["store failure"] = (explained["store failure"] ?? 0) + 1;
        continue;
      }
      unexplained.push(`slot ${at}: run by pid ${prev.pid} (started ${prev.start - slot} ms after the slot${prev.done ? ", finished" : ""}) ran again in pid ${next.pid} ${next.start - prev.start} ms later; the first runner was neither killed nor told its lease was lost`);
    }
    // A run whose process was killed before it finished must be taken over by another process.
    const last = list[list.length - 1]!;
    if (last.done === null) {
      const kill = index.kills.get(last.pid);
      lost.push(kill !== undefined ? `slot ${at}: its run in pid ${last.pid} was killed ${kill.at - last.start} ms in and never taken over` : `slot ${at}: its run in pid ${last.pid} never finished, and the process was not killed`);
    }
  }

  // Every slot between the first and the last run is accounted for.
  const covered = new Set<number>(skipped);
  for (const run of runs) {
    covered.add(run.slot);
    for (let m = 1; m <= run.missed; m++) covered.add(run.slot - m * everyMs);
  }
  const slots = [...bySlot.keys()].sort((a, b) => a - b);
  let span = 0;
  if (slots.length) {
    for (let s = slots[0]!; s <= slots[slots.length - 1]!; s += everyMs) {
      span++;
      if (!covered.has(s)) lost.push(`slot ${new Date(s).toISOString()}: neither ran, nor was skipped as an overlap, nor counted as missed`);
    }
  }
  const recovery: Recovery[] = killToTakeover.length ? [{ label: "kill → slot taken over", ms: killToTakeover, boundMs: leaseMs + everyMs }] : [];
  return { slots: span, runs: runs.length, skipped: skipped.size, lost, reruns, explained, unexplained, doubleCompletions, recovery, notes: [] };
}
