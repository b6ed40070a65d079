import { describe, expect, it } from "vitest";
import { allStoreCases } from "../../support/stores.js";
import { DAY, HOUR, MINUTE, T0, engineFor, type Engine, type EngineOptions } from "../../support/queue-fixtures.js";

/** One job that succeeds and one that fails for good, both finished at T0 by the first tick. */
async function finishOneOfEach(make: (options?: EngineOptions) => Promise<Engine>, options: EngineOptions) {
  const e = await make(options);
  const q = e.tw.queue<{ fail: boolean }>("reports", {
    retry: { maxAttempts: 1 },
    handler: (job) => {
      if (job.payload.fail) throw new Error("bad input");
    },
  });
  const ok = await q.enqueue({ fail: false });
  const bad = await q.enqueue({ fail: true });
  expect((await e.tw.tick()).ran).toBe(2);
  expect(await e.tw.jobs.get(ok.id)).toMatchObject({ status: "succeeded", finishedAt: T0 });
  expect(await e.tw.jobs.get(bad.id)).toMatchObject({ status: "failed", finishedAt: T0 });
  return { ...e, ok: ok.id, bad: bad.id };
}

describe.each(allStoreCases())("finished jobs are pruned per retention ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it('retention { succeeded: "1h" } prunes succeeded jobs once they are older than an hour, and keeps failed ones', async () => {
    const { tw, clock, named, ok, bad } = await finishOneOfEach(engine, { retention: { succeeded: "1h" } });

    // Exactly one hour old: not older than the retention yet.
    await clock.set(T0 + HOUR);
    await tw.tick();
    expect(await tw.jobs.get(ok)).not.toBeNull();
    expect(named("jobs.pruned")).toEqual([]);

    // Pruning is a pass at most once a minute; the next one finds the job past its hour.
    await clock.advance("1m");
    await tw.tick();
    expect(await tw.jobs.get(ok)).toBeNull();
    expect(named("jobs.pruned")).toEqual([expect.objectContaining({ status: "succeeded", count: 1, olderThanMs: HOUR })]);

    // The failed job follows its own retention (the default, 14 days).
    expect(await tw.jobs.get(bad)).toMatchObject({ status: "failed" });
    await clock.set(T0 + 14 * DAY);
    await tw.tick();
    expect(await tw.jobs.get(bad)).not.toBeNull();
    await clock.advance("1m");
    await tw.tick();
    expect(await tw.jobs.get(bad)).toBeNull();
    expect(named("jobs.pruned").at(-1)).toMatchObject({ status: "failed", count: 1, olderThanMs: 14 * DAY });
  });

  it("failed jobs are kept per their own retention, independently of succeeded ones", async () => {
    const { tw, clock, named, ok, bad } = await finishOneOfEach(engine, { retention: { succeeded: "1h", failed: "3h" } });

    await clock.set(T0 + 2 * HOUR);
    await tw.tick();
    expect(await tw.jobs.get(ok)).toBeNull();
    expect(await tw.jobs.get(bad)).toMatchObject({ status: "failed" });

    await clock.set(T0 + 3 * HOUR + MINUTE);
    await tw.tick();
    expect(await tw.jobs.get(bad)).toBeNull();
    expect(named("jobs.pruned").map((e) => [e.status, e.count])).toEqual([
      ["succeeded", 1],
      ["failed", 1],
    ]);
  });

  it("retention { succeeded: false } keeps succeeded jobs forever", async () => {
    const { tw, clock, named, ok } = await finishOneOfEach(engine, { retention: { succeeded: false, failed: false } });

    for (const days of [1, 30, 365]) {
      await clock.set(T0 + days * DAY);
      await tw.tick();
    }

    expect(await tw.jobs.get(ok)).toMatchObject({ status: "succeeded", finishedAt: T0 });
    expect((await tw.jobs.counts("reports"))[0]!.counts).toMatchObject({ succeeded: 1, failed: 1 });
    expect(named("jobs.pruned")).toEqual([]);
  });

  it("pending and running jobs are never pruned, whatever their age", async () => {
    const { tw, clock } = await engine({ retention: { succeeded: "1m", failed: "1m", cancelled: "1m" } });
    const q = tw.queue("reports", { handler: () => {} });
    const later = await q.enqueue({}, { runAt: T0 + 30 * DAY });
    const held = await q.enqueue({});
    await tw.store.queue.claimDue({ queue: "reports", limit: 1, now: T0, leaseUntil: T0 + 60 * DAY, workerId: "elsewhere/reports" });

    await clock.set(T0 + 29 * DAY);
    await tw.tick();

    expect(await tw.jobs.get(later.id)).toMatchObject({ status: "pending" });
    expect(await tw.jobs.get(held.id)).toMatchObject({ status: "running" });
  });
});
