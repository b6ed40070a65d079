import pg from "pg";
import { describe, expect, it } from "vitest";
import { postgres, type PostgresPool } from "../../src/store/postgres.js";
import { DATABASE_URL, dropSchema, uniqueSchema, withPg } from "../support/stores.js";
import { deferred, eventually, realEngines } from "../support/real-time.js";

/**
 * An idle worker offers its free slots (tickwork_offers); an enqueue in another engine takes them and
 * writes its jobs running under that worker's lease, and the worker runs them from the notification
 * without a claim. The two engines stand for two processes: each has its own pool, listener and id.
 */
describe("PostgreSQL: hand-offs across processes", () => {
  const schema = uniqueSchema();
  const engine = realEngines({ afterStop: () => dropSchema(schema) });

  /** A consumer engine running `queue` (concurrency 3), idle and offering its slots, and a producer engine. */
  async function engines(ran: Map<string, number[]>, pool?: PostgresPool) {
    // Polls and rescues an hour apart: a job runs because it was handed over or announced, not polled.
    const consumer = await engine({ store: postgres(pool ? { pool } : { url: DATABASE_URL, schema }), pollInterval: "1h", rescueInterval: "1h" });
    consumer.tw.queue<{ n: number }>("mail", {
      concurrency: 3,
      lease: "1h",
      handler: (job, ctx) => void ran.set(job.id, [...(ran.get(job.id) ?? []), ctx.attempt]),
    });
    await consumer.tw.start();
    const producer = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    const workerId = `${consumer.tw.instanceId}/mail`;
    await eventually(() => offered(workerId).then((n) => n === 3), "the idle consumer to offer its three slots");
    return { consumer, producer, workerId, mail: producer.tw.queue<{ n: number }>("mail") };
  }

  const offered = (workerId: string) =>
    withPg(async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM tickwork_offers WHERE worker_id = $1 AND until > $2`, [workerId, Date.now()])).rows[0]!.n, schema);

  it("writes a job running under the idle worker's lease at its enqueue, and the worker runs it once", async () => {
    const ran = new Map<string, number[]>();
    const { producer, workerId, mail } = await engines(ran);

    const job = await mail.enqueue({ n: 1 });
    expect(job).toMatchObject({ status: "running", attempts: 1, lease: { workerId } });
    // Written running under the worker's lease but not started: the worker writes its start before
    // its handler runs, so a worker that dies first gives the attempt back.
    expect(job.startedAt).toBeNull();
    await eventually(() => ran.has(job.id), "the handed job to run");
    const done = await eventually(async () => {
      const row = await producer.tw.jobs.get(job.id);
      return row?.status === "succeeded" && row;
    }, "the handed job to succeed");
    // Started by the worker it was handed to (no claim moves a running job), after its enqueue.
    expect(done.startedAt).toBeGreaterThanOrEqual(done.createdAt);
    expect(ran.get(job.id)).toEqual([1]);
  });

  it("fills the offered slots with part of a burst and leaves the rest pending for a claim: every job runs once", async () => {
    const ran = new Map<string, number[]>();
    const { mail } = await engines(ran);

    const jobs = await Promise.all(Array.from({ length: 40 }, (_, n) => mail.enqueue({ n })));
    const handed = jobs.filter((j) => j.status === "running");
    expect(handed.length).toBeGreaterThan(0);
    expect(handed.length).toBeLessThan(jobs.length);
    await eventually(() => ran.size === jobs.length, "all 40 jobs to run", 15_000);
    expect([...ran.values()].every((attempts) => attempts.length === 1 && attempts[0] === 1)).toBe(true);
  });

  it("runs a job handed while its listening connection was down, once: the worker looks for jobs written for it", async () => {
    const ran = new Map<string, number[]>();
    // The consumer's connections carry a name of their own, so the test cuts its listener and no other.
    const name = `tw-${schema}`;
    await withPg((c) => c.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`));
    const pool = new pg.Pool({ connectionString: DATABASE_URL, application_name: name, options: `-c search_path="${schema}"` });
    const { consumer, workerId, mail } = await engines(ran, pool);
    try {
      // The consumer's LISTEN connection is cut; the job is handed before it reconnects, so its
      // notification goes nowhere.
      const cut = await withPg((c) => c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN %'`, [name]));
      expect(cut.rowCount).toBe(1);
      const job = await mail.enqueue({ n: 1 });
      expect(job).toMatchObject({ status: "running", lease: { workerId } });
      await eventually(() => ran.has(job.id), "the job handed while the listener was down to run", 10_000);
      expect(ran.get(job.id)).toEqual([1]);
    } finally {
      await consumer.tw.stop();
      await pool.end();
    }
  });

  it("withdraws the slots a worker filled some other way: an enqueue elsewhere then stays pending", async () => {
    const release = deferred();
    const consumer = await engine({ store: postgres({ url: DATABASE_URL, schema }), pollInterval: "1h", rescueInterval: "1h" });
    const local = consumer.tw.queue<{ n: number }>("mail", { concurrency: 3, lease: "1h", handler: () => release.promise });
    await consumer.tw.start();
    const producer = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    const workerId = `${consumer.tw.instanceId}/mail`;
    try {
      await eventually(() => offered(workerId).then((n) => n === 3), "the idle consumer to offer its three slots");
      // Three jobs enqueued beside the worker fill its slots by the same-process hand-off.
      expect((await Promise.all([1, 2, 3].map((n) => local.enqueue({ n })))).map((j) => j.status)).toEqual(["running", "running", "running"]);
      await eventually(() => offered(workerId).then((n) => n === 0), "the full worker to withdraw its offer");
      expect(await producer.tw.queue<{ n: number }>("mail").enqueue({ n: 4 })).toMatchObject({ status: "pending" });
    } finally {
      release.resolve();
    }
  });

  it("withdraws the offer when the worker stops: later enqueues stay pending", async () => {
    const ran = new Map<string, number[]>();
    const { consumer, workerId, mail } = await engines(ran);
    await consumer.tw.stop();
    expect(await offered(workerId)).toBe(0);
    expect(await mail.enqueue({ n: 1 })).toMatchObject({ status: "pending", lease: null });
  });
});
