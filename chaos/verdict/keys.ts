/**
 * The verdict on the idempotency scenario: each key's operation runs once, except the documented
 * takeover (its owner was killed or frozen, its claim went stale after staleAfter); every caller that
 * got a result for a key got the same one, which a completed run produced; no caller was left
 * without a result.
 */
import type { LedgerRecord } from "../ledger.js";
import type { Recovery } from "../report.js";
import { freezeWithin, indexFaults, killWithin, storeErrorWithin } from "./faults.js";
import type { Cause } from "./rules.js";

interface Run {
  key: string;
  token: string;
  pid: number;
  start: number;
  done: number | null;
}

export interface KeysVerdict {
  keys: number;
  calls: number;
  lost: string[];
  reruns: number;
  explained: Partial<Record<Cause, number>>;
  unexplained: string[];
  doubleCompletions: number;
  recovery: Recovery[];
  notes: string[];
}

export function judgeKeys(records: readonly LedgerRecord[], staleAfterMs: number): KeysVerdict {
  const index = indexFaults(records);
  const done = new Map<string, number>();
  for (const r of records) if (r.k === "fn.done") done.set(String(r.token), r.t);
  const runsByKey = new Map<string, Run[]>();
  for (const r of records) {
    if (r.k !== "fn.start") continue;
    const run: Run = { key: String(r.key), token: String(r.token), pid: r.pid, start: r.t, done: done.get(String(r.token)) ?? null };
    runsByKey.set(run.key, [...(runsByKey.get(run.key) ?? []), run]);
  }
  const answers = new Map<string, LedgerRecord[]>();
  for (const r of records) if (r.k === "answer") answers.set(String(r.key), [...(answers.get(String(r.key)) ?? []), r]);

  const lost: string[] = [];
  const unexplained: string[] = [];
  const explained: Partial<Record<Cause, number>> = {};
  const faultToTakeover: number[] = [];
  const errorCodes = new Map<string, number>();
  let reruns = 0;
  let doubleCompletions = 0;
  let calls = 0;
  let staleStarts = 0;

  for (const key of new Set([...runsByKey.keys(), ...answers.keys()])) {
    const runs = (runsByKey.get(key) ?? []).sort((a, b) => a.start - b.start);
    const said = answers.get(key) ?? [];
    calls += said.length;
    for (let i = 1; i < runs.length; i++) {
      const prev = runs[i - 1]!;
      const next = runs[i]!;
      reruns++;
      if (prev.done !== null) doubleCompletions++;
      const killedAt = killWithin(index, prev.pid, prev.start, next.start);
      const freeze = freezeWithin(index, prev.pid, prev.start, next.start, staleAfterMs);
      const faultAt = killedAt ?? freeze?.start;
      if (faultAt !== undefined) {
        const cause: Cause = killedAt !== undefined ? "killed" : "frozen past the lease";
        explained[cause] = (explained[cause] ?? 0) + 1;
        faultToTakeover.push(next.start - faultAt);
        continue;
      }
      // The later run's owner claimed the key first, was frozen before its operation began, and began
      // it after the thaw, its claim taken over meanwhile by the earlier run (a stale start).
      const staleFreeze = freezeWithin(index, next.pid, next.start, prev.start, staleAfterMs);
      if (staleFreeze && staleFreeze.end <= next.start) {
        explained["frozen past the lease"] = (explained["frozen past the lease"] ?? 0) + 1;
        faultToTakeover.push(prev.start - staleFreeze.start);
        staleStarts++;
        continue;
      }
      if (storeErrorWithin(index, prev.pid, prev.start, next.start) !== undefined) {
        explained["store failure"] = (explained["store failure"] ?? 0) + 1;
        continue;
      }
      unexplained.push(`key ${key}: run by pid ${prev.pid} was taken over by pid ${next.pid} ${next.start - prev.start} ms after it started, though its owner was neither killed nor frozen (staleAfter ${staleAfterMs} ms)`);
    }
    // Every result a caller got for this key is the same one, and a completed run produced it.
    const results = said.filter((a) => a.kind === "ran" || a.kind === "cached");
    const tokens = new Set(results.map((a) => String(a.token)));
    if (tokens.size > 1) {
      const who = results.map((a) => `pid ${a.pid} ${a.kind} ${String(a.token).slice(0, 8)}`).join("; ");
      unexplained.push(`key ${key}: callers got ${tokens.size} different results (${who}): two answers for one key`);
    }
    for (const token of tokens) if (!done.has(token)) lost.push(`key ${key}: result ${token.slice(0, 8)} was returned, but no run with that token completed`);
    if (results.length === 0) lost.push(`key ${key}: no caller got a result (${said.map((a) => a.kind).join(", ") || "no answers"})`);
    for (const a of said.filter((a) => a.kind === "gave-up")) lost.push(`key ${key}: pid ${a.pid} gave up without a result`);
    for (const a of said.filter((a) => a.kind === "error")) errorCodes.set(String(a.code ?? a.error), (errorCodes.get(String(a.code ?? a.error)) ?? 0) + 1);
  }
  const notes = [...errorCodes].map(([code, n]) => `${n} call(s) answered with an error (${code}), then retried to a result`);
  if (staleStarts) {
    notes.push(`${staleStarts} operation(s) began after their owner's claim had been taken over: the owner claimed the key, was frozen before its operation began, and began it after the thaw`);
  }
  const recovery: Recovery[] = faultToTakeover.length ? [{ label: "kill/freeze → key taken over", ms: faultToTakeover, boundMs: staleAfterMs * 1.25 }] : [];
  return { keys: new Set([...runsByKey.keys(), ...answers.keys()]).size, calls, lost, reruns, explained, unexplained, doubleCompletions, recovery, notes };
}
