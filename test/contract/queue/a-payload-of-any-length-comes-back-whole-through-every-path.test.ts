import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { engineFor } from "../../support/queue-fixtures.js";

type Payload = { label: string; text: string };

/** A payload of about `chars` JSON characters, with quotes, backslashes and characters outside ASCII. */
function payloadOf(label: string, chars: number): Payload {
  const unit = 'café "q" \\ 日本 ';
  return { label, text: unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars) };
}

// Lengths on both sides of what a store may keep beside the job's row (SQLite moves payloads over a
// few hundred characters to a table of their own), up to a big one.
const SIZES = [10, 500, 520, 2_048, 16_384, 200_000];

describe.each(allStoreCases())("a payload of any length comes back whole through every path ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("enqueue, enqueueMany, the handler, get, list and delete give back the payload as enqueued", async () => {
    const { tw } = await engine({ retention: { succeeded: false } });
    const seen = new Map<string, Payload>();
    const q = tw.queue<Payload>("docs", { handler: (job) => void seen.set(job.id, job.payload) });
    const one = await Promise.all(SIZES.map((n) => q.enqueue(payloadOf(`one-${n}`, n))));
    const many = await q.enqueueMany(SIZES.map((n) => ({ payload: payloadOf(`many-${n}`, n) })));
    const jobs = [...one, ...many];
    for (const job of jobs) expect((await tw.jobs.get(job.id))!.payload).toEqual(job.payload);

    while ((await tw.tick()).ran > 0);
    for (const job of jobs) expect(seen.get(job.id)).toEqual(job.payload);
    const listed = await tw.jobs.list({ queue: "docs", status: "succeeded", limit: 100 });
    expect(new Map(listed.map((j) => [j.id, j.payload]))).toEqual(new Map(jobs.map((j) => [j.id, j.payload])));

    const deleted = await tw.jobs.delete(jobs[4]!.id);
    expect(deleted?.payload).toEqual(payloadOf("one-16384", 16_384));
    expect(await tw.jobs.get(jobs[4]!.id)).toBeNull();
  });

  it("a replaced payload may grow or shrink, and a held key gives back its job's long payload", async () => {
    const { tw } = await engine();
    const seen: Payload[] = [];
    const q = tw.queue<Payload>("sync", { handler: (job) => void seen.push(job.payload) });
    const first = await q.enqueue(payloadOf("short", 10), { key: "k", delay: "1m" });
    const grown = await q.enqueue(payloadOf("long", 4_000), { key: "k", dedupe: "replace" });
    expect(grown).toMatchObject({ id: first.id, duplicate: true, payload: payloadOf("long", 4_000) });
    const shrunk = await q.enqueue(payloadOf("short-again", 12), { key: "k", dedupe: "replace" });
    expect(shrunk).toMatchObject({ id: first.id, duplicate: true, payload: payloadOf("short-again", 12) });
    expect((await tw.jobs.get(first.id))!.payload).toEqual(payloadOf("short-again", 12));
    const regrown = await q.enqueue(payloadOf("long-again", 3_000), { key: "k", dedupe: "replace" });
    expect((await tw.jobs.get(regrown.id))!.payload).toEqual(payloadOf("long-again", 3_000));

    const held = await q.enqueue(payloadOf("held", 5_000), { key: "w", unique: { for: "1h" } });
    const again = await q.enqueue(payloadOf("other", 6_000), { key: "w", unique: { for: "1h" } });
    expect(again).toMatchObject({ id: held.id, duplicate: true, payload: payloadOf("held", 5_000) });
    const plain = await q.enqueue(payloadOf("plain", 7_000), { key: "p" });
    const dup = await q.enqueue(payloadOf("ignored", 10), { key: "p" });
    expect(dup).toMatchObject({ id: plain.id, duplicate: true, payload: payloadOf("plain", 7_000) });

    while ((await tw.tick()).ran > 0);
    expect(seen).toEqual(expect.arrayContaining([payloadOf("held", 5_000), payloadOf("plain", 7_000)]));
  });

  it("flows and grouped, capped queues hand their handlers long payloads whole", async () => {
    const { tw, clock } = await engine();
    const seen = new Map<string, Payload>();
    const handler = (job: { id: string; payload: Payload }) => void seen.set(job.id, job.payload);
    const capped = tw.queue<Payload>("capped", { globalConcurrency: 2, group: (p) => p.label.slice(0, 1), handler });
    const parent = tw.queue<Payload>("parent", { handler });
    const flow = await parent.enqueueFlow({ payload: payloadOf("root", 3_000), children: [{ queue: "capped", payload: payloadOf("a-child", 9_000) }] });
    const grouped = await capped.enqueueMany([{ payload: payloadOf("a1", 600) }, { payload: payloadOf("b1", 20) }, { payload: payloadOf("b2", 30_000) }]);
    for (let i = 0; i < 20 && seen.size < 5; i++) {
      await tw.tick();
      await clock.advance("1s");
    }
    expect(seen.get(flow.id)).toEqual(payloadOf("root", 3_000));
    expect(seen.get(flow.children[0]!.id)).toEqual(payloadOf("a-child", 9_000));
    for (const job of grouped) expect(seen.get(job.id)).toEqual(job.payload);
  });
});
