import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("a batch handler takes its queue's jobs together and answers for each ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("jobs go to the handler in batches of at most `size`, and each job keeps its own result", async () => {
    const { tw } = await engine();
    const calls: number[][] = [];
    const q = tw.queue<{ n: number }>("charges", {
      batch: { size: 3 },
      handler: (jobs) => {
        calls.push(jobs.map((j) => j.payload.n));
        return jobs.map((j) => ({ charged: j.payload.n }));
      },
    });
    const jobs = await q.enqueueMany(Array.from({ length: 7 }, (_, n) => ({ payload: { n } })));
    expect((await tw.tick()).ran).toBe(7);

    expect(calls.map((c) => c.length)).toEqual([3, 3, 1]);
    expect(calls.flat().sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    for (const [n, job] of jobs.entries()) expect(await tw.jobs.get(job.id)).toMatchObject({ status: "succeeded", result: { charged: n } });
  });

  it("an Error in the answer fails only its job; a throw, or an answer of the wrong length, fails them all", async () => {
    const { tw } = await engine();
    let mode: "per-job" | "throw" | "short" = "per-job";
    const q = tw.queue<{ n: number }>("payments", {
      batch: { size: 10 },
      retry: { maxAttempts: 1 },
      handler: (jobs) => {
        if (mode === "throw") throw new Error("the payment API is down");
        if (mode === "short") return [1];
        return jobs.map((j) => (j.payload.n === 2 ? new Error("card declined") : "paid"));
      },
    });
    const first = await q.enqueueMany([1, 2, 3].map((n) => ({ payload: { n } })));
    await tw.tick();
    expect((await Promise.all(first.map((j) => tw.jobs.get(j.id)))).map((j) => [j!.status, j!.result, j!.lastError?.split("\n")[0] ?? null])).toEqual([
      ["succeeded", "paid", null],
      ["failed", null, "Error: card declined"],
      ["succeeded", "paid", null],
    ]);

    mode = "throw";
    const thrown = await q.enqueueMany([4, 5].map((n) => ({ payload: { n } })));
    await tw.tick();
    for (const j of thrown) expect(await tw.jobs.get(j.id)).toMatchObject({ status: "failed", lastError: expect.stringContaining("the payment API is down") });

    mode = "short";
    const short = await q.enqueueMany([6, 7].map((n) => ({ payload: { n } })));
    await tw.tick();
    for (const j of short) expect(await tw.jobs.get(j.id)).toMatchObject({ status: "failed", lastError: expect.stringContaining("expected nothing, or an array of 2 entries") });
  });

  it("a batch's size and wait are bounded when the queue is declared", async () => {
    const { tw } = await engine();
    expect(() => tw.queue("a", { batch: { size: 0 }, handler: () => [] })).toThrow(/batch/);
    expect(() => tw.queue("b", { batch: { size: 1001 }, handler: () => [] })).toThrow(/batch/);
    expect(() => tw.queue("c", { batch: { size: 10, wait: "2h" }, handler: () => [] })).toThrow(/the wait must be at most an hour/);
  });
});
