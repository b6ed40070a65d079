import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import { PermanentJobError, UnknownQueueError } from "../../../src/queue/errors.js";
import type { ChildResult, Job } from "../../../src/queue/job.js";
import { allStoreCases } from "../../support/stores.js";
import { engineFor, runUntilIdle, type Engine } from "../../support/queue-fixtures.js";

/** Queues `fetch` (returns its payload's n × 10; fails for good on `fail`) and `report` (records what it read of its children). */
function flowQueues({ tw }: Engine) {
  const reports: { job: Job; children: ChildResult[] }[] = [];
  const ran: string[] = [];
  const fetch = tw.queue<{ n: number; fail?: boolean }>("fetch", {
    handler: (job) => {
      ran.push(`fetch:${job.payload.n}`);
      if (job.payload.fail) throw new PermanentJobError(`fetch ${job.payload.n} refused`);
      return { value: job.payload.n * 10 };
    },
  });
  const report = tw.queue<{ name: string }>("report", {
    handler: async (job, ctx) => {
      ran.push(`report:${job.payload.name}`);
      reports.push({ job, children: await ctx.childResults() });
      const results = (await ctx.childResults()).map((c) => c.result as { value?: number; total?: number } | null);
      return { total: results.reduce((sum, r) => sum + (r?.value ?? r?.total ?? 0), 0) };
    },
  });
  return { fetch, report, reports, ran };
}

