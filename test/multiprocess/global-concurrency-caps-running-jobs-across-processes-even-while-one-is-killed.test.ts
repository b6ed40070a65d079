import { describe, expect, it } from "vitest";
import { eventually } from "../crash/fixtures/processes.js";
import { allSucceeded, flowHarness, type FlowSetup, type FlowWorker } from "./fixtures/harness.js";
import { maxOverlap, type Interval, type Run } from "./fixtures/ledger.js";

/**
 * Worker processes each willing to run 4 jobs at once share a queue whose globalConcurrency is 5.
 * Every handler's start and end goes to a ledger; the test kills one process with SIGKILL in the
 * middle of the run and starts a replacement. A killed process's jobs keep their slots in the store
 * until their lease lapses (the lease is 2 s here, renewed every 500 ms), so each of its unfinished
 * runs counts until the lease the store last held for it: at most kill time + 2 s.
 */

const GLOBAL = 5;
const LEASE_MS = 2_000;

interface Case {
  kind: "postgres" | "sqlite";
  label: string;
  processes: number;
  jobs: number;
}

const CASES: Case[] = [
  { kind: "postgres", label: "on PostgreSQL", processes: 4, jobs: 400 },
  // One SQLite file has one writer at a time and no notifications: fewer processes and jobs.
  { kind: "sqlite", label: "on one SQLite file", processes: 2, jobs: 150 },
];

describe.each(CASES)("globalConcurrency $label", ({ kind, label, processes, jobs }) => {
  const setup = flowHarness();

  it(`${processes} worker processes ${label} with globalConcurrency ${GLOBAL} never run more than ${GLOBAL} jobs at once, even while one is SIGKILLed`, async () => {
    const s = await setup(kind, { queue: { concurrency: 4, lease: `${LEASE_MS}ms`, globalConcurrency: GLOBAL }, workMs: [5, 30] });
    const started = Array.from({ length: processes }, () => s.spawnWorker());
    await Promise.all(started.map((w) => w.ready));
    await s.flow.enqueueMany(Array.from({ length: jobs }, (_, n) => ({ payload: { n } })));

    // Midway, kill a process in the middle of a job; if the one picked finished its job just before
    // the signal landed, kill another, up to three times. Each gets a replacement.
    await eventually(() => s.runs().length >= jobs / 2, `${jobs / 2} handler starts`, 30_000, 20);
    const leases = new Map<string, number>();
    const killed: FlowWorker[] = [];
    for (let k = 0; k < 3 && !killed.some((w) => openRuns(s, w).length > 0); k++) {
      const victim = await eventually(() => busiestWorker(s), "a worker in the middle of a job", 10_000, 2);
      await victim.kill();
      killed.push(victim);
      s.spawnWorker();
      for (const [id, until] of await leasesUntilLapsed(s, victim)) leases.set(`${victim.config.instanceId}#${id}`, until);
    }
    const caught = killed.flatMap((w) => openRuns(s, w));
    expect(caught.length, "a killed process was running a job").toBeGreaterThan(0);

    await allSucceeded(s, jobs, 60_000);

    const runs = s.runs();
    // Every job ran to its end somewhere; the ones the killed process held ran again, in another
    // process (as a later attempt, or as the same one when the start was not written yet).
    const ended = new Set(runs.filter((r) => r.end !== null).map((r) => r.job));
    expect(ended.size).toBe(jobs);
    for (const r of caught) {
      expect(runs.some((x) => x.job === r.job && x.worker !== r.worker && x.attempt >= r.attempt && x.end !== null), `job ${r.job} re-ran`).toBe(true);
    }

    const intervals: Interval[] = runs.map((r) => {
      if (r.end !== null) return { start: r.start, end: r.end };
      const owner = killed.find((w) => w.config.instanceId === r.worker);
      // Only a killed process leaves a run unfinished: a live one ends its handler before the job can succeed.
      if (!owner) throw new Error(`a run of a live process never ended: ${JSON.stringify(r)}`);
      return { start: r.start, end: leases.get(`${r.worker}#${r.job}`) ?? owner.killedAt! + LEASE_MS };
    });
    const overlap = maxOverlap(intervals);
    const processesUsed = new Set(runs.map((r) => r.worker)).size;
    console.info(`[globalConcurrency ${label}] ${jobs} jobs, ${runs.length} runs on ${processesUsed} processes, ${caught.length} held by the killed one; max running at once ${overlap.max}`);
    expect(overlap.max, `running at once, at ${overlap.at}`).toBeLessThanOrEqual(GLOBAL);
    // The limit was what held the processes back: between them they reached it.
    expect(overlap.max).toBeGreaterThanOrEqual(GLOBAL - 1);
    expect(processesUsed).toBeGreaterThanOrEqual(processes);
  }, 90_000);
});

/** Runs of `worker` that started and never ended. */
function openRuns(s: FlowSetup, worker: FlowWorker): Run[] {
  return s.runs().filter((r) => r.worker === worker.config.instanceId && r.end === null);
}

/** The live worker whose unfinished run started last (the one most likely still running when the signal lands). */
function busiestWorker(s: FlowSetup): FlowWorker | undefined {
  const live = new Map(s.workers.filter((w) => w.alive).map((w) => [w.config.instanceId, w]));
  const open = s.runs().filter((r) => r.end === null && live.has(r.worker));
  if (open.length === 0) return undefined;
  return live.get(open.reduce((a, b) => (b.start > a.start ? b : a)).worker);
}

/**
 * The lease each job of a killed worker held when it died, read until none is running under its id
 * any more (the rescue hands them back once the lease lapses). Read over and over and the latest kept:
 * a heartbeat sent just before the kill may still commit after the first read.
 */
async function leasesUntilLapsed(s: FlowSetup, victim: FlowWorker): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  await eventually(
    async () => {
      const rows = await s.db.query<{ id: string; lease_until: string | number }>(
        `SELECT CAST(id AS TEXT) AS id, lease_until FROM tickwork_jobs WHERE queue = 'flow' AND status = 'running' AND worker_id = ?`,
        [victim.workerId],
      );
      for (const r of rows) seen.set(r.id, Math.max(seen.get(r.id) ?? 0, Number(r.lease_until)));
      return rows.length === 0;
    },
    `the jobs of killed ${victim.workerId} to be rescued`,
    LEASE_MS + 10_000,
    20,
  );
  return seen;
}
