import { describe, expect, it } from "vitest";
import { sleep } from "./fixtures/crash-job.js";
import { RESCUE_INTERVAL_MS, crashHarness } from "./fixtures/harness.js";
import { eventually, STARTUP_MS } from "./fixtures/processes.js";
import type { Target } from "./fixtures/target.js";

/**
 * How soon a SIGKILLed worker's jobs run again. The dead worker stops heartbeating, so its lease
 * ends at most one lease after the kill (heartbeats renew it to now + lease); the next rescue pass
 * of any live engine, at most one rescue interval later, puts the jobs back to pending (the attempt
 * counted for a job that started, given back for one held unstarted) and wakes that engine's
 * worker, which claims them at once. So an interrupted
 * job runs again within lease + rescue interval of the kill, plus a claim.
 *
 * With the defaults (lease 20 s, rescueInterval 5 s) that is within 30 s. This test uses a 2 s
 * lease and a 500 ms rescue interval to stay fast, and allows 3 s of slack for a loaded machine:
 * the bound checks that recovery is driven by the lease and the rescue pass, not by luck.
 */

const LEASE_MS = 2_000;
const SLACK_MS = 3_000;
/**
 * The backlog case: jobs enqueued after the held one, each working this long, on a worker of
 * concurrency 4, drain in at least BACKLOG * BACKLOG_WORK_MS / 4 = 15 s, far beyond the recovery bound.
 * A rescued job that lost its place would wait behind all of them.
 */
const BACKLOG = 3_000;
const BACKLOG_WORK_MS = 20;

describe.each<Target["kind"]>(["postgres", "sqlite"])("a worker killed mid-job on %s", (kind) => {
  const setup = crashHarness();

  it("has its jobs, running and claimed-but-not-started, running again within lease + rescue interval", async () => {
    const s = await setup(kind, { lease: `${LEASE_MS}ms` });
    // The victim (concurrency 4) claims all six in one batch: four start and stall until the kill,
    // two wait in its prefetch buffer. Re-runs do 100 ms of ordinary work.
    const jobs = await s.work.enqueueMany(Array.from({ length: 6 }, (_, n) => ({ payload: { n, workMs: 100, stall: { kind: "until-aborted" as const, ms: 60_000 } } })));
    const victim = s.spawnWorker();
    await eventually(() => victim.named("handler.holding").length === 4, "the victim to be running four jobs", STARTUP_MS);
    // The two held unstarted have their first run in the rescuer: it does ordinary work there.
    const rescuer = s.spawnWorker({ stalls: false });
    await rescuer.ready;

    const claimed = (await s.db.jobs()).filter((j) => j.status === "running" && j.workerId === victim.workerId);
    expect(claimed.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    // Four started, two held unstarted (their starts not written).
    const started = new Set(claimed.filter((j) => j.started).map((j) => j.id));
    expect(started.size).toBe(4);

    const killedAt = Date.now();
    await victim.kill();
    // Let any statement the victim sent just before dying land, then read the leases it left.
    await sleep(150);
    const leases = new Map((await s.db.jobs()).map((j) => [j.id, j.leaseUntil]));

    const final = await eventually(
      async () => {
        const rows = await s.db.jobs();
        return rows.every((j) => j.status === "succeeded") && rows;
      },
      "every job to run again and succeed",
      LEASE_MS + RESCUE_INTERVAL_MS + SLACK_MS + 10_000,
      50,
    );
    // The interrupted attempt counted; the one never started given back, so that job runs as attempt 1.
    expect(final.map((j) => j.attempts)).toEqual(final.map((j) => (started.has(j.id) ? 2 : 1)));

    const reruns = (await s.db.executions()).filter((e) => e.pid !== victim.pid);
    expect(reruns.map((e) => e.jobId).sort()).toEqual(jobs.map((j) => j.id).sort());
    for (const run of reruns) {
      expect(run.pid).toBe(rescuer.pid);
      expect(run.attempt).toBe(started.has(run.jobId) ? 2 : 1);
      // Not before the dead worker's lease lapsed...
      expect(run.startedAt).toBeGreaterThanOrEqual(leases.get(run.jobId)!);
      // ...and not much after: lease + one rescue pass, with slack.
      expect(run.startedAt - killedAt, `job ${run.jobId} ran again ${run.startedAt - killedAt} ms after the kill`).toBeLessThanOrEqual(LEASE_MS + RESCUE_INTERVAL_MS + SLACK_MS);
    }
    expect(rescuer.named("job.lease_expired").map((l) => l.id).sort()).toEqual(jobs.map((j) => j.id).sort());
  }, STARTUP_MS + 60_000);

  it(`has its job running again within lease + rescue interval, ahead of a backlog of ${BACKLOG} jobs enqueued after it`, async () => {
    const s = await setup(kind, { lease: `${LEASE_MS}ms` });
    const [held] = await s.work.enqueueMany([{ payload: { n: 0, workMs: 0, stall: { kind: "until-aborted" as const, ms: 60_000 } } }]);
    const victim = s.spawnWorker({ concurrency: 1 });
    await victim.waitFor((l) => l.event === "handler.holding" && l.id === held!.id, "the victim to hold the job", STARTUP_MS);
    await s.work.enqueueMany(Array.from({ length: BACKLOG }, (_, n) => ({ payload: { n: n + 1, workMs: BACKLOG_WORK_MS } })));
    const rescuer = s.spawnWorker();
    await rescuer.ready;
    await eventually(async () => (await s.db.query<{ n: number | string }>(`SELECT count(*) AS n FROM crash_executions`))[0]!.n !== 0, "the rescuer to work on the backlog", 10_000);

    const killedAt = Date.now();
    await victim.kill();

    const rerun = await eventually(
      async () => (await s.db.query<{ started_at: number | string }>(`SELECT started_at FROM crash_executions WHERE job_id = ? AND attempt = 2`, [held!.id]))[0],
      "the held job to run again",
      LEASE_MS + RESCUE_INTERVAL_MS + SLACK_MS,
      50,
    );
    const recoveryMs = Number(rerun.started_at) - killedAt;
    const [{ n: pending }] = (await s.db.query<{ n: number | string }>(`SELECT count(*) AS n FROM tickwork_jobs WHERE status = 'pending'`)) as [{ n: number | string }];
    const backlogBefore = (await s.db.executions()).filter((e) => e.jobId !== held!.id && e.startedAt < Number(rerun.started_at)).length;
    console.info(`${kind}: the killed worker's job ran again ${recoveryMs} ms after the kill (lease ${LEASE_MS} ms, rescue interval ${RESCUE_INTERVAL_MS} ms), after ${backlogBefore} of ${BACKLOG} backlog jobs, ${pending} still pending`);

    expect(recoveryMs).toBeLessThanOrEqual(LEASE_MS + RESCUE_INTERVAL_MS + SLACK_MS);
    // Before the backlog drained: most of it was still waiting when the rescued job ran.
    expect(Number(pending)).toBeGreaterThan(BACKLOG / 2);
    expect(backlogBefore).toBeLessThan(BACKLOG / 2);
    expect(rescuer.named("job.lease_expired").map((l) => l.id)).toContain(held!.id);
  }, STARTUP_MS + 60_000);
});