describe.each(allStoreCases())("a flow's parent runs once its children ended, and a batch completes once ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("a parent waits for every child, nested ones included, then runs once and reads their results in order", async () => {
    const e = await engine();
    const { report, reports, ran } = flowQueues(e);
    const flow = await report.enqueueFlow({
      payload: { name: "daily" },
      children: [
        { queue: "fetch", payload: { n: 1 } },
        { queue: "report", payload: { name: "sub" }, children: [{ queue: "fetch", payload: { n: 2 } }, { queue: "fetch", payload: { n: 3 } }] },
      ],
    });
    expect(flow).toMatchObject({ queue: "report", children: [{ queue: "fetch", children: [] }, { queue: "report", children: [{ queue: "fetch" }, { queue: "fetch" }] }] });
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "pending", children: { total: 2, pending: 2, failed: 0 }, parentId: null });
    expect(await e.tw.jobs.get(flow.children[1]!.children[0]!.id)).toMatchObject({ parentId: flow.children[1]!.id });

    await runUntilIdle(e.tw);

    // Leaves first, then the sub-report, then the root: each parent after its children.
    expect(ran.indexOf("report:sub")).toBeGreaterThan(Math.max(ran.indexOf("fetch:2"), ran.indexOf("fetch:3")));
    expect(ran.indexOf("report:daily")).toBeGreaterThan(Math.max(ran.indexOf("fetch:1"), ran.indexOf("report:sub")));
    expect(ran.filter((r) => r === "report:daily")).toHaveLength(1);
    const root = reports.find((r) => r.job.id === flow.id)!;
    expect(root.children).toEqual([
      { id: flow.children[0]!.id, queue: "fetch", status: "succeeded", result: { value: 10 }, error: null },
      { id: flow.children[1]!.id, queue: "report", status: "succeeded", result: { total: 50 }, error: null },
    ]);
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "succeeded", result: { total: 60 }, children: { total: 2, pending: 0, failed: 0 } });
  });

  it("ctx.childResults() gives the children in the order given, also when their ids pass a power of ten (9, 10, 11...)", async () => {
    const e = await engine();
    const { report, reports } = flowQueues(e);
    // Twelve children after the parent: their ids run across 10 on every store that counts from 1,
    // where ordering the ids as text would put 10, 11, 12 before 2.
    const flow = await report.enqueueFlow({ payload: { name: "wide" }, children: Array.from({ length: 12 }, (_, n) => ({ queue: "fetch", payload: { n } })) });
    await runUntilIdle(e.tw);
    const root = reports.find((r) => r.job.id === flow.id)!;
    expect(root.children.map((c) => c.id)).toEqual(flow.children.map((c) => c.id));
    expect(root.children.map((c) => (c.result as { value: number }).value)).toEqual(Array.from({ length: 12 }, (_, n) => n * 10));
  });

  it("a child that fails for good fails its parent, and up the tree, without running them", async () => {
    const e = await engine();
    const { report, ran } = flowQueues(e);
    const flow = await report.enqueueFlow({
      payload: { name: "daily" },
      children: [{ queue: "report", payload: { name: "sub" }, children: [{ queue: "fetch", payload: { n: 7, fail: true } }] }, { queue: "fetch", payload: { n: 1 } }],
    });
    await runUntilIdle(e.tw);

    const sub = await e.tw.jobs.get(flow.children[0]!.id);
    expect(sub).toMatchObject({ status: "failed", attempts: 0, children: { total: 1, pending: 0, failed: 1 }, lastError: expect.stringMatching(/^child job \d+ failed: PermanentJobError: fetch 7 refused/) });
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "failed", attempts: 0, lastError: expect.stringContaining(`child job ${flow.children[0]!.id} failed`) });
    expect(ran.filter((r) => r.startsWith("report:"))).toEqual([]);
  });

  it('with onChildFailure: "continue" the parent runs anyway and sees the failure; a cancelled child counts as failed', async () => {
    const e = await engine();
    const { report, reports } = flowQueues(e);
    const flow = await report.enqueueFlow({
      payload: { name: "lenient" },
      onChildFailure: "continue",
      children: [{ queue: "fetch", payload: { n: 1 } }, { queue: "fetch", payload: { n: 2, fail: true } }, { queue: "fetch", payload: { n: 3 }, delay: "1h" }],
    });
    await e.tw.jobs.cancel(flow.children[2]!.id);
    await runUntilIdle(e.tw);

    const { job, children } = reports.find((r) => r.job.id === flow.id)!;
    expect(job.children).toEqual({ total: 3, pending: 0, failed: 2 });
    expect(children.map((c) => [c.status, c.result, c.error === null ? null : "error"])).toEqual([["succeeded", { value: 10 }, null], ["failed", null, "error"], ["cancelled", null, "error"]]);
  });

  it("tw.batch runs every item and one completion job, once, with the counts of succeeded and failed", async () => {
    const e = await engine();
    const completions: Job[] = [];
    e.tw.queue<{ n: number }>("charge", { retry: { maxAttempts: 1 }, handler: (job) => { if (job.payload.n === 3) throw new Error("card declined"); return { charged: job.payload.n }; } });
    e.tw.queue("summary", { handler: (job) => void completions.push(job) });
    const batch = await e.tw.batch([1, 2, 3, 4, 5].map((n) => ({ n })), { queue: "charge", onComplete: { queue: "summary", payload: { run: "nightly" } } });
    expect(batch.jobs).toHaveLength(5);

    await runUntilIdle(e.tw);

    expect(completions).toHaveLength(1);
    expect(completions[0]).toMatchObject({ id: batch.id, payload: { run: "nightly" }, children: { total: 5, pending: 0, failed: 1 } });
    expect(await e.tw.jobs.get(batch.id)).toMatchObject({ status: "succeeded" });
  });

  it("a bad flow or batch is refused naming the part, and nothing of it is written", async () => {
    const e = await engine();
    const { report } = flowQueues(e);
    const tx = { query: async () => ({ rows: [] }) };
    const looped: { queue: string; payload: unknown; children: unknown[] } = { queue: "fetch", payload: {}, children: [] };
    looped.children.push(looped);
    const refusals: [Promise<unknown>, RegExp | (new (...args: never[]) => Error)][] = [
      [report.enqueueFlow({ payload: { name: "r" }, children: [looped as never] }), /children\[0\]\.children\[0\]: this object appears twice/],
      [report.enqueueFlow({ payload: { name: "r" }, children: [{ queue: "nope", payload: {} }] }), UnknownQueueError],
      [report.enqueueFlow({ payload: { name: "r" }, children: [] }), /a flow needs at least one child/],
      [report.enqueueFlow({ payload: { name: "r" }, children: [{ queue: "fetch", payload: {}, key: "k" } as never] }), /children\[0\]\.key: jobs of a flow take no dedupe key/],
      [report.enqueueFlow({ payload: { name: "r" }, delay: "1m", children: [{ queue: "fetch", payload: {} }] }), /runAt and delay apply to jobs without children/],
      [report.enqueueFlow({ payload: { name: "r" }, children: [{ queue: "fetch", payload: { n: 10n } }] }), /children\[0\]: job payload is not JSON-serialisable/],
      [report.enqueueFlow({ payload: { name: "r" }, onChildFailure: "ignore" as never, children: [{ queue: "fetch", payload: {} }] }), /onChildFailure: expected "fail" or "continue"/],
      [e.tw.batch([], { queue: "fetch", onComplete: { queue: "report", payload: {} } }), /items is empty/],
      [e.tw.batch([{ n: 1 }], { queue: "fetch", onComplete: { queue: "nope", payload: {} } }), UnknownQueueError],
      [e.tw.batch("x" as never, { queue: "fetch", onComplete: { queue: "report", payload: {} } }), /items must be an array/],
      // Options a flow or a batch does not take are refused, never dropped: a caller's transaction
      // among them, since the flow is written in a transaction of its own.
      [e.tw.batch([{ n: 1 }], { queue: "fetch", onComplete: { queue: "report", payload: {} }, priority: 5 } as never), /tw\.batch: unknown option "priority"/],
      [e.tw.batch([{ n: 1 }], { queue: "fetch", onComplete: { queue: "report", payload: {}, delay: "1m" } } as never), /unknown option "onComplete\.delay"/],
      [e.tw.batch([{ n: 1 }], { queue: "fetch", onComplete: { queue: "report", payload: {} }, tx } as never), /tw\.batch: tx is not supported/],
      [report.enqueueFlow({ payload: { name: "r" }, tx, children: [{ queue: "fetch", payload: {} }] } as never), /enqueueFlow\.tx: a flow is written in a transaction of its own/],
      [report.enqueueFlow({ payload: { name: "r" }, children: [{ queue: "fetch", payload: {}, tx } as never] }), /children\[0\]\.tx: a flow is written/],
    ];
    for (const [attempt, expected] of refusals) {
      if (expected instanceof RegExp) await expect(attempt).rejects.toThrow(expected);
      else await expect(attempt).rejects.toBeInstanceOf(expected);
      await expect(attempt).rejects.toBeInstanceOf(expected instanceof RegExp ? InvalidInputError : expected);
    }
    expect(await e.tw.jobs.counts()).toEqual([]);
  });
});
