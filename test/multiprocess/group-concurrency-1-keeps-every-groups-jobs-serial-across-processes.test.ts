import { describe, expect, it } from "vitest";
import { allSucceeded, flowHarness } from "./fixtures/harness.js";
import { groupOverlaps, maxOverlap } from "./fixtures/ledger.js";

/**
 * Worker processes each willing to run 4 jobs at once share a queue with groupConcurrency 1: the
 * ledger of every handler's start and end must show no two jobs of one group running at the same
 * time, whichever processes ran them, while jobs of different groups did run side by side.
 */

interface Case {
  kind: "postgres" | "sqlite";
  label: string;
  processes: number;
  groups: number;
  perGroup: number;
}

const CASES: Case[] = [
  { kind: "postgres", label: "", processes: 4, groups: 40, perGroup: 10 },
  // One SQLite file has one writer at a time and no notifications: fewer processes and jobs.
  { kind: "sqlite", label: " on one SQLite file", processes: 2, groups: 20, perGroup: 5 },
];

describe.each(CASES)("groupConcurrency 1 on $kind", ({ kind, label, processes, groups, perGroup }) => {
  const setup = flowHarness();

  it(`groupConcurrency 1 keeps every group's jobs serial across ${processes} processes${label}`, async () => {
    const s = await setup(kind, { queue: { concurrency: 4, groupConcurrency: 1, group: true }, workMs: [5, 30] });
    const workers = Array.from({ length: processes }, () => s.spawnWorker());
    await Promise.all(workers.map((w) => w.ready));
    const jobs = groups * perGroup;
    // Interleaved, so every group has due jobs from the first claim to the last.
    await s.flow.enqueueMany(Array.from({ length: jobs }, (_, n) => ({ payload: { n }, group: `g${String(n % groups).padStart(2, "0")}` })));

    await allSucceeded(s, jobs, 60_000);

    const runs = s.runs();
    expect(runs.every((r) => r.end !== null), "a handler never ended").toBe(true);
    const intervals = runs.map((r) => ({ ...r, end: r.end! }));
    expect(new Set(runs.map((r) => r.job)).size).toBe(jobs);
    expect(new Set(runs.map((r) => r.group)).size).toBe(groups);

    const overlaps = groupOverlaps(intervals);
    expect(overlaps, "jobs of one group running at once").toEqual([]);

    // The test shows something: groups did run side by side, and one group's jobs moved between processes.
    const overall = maxOverlap(intervals);
    const workersOf = new Map<string | null, Set<string>>();
    for (const r of runs) workersOf.set(r.group, (workersOf.get(r.group) ?? new Set()).add(r.worker));
    const spread = [...workersOf.values()].filter((w) => w.size > 1).length;
    console.info(`[groupConcurrency 1${label}] ${jobs} jobs in ${groups} groups on ${processes} processes: max running at once ${overall.max}, ${spread} groups ran on more than one process`);
    expect(overall.max).toBeGreaterThan(processes);
    expect(spread).toBeGreaterThan(groups / 2);
  }, 90_000);
});
