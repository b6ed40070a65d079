import { describe, expect, it } from "vitest";
import { JobStateError, PermanentJobError } from "../../../src/queue/errors.js";
import type { ChildResult, Job } from "../../../src/queue/job.js";
import { allStoreCases } from "../../support/stores.js";
import { engineFor, runUntilIdle, type Engine } from "../../support/queue-fixtures.js";

/**
 * The rule a retry keeps in a flow: a parent runs once, after every child ended, and counts each
 * child once. A retried child reopens its parent's wait (and up the tree, a parent its failure had
 * failed before it ran); a parent that already ran is left as it is; a child of a running parent is
 * refused; a retried parent waits for its unfinished children, and one that fails with a failed
 * child is refused while that child has failed.
 */

/** `work` fails for good while its payload's name is in `failing`; `report` records what it saw of its children. */
function flowQueues({ tw }: Engine) {
  const failing = new Set<string>();
  const runs: { job: Job; children: ChildResult[] }[] = [];
  let duringReport: ((job: Job) => Promise<void>) | undefined;
  const work = tw.queue<{ name: string }>("work", {
    handler: (job) => {
      if (failing.has(job.payload.name)) throw new PermanentJobError(`${job.payload.name} refused`);
      return { done: job.payload.name };
    },
  });
  const report = tw.queue<{ name: string }>("report", {
    handler: async (job, ctx) => {
      await duringReport?.(job);
      runs.push({ job, children: await ctx.childResults() });
      if (failing.has(job.payload.name)) throw new PermanentJobError(`${job.payload.name} refused`);
      return { reported: job.payload.name };
    },
  });
  return { work, report, failing, runs, during: (fn: (job: Job) => Promise<void>) => void (duringReport = fn) };
}

