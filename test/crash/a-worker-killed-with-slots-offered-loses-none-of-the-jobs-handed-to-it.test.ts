import { describe, expect, it } from "vitest";
import { RESCUE_INTERVAL_MS, crashHarness } from "./fixtures/harness.js";
import { eventually, STARTUP_MS } from "./fixtures/processes.js";

const LEASE_MS = 2_000;
const SLACK_MS = 10_000;

/**
 * An idle worker offers its free slots to other processes' enqueues, which write their jobs running
 * under its lease (a hand-off across processes). Killed with its offer standing, it strands the jobs
 * enqueued into its slots before the offer lapses; they must come back like any job of a dead worker:
 * when their lease lapses, by the next rescue pass of a live engine. No handler started them, so they
 * have spent no attempt: on a queue of maxAttempts 1 each still runs, once.
 */
describe("a worker killed with slots offered (PostgreSQL)", () => {
  const setup = crashHarness();

  it("loses none of the jobs enqueued into its slots: each runs once, elsewhere, after its lease", async () => {
    const s = await setup("postgres", { lease: `${LEASE_MS}ms`, maxAttempts: 1 });
    const victim = s.spawnWorker();
    await victim.ready;
    const offered = async () =>
      (await s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM tickwork_offers WHERE worker_id = ? AND until > ?`, [victim.workerId, Date.now()]))[0]!.n;
    await eventually(async () => (await offered()) === 4, "the idle victim to offer its four slots", STARTUP_MS);

    await victim.kill();
    // Enqueued after the kill, while the offer stands: written running under the dead worker's lease.
    const jobs = await Promise.all(Array.from({ length: 4 }, (_, n) => s.work.enqueue({ n, workMs: 10 })));
    const handed = jobs.filter((job) => job.status === "running" && job.lease?.workerId === victim.workerId);
    expect(handed.length, "jobs handed to the dead worker").toBeGreaterThan(0);
    const rows = new Map((await s.db.jobs()).map((row) => [row.id, row]));
    for (const job of handed) expect(rows.get(job.id)).toMatchObject({ status: "running", workerId: victim.workerId, attempts: 1, started: false });

    const rescuer = s.spawnWorker();
    await rescuer.ready;
    await eventually(
      async () => {
        const now = await s.db.jobs();
        return now.length === jobs.length && now.every((job) => job.status === "succeeded");
      },
      "every job to run and succeed",
      LEASE_MS + RESCUE_INTERVAL_MS + SLACK_MS,
      50,
    );
    // Each ran exactly once, in the live worker.
    const executions = await s.db.executions();
    expect(executions.map((e) => e.jobId).sort()).toEqual(jobs.map((j) => j.id).sort());
    expect(new Set(executions.map((e) => e.pid))).toEqual(new Set([rescuer.pid]));
    expect(executions.map((e) => e.attempt)).toEqual(jobs.map(() => 1));
    for (const job of await s.db.jobs()) expect(job.attempts, `job ${job.id}'s attempts`).toBe(1);
    // Past the deadlines above (the offer's 20 s, the run's, two spawns) with room for the setup.
  }, STARTUP_MS + LEASE_MS + RESCUE_INTERVAL_MS + SLACK_MS + 2 * 30_000 + 30_000);
});
