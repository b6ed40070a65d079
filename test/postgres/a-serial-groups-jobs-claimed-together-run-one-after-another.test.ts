import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import type { Job } from "../../src/queue/job.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";
import { deferred, eventually, realEngines } from "../support/real-time.js";

/**
 * Under groupConcurrency 1, a worker of jobs faster than a claim's round trip takes several jobs of a
 * group in one claim (so a claim walks fewer groups for as many jobs) and runs them one after
 * another: no two jobs of a group ever run at once, here or in another engine.
 */
describe("PostgreSQL: a serial group's jobs claimed together", () => {
  const schema = uniqueSchema();
  const engine = realEngines({ afterStop: () => dropSchema(schema) });

  it("are handed to one worker and run one after another, across 2 engines, each group in enqueue order", async () => {
    const groups = 40;
    const perGroup = 12;
    const running = new Map<string, number>();
    const overlaps: string[] = [];
    const ran = new Map<string, number[]>();
    const claims = new Map<string, Set<string>>();
    const handler = async (job: Job<{ tenant: string; n: number }>) => {
      const group = job.group!;
      if ((running.get(group) ?? 0) > 0) overlaps.push(group);
      running.set(group, (running.get(group) ?? 0) + 1);
      ran.set(group, [...(ran.get(group) ?? []), job.payload.n]);
      // Jobs one claim started share their start time and worker.
      const claim = `${job.lease!.workerId}@${job.startedAt}`;
      claims.set(claim, (claims.get(claim) ?? new Set()).add(`${group}#${job.payload.n}`));
      // Yields to the event loop, so another job that started beside this one would be seen above.
      await new Promise((resolve) => setImmediate(resolve));
      running.set(group, running.get(group)! - 1);
    };
    const engines = await Promise.all([0, 1].map(() => engine({ store: postgres({ url: DATABASE_URL, schema }), pollInterval: "1h" })));
    const queues = engines.map(({ tw }) => tw.queue<{ tenant: string; n: number }>("work", { concurrency: 4, groupConcurrency: 1, group: (p) => p.tenant, handler }));
    // Group after group, so the ids (the claim order within a group) follow n.
    await queues[0]!.enqueueMany(
      Array.from({ length: groups * perGroup }, (_, i) => ({ payload: { tenant: `t${Math.floor(i / perGroup)}`, n: i % perGroup } })),
    );
    await Promise.all(engines.map(({ tw }) => tw.start()));
    await eventually(async () => (await engines[0]!.tw.jobs.counts("work"))[0]?.counts.succeeded === groups * perGroup, "every job to succeed", 30_000);

    expect(overlaps).toEqual([]);
    expect(ran.size).toBe(groups);
    for (const order of ran.values()) expect(order).toEqual(Array.from({ length: perGroup }, (_, n) => n));
    // Some claim carried more than one job of a group: the jobs of a group it held ran in turn.
    const together = [...claims.values()].map((jobs) => {
      const byGroup = new Map<string, number>();
      for (const job of jobs) byGroup.set(job.split("#")[0]!, (byGroup.get(job.split("#")[0]!) ?? 0) + 1);
      return Math.max(...byGroup.values());
    });
    expect(Math.max(...together)).toBeGreaterThan(1);
    expect(Math.max(...together)).toBeLessThanOrEqual(4);
  });

  it("are handed back to pending when their group is paused here, but for the one running, and run after the resume", async () => {
    const { tw, events } = await engine({ store: postgres({ url: DATABASE_URL, schema }), pollInterval: "1h" });
    const gate = deferred();
    const startedA: number[] = [];
    const q = tw.queue<{ tenant: string; n: number }>("work", {
      concurrency: 4,
      groupConcurrency: 1,
      group: (p) => p.tenant,
      handler: async (job) => {
        if (job.group !== "a") return;
        startedA.push(job.payload.n);
        await gate.promise;
      },
    });
    await tw.start();
    // Fast jobs first, so the worker knows its jobs finish faster than a claim's round trip.
    await q.enqueueMany(Array.from({ length: 40 }, (_, n) => ({ payload: { tenant: `warm${n % 8}`, n } })));
    await eventually(async () => (await tw.jobs.counts("work"))[0]?.counts.succeeded === 40, "the warm-up jobs to succeed");

    await q.enqueueMany(Array.from({ length: 4 }, (_, n) => ({ payload: { tenant: "a", n } })));
    await eventually(() => startedA.length === 1, "the first job of group a to start");
    const [held] = await tw.queues.status("work");
    expect(held!.groups.find((g) => g.group === "a")).toEqual({ group: "a", pending: 0, running: 4 });

    try {
      await tw.queues.pause("work", { group: "a" });
      // The hand-back is written with the worker's next batch of outcomes.
      const groupA = async () => (await tw.queues.status("work"))[0]!.groups.find((g) => g.group === "a");
      await eventually(async () => (await groupA())?.pending === 3, "3 of group a's jobs to be handed back");
      expect(await groupA()).toEqual({ group: "a", pending: 3, running: 1 });
      expect(events.filter((e) => e.event === "job.released").map((e) => e.reason)).toEqual(["paused", "paused", "paused"]);
    } finally {
      gate.resolve();
    }
    await eventually(async () => (await tw.queues.status("work"))[0]!.groups.find((g) => g.group === "a")?.running === 0, "group a's running job to end");
    expect(startedA).toEqual([0]);

    await tw.queues.resume("work", { group: "a" });
    await eventually(async () => (await tw.jobs.counts("work"))[0]?.counts.succeeded === 44, "group a's jobs to run after the resume");
    expect(startedA).toEqual([0, 1, 2, 3]);
  });
});
