import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/core/errors.js";
import { allStoreCases } from "../../support/stores.js";
import { MINUTE, SECOND, T0, deferred, engineFor } from "../../support/queue-fixtures.js";

describe.each(allStoreCases())("a repeated key replaces, debounces, throttles or stays unique for a period ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it('dedupe: "replace" gives the pending holder the new payload, run time and priority; a running holder is returned as it is', async () => {
    const { tw } = await engine();
    const gate = deferred();
    const seen: unknown[] = [];
    const q = tw.queue<{ v: number }>("sync", { handler: async (job) => { seen.push(job.payload); if (job.payload.v === 2) await gate.promise; } });
    const first = await q.enqueue({ v: 1 }, { key: "acct-1", delay: "1m" });
    const second = await q.enqueue({ v: 2 }, { key: "acct-1", dedupe: "replace", priority: -5 });
    expect(second).toMatchObject({ id: first.id, duplicate: true, payload: { v: 2 }, runAt: T0, priority: -5, status: "pending" });
    expect((await tw.jobs.list({ queue: "sync" })).length).toBe(1);

    const ticked = tw.tick();
    await expect.poll(() => seen.length).toBe(1);
    const third = await q.enqueue({ v: 3 }, { key: "acct-1", dedupe: "replace" });
    expect(third).toMatchObject({ id: first.id, duplicate: true, status: "running", payload: { v: 2 } });
    gate.resolve();
    await ticked;
    expect(seen).toEqual([{ v: 2 }]);
  });

  it('debounce: "30s" runs the job once, 30 s after the last enqueue of the key, with the last payload', async () => {
    const { tw, clock } = await engine();
    const seen: unknown[] = [];
    const q = tw.queue<{ v: number }>("reindex", { handler: (job) => void seen.push(job.payload) });
    const a = await q.enqueue({ v: 1 }, { key: "doc-9", debounce: "30s" });
    await clock.advance("10s");
    const b = await q.enqueue({ v: 2 }, { key: "doc-9", debounce: "30s" });
    await clock.advance("10s");
    const c = await q.enqueue({ v: 3 }, { key: "doc-9", debounce: "30s" });
    expect([b.id, c.id]).toEqual([a.id, a.id]);
    expect(c).toMatchObject({ duplicate: true, runAt: T0 + 50 * SECOND, payload: { v: 3 } });

    await clock.set(T0 + 50 * SECOND - 1);
    expect((await tw.tick()).ran).toBe(0);
    await clock.advance(1);
    expect((await tw.tick()).ran).toBe(1);
    expect(seen).toEqual([{ v: 3 }]);
  });

  it("debounce never moves the job's time back: an enqueue whose write lands after a later one's leaves the job as the later one set it", async () => {
    const { tw } = await engine();
    tw.queue("mail", { handler: () => {} });
    const row = (n: number) => ({ payload: JSON.stringify({ n }), key: "k", priority: 0, runAt: T0, maxAttempts: 3 });
    const mode = { kind: "debounce", ms: SECOND } as const;
    // B, enqueued at T0 + 2,505 ms, is written first; A, enqueued at T0, is written after it (its
    // connection came late).
    const b = await tw.store.queue.insertKeyed({ queue: "mail", row: row(2), mode, now: T0 + 2_505 });
    const a = await tw.store.queue.insertKeyed({ queue: "mail", row: row(1), mode, now: T0 });
    expect(a).toMatchObject({ id: b.id, duplicate: true });
    expect(await tw.jobs.get(b.id)).toMatchObject({ runAt: T0 + 3_505, payload: { n: 2 } });
  });

  it("a new debounced job is answered with the time it runs at, as stored", async () => {
    const { tw } = await engine();
    const q = tw.queue("mail", { handler: () => {} });
    const job = await q.enqueue({ to: "ada" }, { key: "welcome:ada", debounce: "30s" });
    expect(job.runAt).toBe(T0 + 30 * SECOND);
    expect((await tw.jobs.get(job.id))!.runAt).toBe(T0 + 30 * SECOND);
  });

  it('throttle: "1m" keeps one job per key per minute, finished or not; after the minute a new one is taken', async () => {
    const { tw, clock } = await engine();
    const q = tw.queue<{ v: number }>("alerts", { handler: () => "sent" });
    const a = await q.enqueue({ v: 1 }, { key: "disk-full", throttle: "1m" });
    await tw.tick();
    await clock.advance("30s");
    const b = await q.enqueue({ v: 2 }, { key: "disk-full", throttle: "1m" });
    expect(b).toMatchObject({ id: a.id, duplicate: true, status: "succeeded", payload: { v: 1 } });
    await clock.set(T0 + MINUTE);
    const c = await q.enqueue({ v: 3 }, { key: "disk-full", throttle: "1m" });
    expect(c).toMatchObject({ duplicate: false, payload: { v: 3 } });
    expect(c.id).not.toBe(a.id);
  });

  it('unique: { for: "1h" } holds the key an hour after the job failed for good, then lets it go', async () => {
    const { tw, clock } = await engine();
    const q = tw.queue("imports", { retry: { maxAttempts: 1 }, handler: () => { throw new Error("bad file"); } });
    const a = await q.enqueue({ file: "a.csv" }, { key: "a.csv", unique: { for: "1h" } });
    await tw.tick();
    await clock.advance("59m");
    expect(await q.enqueue({ file: "a.csv" }, { key: "a.csv", unique: { for: "1h" } })).toMatchObject({ id: a.id, duplicate: true, status: "failed" });
    await clock.advance("1m");
    expect(await q.enqueue({ file: "a.csv" }, { key: "a.csv", unique: { for: "1h" } })).toMatchObject({ duplicate: false, status: "pending" });
  });

  it("modes without a key, modes together, bad periods and modes inside a transaction are refused naming the field, and nothing is written", async () => {
    const { tw } = await engine();
    const q = tw.queue("mail", { handler: () => {} });
    const refusals: [Promise<unknown>, RegExp][] = [
      [q.enqueue({}, { debounce: "30s" }), /debounce needs a key/],
      [q.enqueue({}, { key: "k", dedupe: "replace", debounce: "30s" }), /dedupe: "replace" and debounce do not go together/],
      [q.enqueue({}, { key: "k", throttle: "1m", unique: { for: "1h" } }), /throttle and unique do not go together/],
      [q.enqueue({}, { key: "k", unique: { for: "soon" } }), /unique\.for must be a duration/],
      [q.enqueue({}, { key: "k", unique: "1h" as never }), /unique must be \{ for: duration \}/],
      [q.enqueue({}, { key: "k", throttle: 0 }), /throttle must be from 1 ms to a year/],
      [q.enqueue({}, { key: "k", dedupe: "merge" as never }), /dedupe must be "skip" or "replace"/],
      [q.enqueueMany([{ payload: 1, key: "a" }, { payload: 2, debounce: "1s" }]), /enqueueMany\[1\]: debounce needs a key/],
      [q.enqueue({}, { key: "k", debounce: "1s", tx: { query: async () => ({ rows: [] }) } }), /not supported inside your transaction/],
      // Debounce sets the run time: one given beside it would be dropped, so it is refused.
      [q.enqueue({}, { key: "k", debounce: "30s", runAt: T0 + 60_000 }), /debounce sets the run time \(runAt given too\)/],
      [q.enqueue({}, { key: "k", debounce: "30s", delay: "1m" }), /debounce sets the run time \(delay given too\)/],
    ];
    for (const [attempt, message] of refusals) {
      await expect(attempt).rejects.toBeInstanceOf(InvalidInputError);
      await expect(attempt).rejects.toThrow(message);
    }
    expect(await tw.jobs.counts()).toEqual([]);
  });
});
