import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import type { Job } from "../../src/queue/job.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";
import { eventually, realEngines } from "../support/real-time.js";

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
});
