import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import { PermanentJobError } from "../../../src/queue/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { engineFor, runUntilIdle } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("the jobs API lists a flow parent's direct children ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("parent lists that parent's children in the order written, with their statuses: not grandchildren, not another flow's", async () => {
    const { tw } = await engine();
    tw.queue<{ n: number; fail?: boolean }>("fetch", {
      handler: (job) => {
        if (job.payload.fail) throw new PermanentJobError(`fetch ${job.payload.n} refused`);
        return { value: job.payload.n };
      },
    });
    const report = tw.queue<{ name: string }>("report", { handler: () => ({ done: true }) });
    const flow = await report.enqueueFlow({
      payload: { name: "daily" },
      onChildFailure: "continue",
      children: [
        { queue: "fetch", payload: { n: 1 } },
        { queue: "report", payload: { name: "sub" }, children: [{ queue: "fetch", payload: { n: 2 } }, { queue: "fetch", payload: { n: 3 } }] },
        { queue: "fetch", payload: { n: 4, fail: true } },
        { queue: "fetch", payload: { n: 5 }, delay: "1h" },
      ],
    });
    const other = await report.enqueueFlow({ payload: { name: "other" }, children: [{ queue: "fetch", payload: { n: 6 } }] });
    const batch = await tw.batch([{ n: 7 }, { n: 8 }], { queue: "fetch", onComplete: { queue: "report", payload: { name: "batch" } } });
    await runUntilIdle(tw);

    const children = await tw.jobs.list({ parent: flow.id, order: "oldest" });
    expect(children.map((j) => [j.id, j.queue, j.status, j.parentId])).toEqual([
      [flow.children[0]!.id, "fetch", "succeeded", flow.id],
      [flow.children[1]!.id, "report", "succeeded", flow.id],
      [flow.children[2]!.id, "fetch", "failed", flow.id],
      [flow.children[3]!.id, "fetch", "pending", flow.id],
    ]);
    expect(children[0]!.result).toEqual({ value: 1 });

    // Newest first by default; it pages and narrows like any list.
    expect((await tw.jobs.list({ parent: flow.id })).map((j) => j.id)).toEqual(flow.children.map((c) => c.id).reverse());
    const page = await tw.jobs.list({ parent: flow.id, order: "oldest", limit: 2 });
    const rest = await tw.jobs.list({ parent: flow.id, order: "oldest", after: page.at(-1)!.id });
    expect([...page, ...rest].map((j) => j.id)).toEqual(flow.children.map((c) => c.id));
    expect((await tw.jobs.list({ parent: flow.id, queue: "fetch", status: "succeeded" })).map((j) => j.id)).toEqual([flow.children[0]!.id]);

    // The nested report's children, the other flow's and the batch's, each on their own.
    expect((await tw.jobs.list({ parent: flow.children[1]!.id, order: "oldest" })).map((j) => j.id)).toEqual(flow.children[1]!.children.map((c) => c.id));
    expect((await tw.jobs.list({ parent: other.id })).map((j) => j.id)).toEqual([other.children[0]!.id]);
    expect((await tw.jobs.list({ parent: batch.id, order: "oldest" })).map((j) => [j.id, j.status])).toEqual(batch.jobs.map((id) => [id, "succeeded"]));
    // A job without children, or no job at all: an empty list.
    expect(await tw.jobs.list({ parent: flow.children[0]!.id })).toEqual([]);
    expect(await tw.jobs.list({ parent: "999999999" })).toEqual([]);
  });

  it("a bad parent id is refused with an InvalidInputError naming parent", async () => {
    const { tw } = await engine();
    tw.queue("fetch", {});
    for (const bad of ["abc", "0", "-1", "1.5", "", 12 as never, null as never]) {
      await expect(tw.jobs.list({ parent: bad })).rejects.toBeInstanceOf(InvalidInputError);
      await expect(tw.jobs.list({ parent: bad })).rejects.toThrow(/^jobs\.list: parent must be an id/);
    }
  });
});
