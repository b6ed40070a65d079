import pg from "pg";
import { describe, expect, it } from "vitest";
import type { Queue } from "../../src/queue/queue.js";
import type { JobOutcome } from "../../src/queue/store/store.js";
import { postgres } from "../../src/store/postgres.js";
import type { Store } from "../../src/store/store.js";
import { eventually, realEngines, type RealEngine } from "../support/real-time.js";
import { DATABASE_URL, dropSchema, uniqueSchema, withPg } from "../support/stores.js";

/**
 * A settle that ends flow children counts them in their parents, locking each parent's row. Three
 * engines (three processes' worth of pools and batches) settle children of the same 30 parents at
 * once, their outcomes batched in whatever order their handlers finished: the parents are locked in
 * id order, so no two settles wait on each other in a circle (PostgreSQL's "deadlock detected"),
 * no outcome is lost to one, and every parent runs once, after all its children.
 */
describe("PostgreSQL: settles of many flows' children at once", () => {
  const schema = uniqueSchema();
  const engine = realEngines({ afterStop: () => dropSchema(schema) });

  it("30 parents of 12 children each, settled by three engines: no deadlock, every parent runs once after its children", async () => {
    const PARENTS = 30;
    const CHILDREN = 12;
    const engines: RealEngine[] = [];
    let sum: Queue | undefined;
    const parentRuns = new Map<string, number>();
    const childEnds = new Map<string, number>();
    for (let i = 0; i < 3; i++) {
      const e = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
      e.tw.queue<{ n: number }>("leaf", {
        concurrency: 8,
        // A few milliseconds of work, drawn per job, so each batch's outcomes come in a mixed order of parents.
        handler: async (job) => {
          await new Promise((resolve) => setTimeout(resolve, (Number(job.id) * 7) % 5));
          childEnds.set(job.id, Date.now());
        },
      });
      const sumQueue = e.tw.queue("sum", {
        concurrency: 4,
        handler: async (job, ctx) => {
          parentRuns.set(job.id, (parentRuns.get(job.id) ?? 0) + 1);
          return { children: (await ctx.childResults()).filter((c) => c.status === "succeeded").length };
        },
      });
      engines.push(e);
      if (i === 0) sum = sumQueue;
    }
    const flows = await Promise.all(
      Array.from({ length: PARENTS }, (_, p) => sum!.enqueueFlow({ payload: { p }, children: Array.from({ length: CHILDREN }, (_, n) => ({ queue: "leaf", payload: { n } })) })),
    );
    await Promise.all(engines.map((e) => e.tw.start()));

    const admin = engines[0]!.tw;
    await eventually(async () => (await Promise.all(flows.map((f) => admin.jobs.get(f.id)))).every((j) => j?.status === "succeeded"), "every parent to succeed", 60_000);
    const errors = engines.flatMap((e) => e.named("store.error"));
    expect(errors.filter((e) => /deadlock/i.test(String(e.error)))).toEqual([]);
    expect(errors).toEqual([]);
    expect(engines.flatMap((e) => e.named("job.outcome_refused"))).toEqual([]);
    for (const flow of flows) {
      expect(parentRuns.get(flow.id), `runs of parent ${flow.id}`).toBe(1);
      expect(await admin.jobs.get(flow.id)).toMatchObject({ result: { children: CHILDREN }, children: { total: CHILDREN, pending: 0, failed: 0 } });
    }
    expect(childEnds.size).toBe(PARENTS * CHILDREN);
  });

  it("two settles that count children of parents A and B in opposite orders, released together from a lock on A, both commit", async () => {
    const { tw } = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    tw.queue("leaf", {});
    const sum = tw.queue("sum", {});
    const [a, b] = await Promise.all([0, 1].map((p) => sum.enqueueFlow({ payload: { p }, children: [{ queue: "leaf", payload: {} }, { queue: "leaf", payload: {} }] })));
    const stores: Store[] = [postgres({ url: DATABASE_URL, schema }), postgres({ url: DATABASE_URL, schema })];
    const blocker = new pg.Client({ connectionString: DATABASE_URL, options: `-c search_path="${schema}"` });
    await blocker.connect();
    try {
      const now = Date.now();
      const claimed = await stores[0]!.queue.claimDue({ queue: "leaf", limit: 10, now, leaseUntil: now + 60_000, workerId: "w" });
      const child = (parent: string, n: number): JobOutcome => {
        const job = claimed.filter((j) => j.parentId === parent)[n]!;
        return { kind: "succeeded", id: job.id, attempt: job.attempts, parent };
      };
      const waiting = () => withPg(async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)).rows[0]!.n);

      // A third party holds parent A. The first settle counts A, then B: it waits on A, holding nothing.
      await blocker.query("BEGIN");
      await blocker.query("SELECT id FROM tickwork_jobs WHERE id = $1 FOR UPDATE", [a!.id]);
      const first = stores[0]!.queue.settleMany({ workerId: "w", outcomes: [child(a!.id, 0), child(b!.id, 0)], now });
      await eventually(async () => (await waiting()) === 1, "the first settle to wait on parent A");
      // The second counts B first, then A: unless the parents are taken in one order, it holds B and
      // waits on A behind the first, which then waits on B: a circle PostgreSQL breaks by failing one.
      const second = stores[1]!.queue.settleMany({ workerId: "w", outcomes: [child(b!.id, 1), child(a!.id, 1)], now });
      await eventually(async () => (await waiting()) === 2, "the second settle to wait too");
      await blocker.query("COMMIT");

      const settled = await Promise.allSettled([first, second]);
      expect(settled.map((r) => (r.status === "rejected" ? String(r.reason) : "committed"))).toEqual(["committed", "committed"]);
      for (const parent of [a!, b!]) expect(await tw.jobs.get(parent.id)).toMatchObject({ status: "pending", children: { total: 2, pending: 0, failed: 0 } });
    } finally {
      await blocker.end();
      await Promise.all(stores.map((store) => store.close()));
    }
  });
});
