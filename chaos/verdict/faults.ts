/**
 * What the controller did to the processes and the database during a scenario, and what each
 * process logged about its own leases and store calls, indexed for the rules that decide whether a
 * second execution is inside the documented window (see rules.ts).
 */
import type { LedgerRecord } from "../ledger.js";

export interface Window {
  what: string;
  start: number;
  end: number;
}

export interface FaultIndex {
  /**
   * Each process the controller SIGKILLed (not counting the final teardown): when the signal was sent,
   * and when the controller saw the process gone (it may have run on for a few ms in between).
   */
  kills: Map<number, { at: number; dead: number }>;
  /** Each process's freezes (SIGSTOP until SIGCONT). */
  freezes: Map<number, Window[]>;
  /** Outages of the database and pool hogs: windows in which store calls could fail or wait. */
  windows: Window[];
  /** When the controller began ending every process (runs still going then are not judged). */
  teardownAt: number;
  /** Per process: times of its `store.error` events. */
  storeErrors: Map<number, number[]>;
  /** Per process: the events it logged, by name. */
  events: Map<number, LedgerRecord[]>;
}

export function indexFaults(records: readonly LedgerRecord[]): FaultIndex {
  const kills = new Map<number, { at: number; dead: number }>();
  const freezes = new Map<number, Window[]>();
  const windows: Window[] = [];
  const storeErrors = new Map<number, number[]>();
  const events = new Map<number, LedgerRecord[]>();
  let teardownAt = Number.POSITIVE_INFINITY;
  for (const r of records) {
    if (r.k === "fault.kill") kills.set(Number(r.target), { at: Number(r.at ?? r.t), dead: Number(r.dead ?? r.t) });
    else if (r.k === "fault.freeze") freezes.set(Number(r.target), [...(freezes.get(Number(r.target)) ?? []), { what: "frozen", start: r.t, end: Number.POSITIVE_INFINITY }]);
    else if (r.k === "fault.thaw") {
      const open = freezes.get(Number(r.target))?.find((w) => w.end === Number.POSITIVE_INFINITY);
      if (open) open.end = r.t;
    } else if (r.k === "fault.window") windows.push({ what: String(r.what), start: Number(r.start), end: Number(r.end) });
    else if (r.k === "teardown") teardownAt = Math.min(teardownAt, r.t);
    else if (r.k === "event") {
      events.set(r.pid, [...(events.get(r.pid) ?? []), r]);
      if (r.event === "store.error") storeErrors.set(r.pid, [...(storeErrors.get(r.pid) ?? []), r.t]);
    }
  }
  return { kills, freezes, windows, teardownAt, storeErrors, events };
}

/**
 * The first window that overlaps [from, to]: the database fault that broke an execution started at
 * `from` (later faults in the span came after the damage was done).
 */
export function windowWithin(index: FaultIndex, from: number, to: number): Window | undefined {
  return index.windows.filter((w) => w.start <= to && w.end >= from).sort((a, b) => a.start - b.start)[0];
}

/**
 * A freeze of `pid` that explains why its execution started at `prevStart` ran again at `nextStart`:
 * the freeze began before the re-run and ended less than one lease before the earlier execution
 * started (or after it). That covers an execution frozen mid-way, and one claimed before the freeze
 * but started only after the thaw, its lease having lapsed meanwhile (a prefetched job).
 */
export function freezeWithin(index: FaultIndex, pid: number, prevStart: number, nextStart: number, leaseMs: number): Window | undefined {
  // The latest such freeze: a process frozen twice in a scenario must not have its second freeze's
  // re-runs timed from the first.
  return (index.freezes.get(pid) ?? [])
    .filter((w) => w.start <= nextStart && w.end + leaseMs >= Math.min(prevStart, nextStart))
    .sort((a, b) => b.start - a.start)[0];
}

/**
 * The kill of `pid` if it ended an execution that started at `from` and ran again at `to`: the
 * process was still alive when the execution started, and the signal came before the re-run.
 * Returns when the signal was sent.
 */
export function killWithin(index: FaultIndex, pid: number, from: number, to: number): number | undefined {
  const kill = index.kills.get(pid);
  return kill !== undefined && kill.dead >= from && kill.at <= to ? kill.at : undefined;
}

/** The first `store.error` `pid` logged in [from, to]. */
export function storeErrorWithin(index: FaultIndex, pid: number, from: number, to: number): number | undefined {
  return index.storeErrors.get(pid)?.find((t) => t >= from && t <= to);
}

/** Events named `name` that `pid` logged, matching `test`. */
export function eventsOf(index: FaultIndex, pid: number, name: string, test: (r: LedgerRecord) => boolean = () => true): LedgerRecord[] {
  return (index.events.get(pid) ?? []).filter((r) => r.event === name && test(r));
}