describe.each(allStoreCases())("retrying a job of a flow reopens its parent's wait and counts each child once ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it('a retried failed child of a "continue" parent is counted once, and the parent waits for it and for a sibling still unfinished', async () => {
    const e = await engine();
    const { report, failing, runs } = flowQueues(e);
    failing.add("a");
    const flow = await report.enqueueFlow({
      payload: { name: "root" },
      onChildFailure: "continue",
      children: [{ queue: "work", payload: { name: "a" } }, { queue: "work", payload: { name: "b" }, delay: "1h" }],
    });
    const [a, b] = flow.children.map((c) => c.id);
    await runUntilIdle(e.tw);
    expect(await e.tw.jobs.get(a!)).toMatchObject({ status: "failed" });
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "pending", children: { total: 2, pending: 1, failed: 1 } });

    failing.delete("a");
    expect(await e.tw.jobs.retry(a!)).toMatchObject({ id: a, status: "pending" });
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "pending", children: { total: 2, pending: 2, failed: 0 } });
    await runUntilIdle(e.tw);
    // a succeeded on its retry; b waits an hour: the parent has not run.
    expect(await e.tw.jobs.get(a!)).toMatchObject({ status: "succeeded" });
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "pending", children: { total: 2, pending: 1, failed: 0 } });
    expect(runs).toEqual([]);

    await e.clock.advance(3_600_000);
    await runUntilIdle(e.tw);
    expect(await e.tw.jobs.get(b!)).toMatchObject({ status: "succeeded" });
    expect(runs).toHaveLength(1);
    expect(runs[0]!.job.children).toEqual({ total: 2, pending: 0, failed: 0 });
    expect(runs[0]!.children.map((c) => c.status)).toEqual(["succeeded", "succeeded"]);
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "succeeded", children: { total: 2, pending: 0, failed: 0 } });
  });

  it("a retried cancelled child of a parent that is due but has not run puts it back to waiting", async () => {
    const e = await engine();
    const { report, runs } = flowQueues(e);
    const flow = await report.enqueueFlow({ payload: { name: "root" }, onChildFailure: "continue", children: [{ queue: "work", payload: { name: "a" } }] });
    const a = flow.children[0]!.id;
    await e.tw.jobs.cancel(a);
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "pending", children: { total: 1, pending: 0, failed: 1 } });
    await e.tw.jobs.retry(a);
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "pending", children: { total: 1, pending: 1, failed: 0 } });
    await runUntilIdle(e.tw);
    expect(runs.map((r) => r.job.children)).toEqual([{ total: 1, pending: 0, failed: 0 }]);
  });

  it("a retried child reopens the parents its failure had failed, up the tree, and the flow then completes", async () => {
    const e = await engine();
    const { report, failing, runs } = flowQueues(e);
    failing.add("leaf");
    const flow = await report.enqueueFlow({
      payload: { name: "root" },
      children: [{ queue: "report", payload: { name: "sub" }, children: [{ queue: "work", payload: { name: "leaf" } }] }, { queue: "work", payload: { name: "other" } }],
    });
    const sub = flow.children[0]!.id;
    const leaf = flow.children[0]!.children[0]!.id;
    await runUntilIdle(e.tw);
    expect(await e.tw.jobs.get(sub)).toMatchObject({ status: "failed", attempts: 0 });
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "failed", attempts: 0 });

    // The parents cannot be retried while the child that failed them has failed: they would fail again.
    await expect(e.tw.jobs.retry(flow.id)).rejects.toThrow(JobStateError);
    await expect(e.tw.jobs.retry(sub)).rejects.toThrow(new RegExp(`child job ${leaf} has failed`));
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "failed" });

    failing.delete("leaf");
    await e.tw.jobs.retry(leaf);
    expect(await e.tw.jobs.get(sub)).toMatchObject({ status: "pending", children: { total: 1, pending: 1, failed: 0 } });
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "pending", children: { total: 2, pending: 1, failed: 0 } });
    await runUntilIdle(e.tw);
    expect(runs.map((r) => [r.job.payload, r.job.children])).toEqual([
      [{ name: "sub" }, { total: 1, pending: 0, failed: 0 }],
      [{ name: "root" }, { total: 2, pending: 0, failed: 0 }],
    ]);
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "succeeded" });
  });

  it("a parent failed by one child stays failed while another child has failed; retrying the last one reopens it", async () => {
    const e = await engine();
    const { report, failing, runs } = flowQueues(e);
    failing.add("a").add("b");
    const flow = await report.enqueueFlow({ payload: { name: "root" }, children: [{ queue: "work", payload: { name: "a" } }, { queue: "work", payload: { name: "b" } }] });
    const [a, b] = flow.children.map((c) => c.id);
    await runUntilIdle(e.tw);
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "failed" });
    failing.clear();
    await e.tw.jobs.retry(a!);
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "failed" });
    await runUntilIdle(e.tw);
    expect(await e.tw.jobs.get(a!)).toMatchObject({ status: "succeeded" });
    expect(runs).toEqual([]);
    await e.tw.jobs.retry(b!);
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "pending", children: { total: 2, pending: 1, failed: 0 } });
    await runUntilIdle(e.tw);
    expect(runs.map((r) => r.job.children)).toEqual([{ total: 2, pending: 0, failed: 0 }]);
  });

  it("a parent retried after its own handler failed runs again with its children's final outcomes, and waits for one retried meanwhile", async () => {
    const e = await engine();
    const { report, failing, runs } = flowQueues(e);
    failing.add("root").add("a");
    const flow = await report.enqueueFlow({ payload: { name: "root" }, onChildFailure: "continue", children: [{ queue: "work", payload: { name: "a" } }, { queue: "work", payload: { name: "b" } }] });
    const a = flow.children[0]!.id;
    await runUntilIdle(e.tw);
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "failed", attempts: expect.any(Number), children: { total: 2, pending: 0, failed: 1 } });
    expect(runs).toHaveLength(1);

    // The parent ran: a child retried now runs on its own, the parent left as it is.
    failing.clear();
    await e.tw.jobs.retry(a);
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "failed", children: { total: 2, pending: 0, failed: 1 } });
    // Retried while that child is unfinished, the parent waits for it, then runs with every child succeeded.
    await e.tw.jobs.retry(flow.id);
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "pending", children: { total: 2, pending: 1, failed: 0 } });
    await runUntilIdle(e.tw);
    expect(runs.map((r) => r.children.map((c) => c.status))).toEqual([["failed", "succeeded"], ["succeeded", "succeeded"]]);
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "succeeded", children: { total: 2, pending: 0, failed: 0 } });
  });

  it("a child of a running parent is refused and left failed; a child of a parent that succeeded runs on its own", async () => {
    const e = await engine();
    const { report, failing, runs, during } = flowQueues(e);
    failing.add("a");
    const flow = await report.enqueueFlow({ payload: { name: "root" }, onChildFailure: "continue", children: [{ queue: "work", payload: { name: "a" } }] });
    const a = flow.children[0]!.id;
    const refusals: unknown[] = [];
    during(async () => {
      refusals.push(await e.tw.jobs.retry(a).catch((error: unknown) => error));
    });
    await runUntilIdle(e.tw);
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toBeInstanceOf(JobStateError);
    expect(String(refusals[0])).toContain(`its parent job ${flow.id} is running`);
    expect(await e.tw.jobs.get(a)).toMatchObject({ status: "failed" });
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "succeeded", children: { total: 1, pending: 0, failed: 1 } });

    failing.clear();
    during(async () => {});
    await e.tw.jobs.retry(a);
    await runUntilIdle(e.tw);
    expect(await e.tw.jobs.get(a)).toMatchObject({ status: "succeeded" });
    expect(runs).toHaveLength(1);
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "succeeded", children: { total: 1, pending: 0, failed: 1 } });
  });

  it("retryFailed skips a parent whose own child has failed and still retries its siblings", async () => {
    const e = await engine();
    const { report, failing, runs } = flowQueues(e);
    failing.add("leaf").add("t");
    const flow = await report.enqueueFlow({
      payload: { name: "root" },
      children: [{ queue: "report", payload: { name: "s" }, children: [{ queue: "work", payload: { name: "leaf" } }] }, { queue: "report", payload: { name: "t" } }],
    });
    const [s, t] = flow.children.map((c) => c.id);
    const leaf = flow.children[0]!.children[0]!.id;
    await runUntilIdle(e.tw);
    expect((await Promise.all([s!, t!, flow.id].map((id) => e.tw.jobs.get(id)))).map((j) => j!.status)).toEqual(["failed", "failed", "failed"]);

    // s waits on its failed leaf and the root on s: only t goes back, and the root stays failed.
    failing.clear();
    expect(await e.tw.jobs.retryFailed("report")).toBe(1);
    expect((await Promise.all([s!, t!, flow.id].map((id) => e.tw.jobs.get(id)))).map((j) => j!.status)).toEqual(["failed", "pending", "failed"]);
    await runUntilIdle(e.tw);
    expect(await e.tw.jobs.get(t!)).toMatchObject({ status: "succeeded" });

    // The leaf retried, s and then the root wait again, and the flow completes.
    await e.tw.jobs.retry(leaf);
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "pending", children: { total: 2, pending: 1, failed: 0 } });
    await runUntilIdle(e.tw);
    expect(await e.tw.jobs.get(flow.id)).toMatchObject({ status: "succeeded" });
    expect(runs.map((r) => r.job.payload)).toEqual([{ name: "t" }, { name: "t" }, { name: "s" }, { name: "root" }]);
  });

  it("retryFailed retries a batch's failed items and reopens its completion's wait once", async () => {
    const e = await engine();
    const { work, failing } = flowQueues(e);
    const completions: Job[] = [];
    e.tw.queue("summary", { handler: (job) => void completions.push(job) });
    failing.add("2").add("4");
    const batch = await e.tw.batch([1, 2, 3, 4, 5].map((n) => ({ name: String(n) })), { queue: "work", onComplete: { queue: "summary", payload: {} } });
    // The completion waits while a sixth job outside the batch fails too.
    failing.add("solo");
    await work.enqueue({ name: "solo" });
    await e.tw.jobs.cancel(batch.id);
    await runUntilIdle(e.tw);
    expect(completions).toEqual([]);
    expect((await e.tw.jobs.counts("work"))[0]!.counts).toMatchObject({ failed: 3, succeeded: 3 });

    // Cancelled, the completion is left as it is; retried, it waits for the items retried meanwhile.
    failing.clear();
    expect(await e.tw.jobs.retryFailed("work")).toBe(3);
    await e.tw.jobs.retry(batch.id);
    expect(await e.tw.jobs.get(batch.id)).toMatchObject({ status: "pending", children: { total: 5, pending: 2, failed: 0 } });
    await runUntilIdle(e.tw);
    expect(completions.map((j) => j.children)).toEqual([{ total: 5, pending: 0, failed: 0 }]);
    expect((await e.tw.jobs.counts("work"))[0]!.counts).toMatchObject({ failed: 0, succeeded: 6 });
  });
});
