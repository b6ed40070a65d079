import { describe, expect, it } from "vitest";
import { Peaks, sharedStoreCases, twoEnginesFor } from "./two-engines.js";
import { until } from "../../support/queue-fixtures.js";

describe.each(sharedStoreCases())("groupConcurrency holds a group across engines while other groups run ($name)", (storeCase) => {
  const engines = twoEnginesFor(storeCase);

  it("groupConcurrency 2: A runs 2 of group a; B starts none of a but b, b and c, and never more than 2 of a group run at once", async () => {
    const { a, b, gate } = await engines();
    const open = gate();
    const peaks = new Peaks();
    const startedBy = { a: [] as string[], b: [] as string[] };
    const declare = (engine: "a" | "b", concurrency: number) =>
      (engine === "a" ? a : b).tw.queue<{ tenant: string }>("work", {
        concurrency,
        groupConcurrency: 2,
        group: (p) => p.tenant,
        handler: async (job) => {
          startedBy[engine].push(job.group!);
          peaks.enter(job.group!);
          await open.promise;
          peaks.leave(job.group!);
        },
      });
    const work = declare("a", 3);
    declare("b", 5);
    await work.enqueueMany(Array.from({ length: 6 }, () => ({ payload: { tenant: "a" } })));

    const aTick = a.tw.tick({ maxJobs: 2 });
    await until(() => startedBy.a.length === 2, "A to start 2 jobs of group a");
    await work.enqueueMany([...["b", "b", "b", "c"].map((tenant) => ({ payload: { tenant } }))]);
    const bTick = b.tw.tick();
    await until(() => startedBy.b.length === 3, "B to start 3 jobs");

    expect(startedBy.a).toEqual(["a", "a"]);
    expect([...startedBy.b].sort()).toEqual(["b", "b", "c"]);
    expect(b.named("queue.throttled")).toEqual([expect.objectContaining({ queue: "work", by: "groupConcurrency", started: 3, asked: 5 })]);
    const [status] = await b.tw.queues.status("work");
    expect(status!.groups).toEqual([
      { group: "a", pending: 4, running: 2 },
      { group: "b", pending: 1, running: 2 },
      { group: "c", pending: 0, running: 1 },
    ]);

    open.resolve();
    await Promise.all([aTick, bTick]);
    let ran = startedBy.a.length + startedBy.b.length;
    for (let i = 0; i < 20 && ran < 10; i++) ran += (await (i % 2 ? a : b).tw.tick()).ran;

    expect(ran).toBe(10);
    expect(Object.fromEntries(peaks.peak)).toEqual({ a: 2, b: 2, c: 1 });
    expect((await a.tw.jobs.counts("work"))[0]!.counts).toMatchObject({ succeeded: 10, pending: 0, running: 0 });
  });

  it("every handler held: A fills groups a and b to 2 each, B starts nothing until a slot frees, and no group ever runs more than 2", async () => {
    const { a, b, gate } = await engines();
    const open = gate();
    const started: string[] = [];
    const peaks = new Peaks();
    const handler = async (job: { group: string | null }) => {
      started.push(job.group!);
      peaks.enter(job.group!);
      await open.promise;
      peaks.leave(job.group!);
    };
    const work = a.tw.queue("work", { concurrency: 4, group: true, groupConcurrency: 2, handler });
    b.tw.queue("work", { concurrency: 4, group: true, groupConcurrency: 2, handler });
    await work.enqueueMany([
      ...Array.from({ length: 8 }, () => ({ payload: {}, group: "a" })),
      ...Array.from({ length: 3 }, () => ({ payload: {}, group: "b" })),
    ]);

    const aTick = a.tw.tick({ maxJobs: 4 });
    await until(() => started.length === 4, "A to start 4 jobs");
    expect([...started].sort()).toEqual(["a", "a", "b", "b"]);
    // B finds groups a and b each at 2 running: nothing may start until a slot frees.
    expect((await b.tw.tick()).ran).toBe(0);
    expect(b.named("queue.throttled")).toEqual([expect.objectContaining({ by: "groupConcurrency", started: 0, asked: 4 })]);
    const [status] = await b.tw.queues.status("work");
    expect(status).toMatchObject({ running: 4, pending: 7, groupConcurrency: 2 });

    open.resolve();
    let ran = (await aTick).ran;
    for (let i = 0; i < 20 && ran < 11; i++) ran += (await (i % 2 ? a : b).tw.tick()).ran;

    expect(ran).toBe(11);
    expect(peaks.peak.get("a")).toBe(2);
    expect(peaks.peak.get("b")).toBe(2);
  });
});
