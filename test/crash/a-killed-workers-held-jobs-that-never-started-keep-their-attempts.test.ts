import { describe, expect, it } from "vitest";
import { RESCUE_INTERVAL_MS, crashHarness } from "./fixtures/harness.js";
import { eventually, STARTUP_MS } from "./fixtures/processes.js";
import type { Target } from "./fixtures/target.js";

const LEASE_MS = 2_000;
const SLACK_MS = 15_000;

/**
 * A worker claims ahead of its free slots: with 2 slots and slow jobs it holds 4, 2 running and 2
 * prefetched. Killed with SIGKILL, on a queue of maxAttempts 1, the 2 that ran have spent their only
 * attempt and fail for good ("lease expired"); the 2 it held but never started have spent nothing,
 * so they run elsewhere, once, as attempt 1. A job no handler started never fails for lack of
 * attempts.
 */
describe.each<Target["kind"]>(["postgres", "sqlite"])("a killed worker's prefetched jobs (%s)", (kind) => {
  const setup = crashHarness();

  it("come back with the attempt they never started and run once elsewhere; the jobs it was running fail on their only attempt", async () => {
    const s = await setup(kind, { lease: `${LEASE_MS}ms`, maxAttempts: 1 });
    const victim = s.spawnWorker({ concurrency: 2, workMs: [60_000, 60_000] });
    await victim.ready;
    // A minute each in the victim, 10 ms in the rescuer.
    const jobs = await s.work.enqueueMany(Array.from({ length: 4 }, (_, n) => ({ payload: { n } })));

    // Two running (their executions recorded), two held by the same worker and not started.
    const held = await eventually(
      async () => {
        const rows = (await s.db.jobs()).filter((j) => j.status === "running" && j.workerId === victim.workerId);
        const ran = await s.db.executions();
        return rows.length === 4 && ran.length === 2 && rows;
      },
      "the victim to run 2 jobs and hold 2 more",
      STARTUP_MS,
    );
    expect(held.filter((j) => j.started)).toHaveLength(2);
    const notStarted = held.filter((j) => !j.started).map((j) => j.id).sort();
    expect(notStarted).toHaveLength(2);
    const started = held.filter((j) => j.started).map((j) => j.id).sort();
    expect((await s.db.executions()).map((e) => e.jobId).sort()).toEqual(started);

    await victim.kill();
    const rescuer = s.spawnWorker({ concurrency: 2, workMs: [10, 10] });
    await rescuer.ready;
    const final = await eventually(
      async () => {
        const rows = await s.db.jobs();
        return rows.length === jobs.length && rows.every((j) => j.status === "succeeded" || j.status === "failed") && rows;
      },
      "every job to end",
      LEASE_MS + RESCUE_INTERVAL_MS + SLACK_MS,
      50,
    );
    const byId = new Map(final.map((j) => [j.id, j]));
    for (const id of started) expect(byId.get(id), `job ${id}, started by the victim`).toMatchObject({ status: "failed", attempts: 1 });
    for (const id of notStarted) expect(byId.get(id), `job ${id}, held unstarted by the victim`).toMatchObject({ status: "succeeded", attempts: 1 });
    // The held jobs ran once, in the rescuer, as their first attempt; the victim's ran once, there.
    const executions = await s.db.executions();
    for (const id of notStarted) expect(executions.filter((e) => e.jobId === id).map((e) => [e.pid, e.attempt])).toEqual([[rescuer.pid, 1]]);
    for (const id of started) expect(executions.filter((e) => e.jobId === id).map((e) => [e.pid, e.attempt])).toEqual([[victim.pid, 1]]);
  }, STARTUP_MS + LEASE_MS + RESCUE_INTERVAL_MS + SLACK_MS + 2 * 30_000 + 30_000);
});
