import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("a grouped queue takes groups round-robin and holds each to its groupConcurrency ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("groupConcurrency 1: one job per group at a time, every group served in the first batch, all jobs run", async () => {
    const { tw } = await engine();
    const runningByGroup = new Map<string, number>();
    const overlaps: string[] = [];
    const batches: string[][] = [[]];
    const q = tw.queue<{ tenant: string; n: number }>("work", {
      concurrency: 10,
      groupConcurrency: 1,
      group: (p) => p.tenant,
      handler: async (job) => {
        const g = job.group!;
        runningByGroup.set(g, (runningByGroup.get(g) ?? 0) + 1);
        if (runningByGroup.get(g)! > 1) overlaps.push(g);
        batches.at(-1)!.push(`${g}${job.payload.n}`);
        await new Promise((r) => setImmediate(r));
        runningByGroup.set(g, runningByGroup.get(g)! - 1);
      },
    });
    await q.enqueueMany([
      ...[1, 2, 3].map((n) => ({ payload: { tenant: "a", n } })),
      ...[1, 2].map((n) => ({ payload: { tenant: "b", n } })),
      { payload: { tenant: "c", n: 1 } },
    ]);
    const jobs = await tw.jobs.list({ queue: "work" });
    expect(new Set(jobs.map((j) => j.group))).toEqual(new Set(["a", "b", "c"]));
    const result = await tw.tick();
    expect(result.ran).toBe(6);
    expect(overlaps).toEqual([]);
    expect((await tw.jobs.counts("work"))[0]!.counts).toMatchObject({ succeeded: 6, pending: 0 });
  });

  it("a burst of one group does not starve the others: the first batch holds every group's first job", async () => {
    const { tw } = await engine();
    const started: string[] = [];
    const q = tw.queue<{ tenant: string }>("work", { concurrency: 5, group: true, handler: (job) => void started.push(job.group!) });
    await q.enqueueMany(Array.from({ length: 50 }, () => ({ payload: { tenant: "a" }, group: "a" })));
    await q.enqueueMany(["b", "c", "d", "e"].map((g) => ({ payload: { tenant: g }, group: g })));
    await tw.tick({ maxJobs: 5 });
    expect(started.sort()).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("a grouped queue refuses a job without a group, and an ungrouped queue refuses one with a group, writing nothing", async () => {
    const { tw } = await engine();
    const grouped = tw.queue("grouped", { group: true });
    const plain = tw.queue("plain");
    await expect(grouped.enqueue({})).rejects.toThrow(/group is required/);
    await expect(grouped.enqueue({}, { group: "" })).rejects.toThrow(/group/);
    await expect(plain.enqueue({}, { group: "a" })).rejects.toThrow(/group needs a grouped queue/);
    expect(await tw.jobs.list({})).toEqual([]);
  });
});
