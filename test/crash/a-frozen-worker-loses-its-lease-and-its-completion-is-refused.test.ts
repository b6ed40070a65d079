import { describe, expect, it } from "vitest";
import type { Job } from "../../src/queue/job.js";
import { sleep } from "./fixtures/crash-job.js";
import { crashHarness, type CrashSetup } from "./fixtures/harness.js";
import { eventually, type WorkerProcess, STARTUP_MS } from "./fixtures/processes.js";
import type { Target } from "./fixtures/target.js";

/**
 * Fencing with real processes. Worker A (a child process) claims a job and is frozen with SIGSTOP,
 * so it neither heartbeats nor finishes, past its lease. This process's engine rescues the job by
 * `tick()` and completes it as attempt 2. Then A is resumed with SIGCONT and carries on as if nothing
 * happened: whatever it reports for attempt 1 must be refused, and the job must stay as attempt 2
 * left it.
 */

describe.each<Target["kind"]>(["postgres", "sqlite"])("a worker frozen past its lease on %s", (kind) => {
  const setup = crashHarness();

  it("has the success it reports after thawing refused: the job stays succeeded by the attempt that rescued it", async () => {
    // A 3 s lease puts A's first heartbeat 750 ms after its claim, well after its 300 ms stall ends.
    // When A thaws, both timers are overdue and Node fires the earlier first: the stall ends, the
    // handler returns and A reports success before its heartbeat could abort the attempt. So the
    // refusal below is the store's fence turning down a real completion, not the worker giving up.
    const s = await setup(kind, { lease: "3s", runsJobs: true });
    for (let round = 1; ; round++) {
      const job = await s.work.enqueue({ stall: { kind: "then-succeed", ms: 300 } });
      const a = s.spawnWorker({ lease: "3s", concurrency: 1 });
      await a.waitFor((l) => l.event === "handler.holding" && l.id === job.id, "handler.holding", STARTUP_MS);
      await freezeHoldingNoLock(a, s);

      const rescued = await rescueAndComplete(s, job.id);
      if (rescued.attempts === 1) {
        // A finished before the freeze landed (a very slow machine): its success was rightly
        // accepted, so this round shows nothing. Try again with a new job and a new worker.
        expect(round, "A completed before it could be frozen, three times").toBeLessThan(3);
        await a.kill();
        continue;
      }
      expect(rescued).toMatchObject({ status: "succeeded", attempts: 2 });
      expect(s.events.filter((e) => e.event === "job.lease_expired" && e.id === job.id)).toEqual([
        expect.objectContaining({ attempts: 1, status: "pending" }),
      ]);

      a.thaw();
      const refused = await a.waitFor((l) => l.event === "job.outcome_refused" && l.id === job.id, "job.outcome_refused");
      expect(refused).toMatchObject({ outcome: "succeeded", attempt: 1 });
      expect(a.named("job.succeeded", job.id)).toEqual([]);

      expect(await s.tw.jobs.get(job.id)).toMatchObject({ status: "succeeded", attempts: 2, finishedAt: rescued.finishedAt });
      // A's side effect did happen (at-least-once: handlers must be idempotent), but the job
      // accepted attempt 2, run here.
      expect(sortRuns(await s.db.effects())).toEqual([
        { jobId: job.id, attempt: 1, pid: a.pid },
        { jobId: job.id, attempt: 2, pid: process.pid },
      ]);
      return;
    }
  }, STARTUP_MS + 60_000);

  it("aborts the handler's signal when its heartbeat finds the lease lost, and refuses the attempt's outcome", async () => {
    const s = await setup(kind, { lease: "2s", runsJobs: true });
    const job = await s.work.enqueue({ stall: { kind: "until-aborted", ms: 30_000 } });
    const a = s.spawnWorker({ concurrency: 1 });
    await a.waitFor((l) => l.event === "handler.holding" && l.id === job.id, "handler.holding", STARTUP_MS);
    await freezeHoldingNoLock(a, s);

    const rescued = await rescueAndComplete(s, job.id);
    expect(rescued).toMatchObject({ status: "succeeded", attempts: 2 });

    a.thaw();
    // A's overdue heartbeat no longer finds the job held by A: the attempt's signal is aborted.
    const aborted = await a.waitFor((l) => l.event === "handler.aborted" && l.id === job.id, "handler.aborted");
    expect(aborted).toMatchObject({ attempt: 1, aborted: true, reason: "TW_JOB_LEASE_LOST" });
    expect(a.named("job.lease_lost", job.id)).toEqual([expect.objectContaining({ attempt: 1 })]);
    // The handler returned normally anyway; what the worker reports for attempt 1 is refused.
    const refused = await a.waitFor((l) => l.event === "job.outcome_refused" && l.id === job.id, "job.outcome_refused");
    expect(refused).toMatchObject({ attempt: 1 });
    expect(a.named("job.succeeded", job.id)).toEqual([]);

    expect(await s.tw.jobs.get(job.id)).toMatchObject({ status: "succeeded", attempts: 2, finishedAt: rescued.finishedAt });
    expect(sortRuns(await s.db.effects())).toEqual([
      { jobId: job.id, attempt: 1, pid: a.pid },
      { jobId: job.id, attempt: 2, pid: process.pid },
    ]);
  }, STARTUP_MS + 60_000);
});

/**
 * SIGSTOP, retried until the frozen worker holds no write lock: a SQLite process frozen inside one
 * of its own (sub-millisecond) write transactions would block every other writer until it thaws.
 */
async function freezeHoldingNoLock(worker: WorkerProcess, s: CrashSetup): Promise<void> {
  for (let tries = 0; tries < 20; tries++) {
    await worker.freeze();
    if (await s.db.writable()) return;
    worker.thaw();
    await sleep(5);
  }
  throw new Error(`worker ${worker.pid} kept holding the write lock`);
}

/** Ticks this process's engine until the job has succeeded: once A's lease lapses, the tick rescues it and runs it. */
async function rescueAndComplete(s: CrashSetup, id: string): Promise<Job> {
  return eventually(
    async () => {
      await s.tw.tick();
      const job = await s.tw.jobs.get(id);
      return job?.status === "succeeded" && job;
    },
    `job ${id} to be rescued and completed here`,
    15_000,
    100,
  );
}

function sortRuns<T extends { attempt: number }>(rows: T[]): T[] {
  return [...rows].sort((a, b) => a.attempt - b.attempt);
}
