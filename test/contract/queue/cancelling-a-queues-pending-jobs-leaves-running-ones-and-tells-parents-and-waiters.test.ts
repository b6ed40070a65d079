import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import { UnknownQueueError } from "../../../src/queue/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { T0, engineFor, deferred } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("tw.jobs.cancelPending cancels a queue's pending jobs, leaves running ones and tells parents and waiters ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("cancels the queue's due and scheduled jobs only; a running job goes on and other queues are untouched", async () => {
    const { tw, clock } = await engine();
    const gate = deferred();
    const started = deferred<string>();
    const ran: string[] = [];
    const mail = tw.queue<string>("mail", {
      concurrency: 1,
      handler: async (job) => {
        ran.push(job.payload);
        started.resolve(job.id);
        if (job.payload === "slow") await gate.promise;
      },
    });
    const sms = tw.queue<string>("sms", { handler: (job) => void ran.push(job.payload) });
    const slow = await mail.enqueue("slow");
    const ticked = tw.tick();
    expect(await started.promise).toBe(slow.id);
    const due = await mail.enqueueMany([{ payload: "a" }, { payload: "b" }]);
    const later = await mail.enqueue("later", { delay: "1h" });
    const other = await sms.enqueue("other");

    await clock.advance("1s");
    expect(await tw.jobs.cancelPending("mail")).toBe(3);

    for (const id of [...due.map((j) => j.id), later.id]) {
      expect(await tw.jobs.get(id)).toMatchObject({ status: "cancelled", attempts: 0, finishedAt: T0 + 1_000 });
    }
    expect(await tw.jobs.get(slow.id)).toMatchObject({ status: "running" });
    gate.resolve();
    await ticked;
    await clock.advance("2h");
    await tw.tick();
    expect(ran.sort()).toEqual(["other", "slow"]);
    expect(await tw.jobs.get(slow.id)).toMatchObject({ status: "succeeded" });
    expect(await tw.jobs.get(other.id)).toMatchObject({ status: "succeeded" });
    expect(await tw.jobs.cancelPending("mail")).toBe(0);
    expect((await tw.jobs.counts("mail"))[0]!.counts).toMatchObject({ pending: 0, running: 0, cancelled: 3, succeeded: 1 });
  });

  it("a cancelled flow child fails its parent, and a waiter on a cancelled job hears JobFailedError", async () => {
    const { tw } = await engine();
    const fetch = tw.queue<{ n: number }>("fetch", { handler: (job) => job.payload.n });
    const report = tw.queue("report", { handler: () => "report" });
    const flow = await report.enqueueFlow({ payload: {}, children: [{ queue: "fetch", payload: { n: 1 } }, { queue: "fetch", payload: { n: 2 } }] });
    const waitedJob = await fetch.enqueue({ n: 3 }, { delay: "1h" });
    const parentWait = tw.jobs.wait(flow.id).catch((e: unknown) => e);
    const childWait = tw.jobs.wait(waitedJob.id).catch((e: unknown) => e);

    expect(await tw.jobs.cancelPending("fetch")).toBe(3);

    expect(await childWait).toMatchObject({ code: "TW_JOB_FAILED", job: { id: waitedJob.id, status: "cancelled" } });
    expect(await parentWait).toMatchObject({ code: "TW_JOB_FAILED", job: { id: flow.id, status: "failed" } });
    expect(await tw.jobs.get(flow.id)).toMatchObject({
      status: "failed",
      attempts: 0,
      children: { total: 2, pending: 0, failed: 2 },
      lastError: expect.stringMatching(/^child job \d+ failed: cancelled$/),
    });
    expect((await tw.tick()).ran).toBe(0);
  });

  it("refuses an unknown queue or a name no store could hold, and writes nothing", async () => {
    const { tw } = await engine();
    const q = tw.queue("mail", { handler: () => {} });
    const job = await q.enqueue({});
    await expect(tw.jobs.cancelPending("nope")).rejects.toBeInstanceOf(UnknownQueueError);
    await expect(tw.jobs.cancelPending("")).rejects.toBeInstanceOf(InvalidInputError);
    await expect(tw.jobs.cancelPending(42 as never)).rejects.toThrow(/jobs\.cancelPending: queue/);
    expect(await tw.jobs.get(job.id)).toMatchObject({ status: "pending" });
  });
});
