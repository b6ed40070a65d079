import { describe, expect, it } from "vitest";
import { Peaks, sharedStoreCases, twoEnginesFor } from "./two-engines.js";
import { SECOND, until } from "../../support/queue-fixtures.js";

describe.each(sharedStoreCases())("globalConcurrency counts the running jobs of every engine until their lease lapses ($name)", (storeCase) => {
  const engines = twoEnginesFor(storeCase);

  it("globalConcurrency 3: while A runs 2, B starts 1 of the 5 it asks for; once A's finish, B runs the rest, never more than 3 at once", async () => {
    const { a, b, gate } = await engines();
    const open = gate();
    const peaks = new Peaks();
    const ranBy = { a: 0, b: 0 };
    const handler = (engine: "a" | "b") => async () => {
      ranBy[engine]++;
      peaks.enter("all");
      await open.promise;
      peaks.leave("all");
    };
    const work = a.tw.queue("work", { concurrency: 2, globalConcurrency: 3, handler: handler("a") });
    b.tw.queue("work", { concurrency: 5, globalConcurrency: 3, handler: handler("b") });
    await work.enqueueMany(Array.from({ length: 6 }, (_, n) => ({ payload: { n } })));

    const aTick = a.tw.tick({ maxJobs: 2 });
    await until(() => ranBy.a === 2, "A to start 2 jobs");
    const bTick = b.tw.tick();
    await until(() => ranBy.b === 1, "B to start 1 job");

    expect(b.named("queue.throttled")).toEqual([expect.objectContaining({ queue: "work", by: "globalConcurrency", started: 1, asked: 5 })]);
    const [status] = await b.tw.queues.status("work");
    expect(status).toMatchObject({ globalConcurrency: 3, running: 3, pending: 3 });
    expect(peaks.peak.get("all")).toBe(3);

    open.resolve();
    expect((await aTick).ran).toBe(2);
    let ranInB = (await bTick).ran;
    for (let i = 0; i < 10 && ranInB < 4; i++) ranInB += (await b.tw.tick()).ran;

    expect(ranInB).toBe(4);
    expect(ranBy).toEqual({ a: 2, b: 4 });
    expect(peaks.peak.get("all")).toBe(3);
    expect((await a.tw.jobs.counts("work"))[0]!.counts).toMatchObject({ succeeded: 6, pending: 0, running: 0 });
  });

  it("a job whose worker died holds its slot until its lease lapses, then no longer counts", async () => {
    const { a, b, clock } = await engines();
    const started: string[] = [];
    const work = a.tw.queue("work", { globalConcurrency: 2 });
    const worker = b.tw.queue("work", { concurrency: 5, globalConcurrency: 2, lease: "10s", handler: (job) => void started.push(job.id) });
    await work.enqueueMany(Array.from({ length: 4 }, (_, n) => ({ payload: { n } })));
    // A process that claims two jobs under a 10 s lease and dies without a heartbeat.
    const now = clock.now();
    const dead = await a.tw.store.queue.claimDue({ queue: "work", limit: 2, now, leaseUntil: now + 10 * SECOND, workerId: "dead/work" });
    expect(dead).toHaveLength(2);

    const held = await b.tw.tick();
    expect(held.ran).toBe(0);
    expect(held.nextWakeAt).toBeGreaterThan(clock.now());
    // The claim itself, read before any rescue hands the dead jobs back (a tick would rescue first).
    const claim = () => b.tw.store.queue.claim({ queue: "work", limit: 5, now: clock.now(), leaseUntil: clock.now() + 10 * SECOND, workerId: "probe/work", limits: worker.config.limits });
    await clock.advance("10s");
    expect(await claim()).toMatchObject({ jobs: [], held: "globalConcurrency" });

    await clock.advance("1ms");
    const afterLapse = await claim();
    expect(afterLapse.jobs).toHaveLength(2);
    // The cap cut the claim to 2, but nothing else was due: the queue ran out, the cap held nothing back.
    expect(afterLapse.held).toBeNull();
    expect(afterLapse.jobs.map((j) => j.id).sort()).toEqual(
      (await a.tw.jobs.list({ queue: "work" })).filter((j) => !dead.some((d) => d.id === j.id)).map((j) => j.id).sort(),
    );
  });

  it("after the lease lapses, B's tick rescues the dead process's jobs and runs all four, two at a time", async () => {
    const { a, b, clock } = await engines();
    const peaks = new Peaks();
    const work = a.tw.queue("work", { globalConcurrency: 2 });
    b.tw.queue("work", {
      concurrency: 5,
      globalConcurrency: 2,
      lease: "10s",
      handler: async () => {
        peaks.enter("all");
        await new Promise((resolve) => setImmediate(resolve));
        peaks.leave("all");
      },
    });
    await work.enqueueMany(Array.from({ length: 4 }, (_, n) => ({ payload: { n } })));
    const now = clock.now();
    await a.tw.store.queue.claimDue({ queue: "work", limit: 2, now, leaseUntil: now + 10 * SECOND, workerId: "dead/work" });
    expect((await b.tw.tick()).ran).toBe(0);

    await clock.advance("10001ms");
    let ran = 0;
    for (let i = 0; i < 10 && ran < 4; i++) ran += (await b.tw.tick()).ran;

    expect(ran).toBe(4);
    expect(peaks.peak.get("all")).toBe(2);
    expect((await b.tw.jobs.counts("work"))[0]!.counts).toMatchObject({ succeeded: 4, running: 0 });
  });
});
