import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import { JobNotFoundError, JobStateError } from "../../../src/queue/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { SECOND, T0, deferred, engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("the jobs API pages oldest first, deletes finished jobs and names a running job's lease holder ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("order: \"oldest\" pages with after, newest first with before; mixing them up is refused", async () => {
    const { tw } = await engine();
    const q = tw.queue("mail", {});
    const ids = (await q.enqueueMany(Array.from({ length: 5 }, (_, n) => ({ payload: { n } })))).map((j) => j.id);

    const first = await tw.jobs.list({ queue: "mail", order: "oldest", limit: 2 });
    const second = await tw.jobs.list({ queue: "mail", order: "oldest", after: first.at(-1)!.id, limit: 2 });
    const third = await tw.jobs.list({ queue: "mail", order: "oldest", after: second.at(-1)!.id, limit: 2 });
    expect([...first, ...second, ...third].map((j) => j.id)).toEqual(ids);
    expect((await tw.jobs.list({ queue: "mail", before: ids[2], limit: 5 })).map((j) => j.id)).toEqual([ids[1], ids[0]]);

    await expect(tw.jobs.list({ order: "oldest", before: ids[2] })).rejects.toThrow(/before pages a newest-first list/);
    await expect(tw.jobs.list({ after: ids[2] })).rejects.toThrow(/after pages an oldest-first list/);
    await expect(tw.jobs.list({ order: "random" as never })).rejects.toBeInstanceOf(InvalidInputError);
  });

  it("jobs.delete removes a finished job and refuses a live one; a key held for a period is free again", async () => {
    const e = await engine();
    const { tw } = e;
    const q = tw.queue("mail", { handler: () => "sent" });
    const done = await q.enqueue({}, { key: "weekly", unique: { for: "1d" } });
    const later = await q.enqueue({}, { delay: "1h" });
    await tw.tick();

    expect(await tw.jobs.delete(done.id)).toMatchObject({ id: done.id, status: "succeeded" });
    expect(await tw.jobs.get(done.id)).toBeNull();
    expect(e.named("job.deleted")).toEqual([expect.objectContaining({ queue: "mail", id: done.id, status: "succeeded" })]);
    await expect(tw.jobs.delete(later.id)).rejects.toBeInstanceOf(JobStateError);
    await expect(tw.jobs.delete(later.id)).rejects.toThrow(/is pending; only finished jobs/);
    await expect(tw.jobs.delete(done.id)).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await q.enqueue({}, { key: "weekly", unique: { for: "1d" } })).toMatchObject({ duplicate: false });
  });

  it("a running job names the worker holding it and until when; a flow's parent still waiting cannot be promoted", async () => {
    const { tw } = await engine();
    const gate = deferred();
    const seen = deferred<string>();
    const q = tw.queue("reports", { lease: "30s", handler: async (job) => { seen.resolve(job.id); await gate.promise; } });
    const job = await q.enqueue({});
    const ticked = tw.tick();
    await seen.promise;
    expect((await tw.jobs.get(job.id))!.lease).toEqual({ workerId: `${tw.instanceId}/reports`, until: T0 + 30 * SECOND });
    gate.resolve();
    await ticked;
    expect((await tw.jobs.get(job.id))!.lease).toBeNull();

    const flow = await q.enqueueFlow({ payload: {}, children: [{ queue: "reports", payload: {}, delay: "1h" }] });
    await expect(tw.jobs.promote(flow.id)).rejects.toThrow(/waits for 1 of its children/);
  });
});
