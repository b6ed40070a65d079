import { describe, expect, it } from "vitest";
import { systemClock, type Clock } from "../../src/core/clock.js";
import { postgres } from "../../src/store/postgres.js";
import { eventually, realEngines } from "../support/real-time.js";
import { DATABASE_URL, dropSchema, uniqueSchema, withPg } from "../support/stores.js";

/**
 * An enqueue in one process may write its jobs running under the lease of another process's idle
 * worker (a hand-off). The lease is the worker's to keep, so it runs from the worker's clock: a
 * producer whose clock is behind must not write leases that have lapsed already, which the rescuer
 * would take back at once and run a second time.
 */
describe("a handed job's lease (PostgreSQL)", () => {
  const schema = uniqueSchema();
  const engine = realEngines({ afterStop: () => dropSchema(schema) });
  const offered = (workerId: string) =>
    withPg(async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM tickwork_offers WHERE worker_id = $1 AND until > $2`, [workerId, Date.now()])).rows[0]!.n, schema);

  it("a producer 8 s behind hands 12 jobs to a worker with a 5 s lease: each lease ends after the worker's now, each job runs once", async () => {
    const ran = new Map<string, number>();
    const worker = await engine({ store: postgres({ url: DATABASE_URL, schema }), rescueInterval: "1s" });
    worker.tw.queue("thumbnails", { concurrency: 12, lease: "5s", handler: (job) => void ran.set(job.id, (ran.get(job.id) ?? 0) + 1) });
    await worker.tw.start();
    const workerId = `${worker.tw.instanceId}/thumbnails`;
    await eventually(async () => (await offered(workerId)) === 12, "the idle worker to offer its 12 slots", 10_000);

    const behind: Clock = { ...systemClock, now: () => Date.now() - 8_000 };
    const producer = await engine({ store: postgres({ url: DATABASE_URL, schema }), clock: behind });
    const jobs = await producer.tw.queue("thumbnails").enqueueMany(Array.from({ length: 12 }, (_, n) => ({ payload: { n } })));
    const handed = jobs.filter((j) => j.lease?.workerId === workerId);
    expect(handed.length).toBeGreaterThan(0);
    const now = Date.now();
    for (const job of handed) expect(job.lease!.until, `job ${job.id}'s lease end against the worker's now`).toBeGreaterThan(now + 2_000);

    await eventually(async () => (await Promise.all(jobs.map((j) => worker.tw.jobs.get(j.id)))).every((j) => j?.status === "succeeded"), "every job to succeed", 15_000);
    expect([...ran.values()].every((n) => n === 1)).toBe(true);
    expect(ran.size).toBe(12);
    expect(worker.named("job.lease_expired")).toEqual([]);
  });
});
