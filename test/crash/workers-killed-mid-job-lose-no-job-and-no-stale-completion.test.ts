import { describe, expect, it } from "vitest";
import { sleep } from "./fixtures/crash-job.js";
import { crashHarness, type CrashSetup } from "./fixtures/harness.js";
import { eventually, type WorkerProcess } from "./fixtures/processes.js";
import type { Execution, Target } from "./fixtures/target.js";

/**
 * Real worker processes run a queue while the test kills them with SIGKILL in the middle of jobs
 * and starts replacements. Whatever a killed worker held (jobs running, jobs claimed but not yet
 * started) must come back once its lease lapses, run again and succeed: an interrupted attempt
 * counted, a held one that never started given back; and no worker that lost a job may be the one
 * whose completion the job accepted.
 */

const LEASE_MS = 2_000;

interface Case {
  kind: Target["kind"];
  jobs: number;
  killEveryMs: number;
}

const CASES: Case[] = [
  { kind: "postgres", jobs: 200, killEveryMs: 400 },
  // SQLite runs fewer jobs (one file, one writer at a time) and polls; kills come a little sooner.
  { kind: "sqlite", jobs: 60, killEveryMs: 300 },
];
const KILLS = 3;

/** A job a killed worker held at the moment it died. */
interface Held {
  id: string;
  attempt: number;
  leaseUntil: number;
  killedAt: number;
  /** Its handler had started (its row said so); otherwise it was only claimed. */
  started: boolean;
  pid: number;
}

describe.each(CASES)("workers killed mid-job on $kind", ({ kind, jobs, killEveryMs }) => {
  const setup = crashHarness();

  it(`runs all ${jobs} jobs to success with each killed attempt counted and no stale completion accepted`, async () => {
    const s = await setup(kind, { lease: `${LEASE_MS}ms` });
    const first = [s.spawnWorker(), s.spawnWorker(), s.spawnWorker()];
    await Promise.all(first.map((w) => w.ready));
    await s.work.enqueueMany(Array.from({ length: jobs }, (_, n) => ({ payload: { n } })));

    const killed: WorkerProcess[] = [];
    const killedAt = new Map<number, number>();
    const held: Held[] = [];
    for (let k = 0; k < KILLS; k++) {
      await sleep(killEveryMs);
      const victim = await pickWorkerMidJob(s);
      if (!victim) continue;
      const at = Date.now();
      await victim.kill();
      killed.push(victim);
      killedAt.set(victim.pid, at);
      // A statement the victim sent just before dying may still commit on the server: let it land,
      // well inside the lease (heartbeats keep it at least 1.5 s ahead), before reading what it held.
      await sleep(150);
      for (const job of (await s.db.jobs()).filter((j) => j.status === "running" && j.workerId === victim.workerId)) {
        held.push({ id: job.id, attempt: job.attempts, leaseUntil: job.leaseUntil!, killedAt: at, started: job.started, pid: victim.pid });
      }
      s.spawnWorker();
    }

    const final = await eventually(
      async () => {
        const rows = await s.db.jobs();
        return rows.every((j) => j.status === "succeeded") && rows;
      },
      `all ${jobs} jobs to succeed`,
      60_000,
      200,
    ).catch(async (error: Error) => {
      const counts: Record<string, number> = {};
      for (const j of await s.db.jobs()) counts[j.status] = (counts[j.status] ?? 0) + 1;
      throw new Error(`${error.message}; jobs by status: ${JSON.stringify(counts)}`);
    });

    // None lost: every job enqueued is there and succeeded, and each was accepted exactly once.
    expect(final).toHaveLength(jobs);
    const executions = await s.db.executions();
    const effects = await s.db.effects();
    const succeededEvents = s.children.all.flatMap((w) => w.named("job.succeeded").map((l) => String(l.id)));
    expect(new Set(succeededEvents).size, "a job accepted two completions").toBe(succeededEvents.length);

    // The kills really interrupted work: some killed worker held jobs, and there were re-runs.
    expect(killed.length).toBeGreaterThan(0);
    expect(held.length).toBeGreaterThan(0);
    expect(executions.length).toBeGreaterThan(jobs);

    const byJob = new Map<string, Execution[]>();
    for (const e of executions) byJob.set(e.jobId, [...(byJob.get(e.jobId) ?? []), e]);
    const effectKeys = new Set(effects.map((e) => `${e.jobId}#${e.attempt}`));
    const attemptsOf = new Map(final.map((j) => [j.id, j.attempts]));

    for (const job of final) {
      const runs = byJob.get(job.id) ?? [];
      // The attempt the job accepted is its latest run: a worker that lost the job (a stale
      // attempt) never had its completion accepted after a newer attempt started.
      expect(Math.max(...runs.map((r) => r.attempt)), `job ${job.id}: accepted attempt vs latest run`).toBe(job.attempts);
      // ...and the accepted run did its work.
      expect(effectKeys.has(`${job.id}#${job.attempts}`), `job ${job.id}: effect of accepted attempt ${job.attempts}`).toBe(true);
    }

    for (const h of held) {
      const attempts = attemptsOf.get(h.id)!;
      const runs = byJob.get(h.id) ?? [];
      if (h.started) {
        // The killed attempt counted: the job ran again under a later attempt...
        expect(attempts, `job ${h.id} held by a killed worker at attempt ${h.attempt}`).toBeGreaterThanOrEqual(h.attempt + 1);
        expect(attempts).toBeGreaterThanOrEqual(2);
      } else {
        // Its start not written when the worker died (held, never started; or started within the few
        // milliseconds before its start was written): the attempt came back, and the job ran as that
        // attempt in another process...
        expect(runs.some((r) => r.pid !== h.pid && r.attempt === h.attempt), `job ${h.id} held unstarted at attempt ${h.attempt} ran as that attempt elsewhere`).toBe(true);
      }
      // ...and only once the dead worker's lease had lapsed. A run by a worker killed before this one,
      // started before its own kill, is no re-run of this: it is that earlier holder's run of the
      // attempt it gave back when its start was not yet written, before this worker claimed the job.
      const earlier = (r: Execution) => r.startedAt <= (killedAt.get(r.pid) ?? -Infinity) && killedAt.get(r.pid)! < h.killedAt;
      const reruns = runs.filter((r) => r.pid !== h.pid && r.attempt >= h.attempt && !earlier(r));
      expect(reruns.length, `job ${h.id} re-ran`).toBeGreaterThan(0);
      expect(Math.min(...reruns.map((r) => r.startedAt)), `job ${h.id} re-ran before its lease lapsed`).toBeGreaterThanOrEqual(h.leaseUntil);
    }
  }, 90_000);
});

/** A live worker, at random, with at least one handler started and not yet finished (its execution recorded, no effect yet). */
async function pickWorkerMidJob(s: CrashSetup): Promise<WorkerProcess | undefined> {
  for (let tries = 0; tries < 50; tries++) {
    const rows = await s.db.query<{ worker_id: string }>(
      `SELECT DISTINCT j.worker_id FROM tickwork_jobs j
       JOIN crash_executions e ON e.job_id = CAST(j.id AS TEXT) AND e.attempt = j.attempts
       WHERE j.status = 'running'
         AND NOT EXISTS (SELECT 1 FROM crash_effects f WHERE f.job_id = e.job_id AND f.attempt = e.attempt)`,
    );
    const busy = new Set(rows.map((r) => r.worker_id));
    const candidates = s.children.alive.filter((w) => busy.has(w.workerId));
    if (candidates.length) return candidates[Math.floor(Math.random() * candidates.length)];
    await sleep(20);
  }
  return undefined;
}
