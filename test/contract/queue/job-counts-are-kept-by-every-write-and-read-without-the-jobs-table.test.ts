import { describe, expect, it } from "vitest";
import { JOB_STATUSES, type JobStatus } from "../../../src/queue/job.js";
import type { Tickwork } from "../../../src/tickwork.js";
import { createTickwork } from "../../../src/index.js";
import { postgres } from "../../../src/store/postgres.js";
import { DATABASE_URL, allStoreCases, dropSchema, uniqueSchema, withPg } from "../../support/stores.js";
import { engineFor } from "../../support/queue-fixtures.js";

type Payload = { n: number; fail?: boolean };


/** The counts as the jobs themselves say, read row by row through the list API: the oracle. */
async function countedByListing(tw: Tickwork): Promise<Record<string, Record<JobStatus, number>>> {
  const out: Record<string, Record<JobStatus, number>> = {};
  for (let before: string | undefined, page; (page = await tw.jobs.list({ limit: 500, ...(before ? { before } : {}) })).length; before = page.at(-1)!.id) {
    for (const job of page) {
      const counts = (out[job.queue] ??= Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>);
      counts[job.status]++;
    }
  }
  return out;
}

async function kept(tw: Tickwork): Promise<Record<string, Record<JobStatus, number>>> {
  return Object.fromEntries((await tw.jobs.counts()).map((c) => [c.queue, c.counts]));
}

describe.each(allStoreCases())("job counts, kept by the writes and read without the jobs ($name)", (storeCase) => {
  const engine = engineFor(storeCase);

  it("match the jobs after every kind of write: enqueue, claim, success, retry, failure, cancel, manual retry, delete, prune, flows, replace", async () => {
    const { tw, clock } = await engine({ retention: { succeeded: "1h", failed: false, cancelled: false } });
    const mail = tw.queue<Payload>("mail", { retry: { maxAttempts: 2, backoff: () => 60_000 }, handler: (job) => { if (job.payload.fail) throw new Error("bounce"); } });
    const sms = tw.queue<Payload>("sms", { handler: () => {} });
    const check = async () => expect(await kept(tw)).toEqual(await countedByListing(tw));

    await mail.enqueueMany(Array.from({ length: 12 }, (_, n) => ({ payload: { n, fail: n % 4 === 0 } })));
    const [, later] = await sms.enqueueMany([{ payload: { n: 1 } }, { payload: { n: 2 }, delay: "2h" }]);
    await sms.enqueue({ n: 3 }, { key: "k", delay: "2h" });
    await sms.enqueue({ n: 4 }, { key: "k", dedupe: "replace" });
    await check();
    expect((await kept(tw)).mail).toMatchObject({ pending: 12, running: 0 });

    await tw.tick(); // 9 succeed, 3 fail once and wait for their retry
    await check();
    expect((await kept(tw)).mail).toMatchObject({ pending: 3, succeeded: 9 });

    await clock.advance("2m");
    await tw.tick(); // the 3 fail for good
    await check();
    expect((await kept(tw)).mail).toMatchObject({ failed: 3, pending: 0 });

    await tw.jobs.retry((await tw.jobs.list({ queue: "mail", status: "failed", limit: 1 }))[0]!.id);
    await tw.jobs.cancel(later!.id);
    const [succeeded] = await tw.jobs.list({ queue: "sms", status: "succeeded", limit: 1 });
    await tw.jobs.delete(succeeded!.id);
    await check();

    await mail.enqueueFlow({ payload: { n: 100 }, children: [{ queue: "sms", payload: { n: 101 } }, { queue: "sms", payload: { n: 102 } }] });
    await check();
    await tw.tick();
    await tw.tick();
    await check();

    await clock.advance("3h");
    await tw.tick(); // the pruner deletes succeeded jobs older than an hour
    await check();
    expect((await kept(tw)).mail?.succeeded ?? 0).toBe(0);
  });

  it("a queue whose every job is gone is not listed, and compacting the counters changes no count", async () => {
    const { tw, clock } = await engine({ retention: { succeeded: "1m", failed: false, cancelled: false } });
    const q = tw.queue<Payload>("brief", { handler: () => {} });
    const stays = tw.queue<Payload>("stays", { handler: () => {} });
    await q.enqueueMany([{ payload: { n: 1 } }, { payload: { n: 2 } }]);
    await stays.enqueue({ n: 3 }, { delay: "1d" });
    await tw.tick();
    expect((await kept(tw)).brief).toMatchObject({ succeeded: 2 });
    await clock.advance("5m");
    await tw.tick();
    const before = await tw.jobs.counts();
    expect(before.map((c) => c.queue)).toEqual(["stays"]);
    await tw.store.queue.compactCounts();
    expect(await tw.jobs.counts()).toEqual(before);
    expect(await tw.jobs.counts("brief")).toEqual([]);
  });
});

describe("job counts on PostgreSQL", () => {
  it("are read while another session holds the jobs table locked: a count never reads the jobs table", async () => {
    const schema = uniqueSchema();
    const tw = await createTickwork({ store: postgres({ url: DATABASE_URL, schema }), handleSignals: false, logLevel: "warn" });
    try {
      const q = tw.queue<Payload>("locked", {});
      await q.enqueueMany(Array.from({ length: 50 }, (_, n) => ({ payload: { n } })));
      await withPg(async (side) => {
        await side.query("BEGIN");
        await side.query("LOCK TABLE tickwork_jobs IN ACCESS EXCLUSIVE MODE");
        try {
          // Any read of tickwork_jobs would wait for this lock; the deadline turns a wait into a failure.
          const counts = await Promise.race([tw.jobs.counts(), new Promise<"blocked">((resolve) => setTimeout(() => resolve("blocked"), 5_000).unref())]);
          expect(counts).toEqual([{ queue: "locked", counts: { pending: 50, running: 0, succeeded: 0, failed: 0, cancelled: 0 } }]);
        } finally {
          await side.query("ROLLBACK");
        }
      }, schema);
    } finally {
      await tw.stop();
      await dropSchema(schema);
    }
  });

  it("connections that wrote and are gone are folded into one counter, with every count unchanged", async () => {
    const schema = uniqueSchema();
    const engines = await Promise.all([1, 2, 3].map(() => createTickwork({ store: postgres({ url: DATABASE_URL, schema }), handleSignals: false, logLevel: "warn" })));
    const [keeper, ...others] = engines as [Tickwork, ...Tickwork[]];
    try {
      for (const [i, tw] of engines.entries()) await tw.queue<Payload>("shared", {}).enqueueMany(Array.from({ length: 10 + i }, (_, n) => ({ payload: { n } })));
      const shards = () => withPg(async (side) => Number((await side.query<{ n: string }>("SELECT count(*) AS n FROM tickwork_job_counts")).rows[0]!.n), schema);
      expect(await shards()).toBeGreaterThanOrEqual(3); // a counter row per connection that wrote
      for (const tw of others) await tw.stop(); // their connections close
      // Compacting folds only connections that are gone; it waits until the server has seen them close.
      const deadline = Date.now() + 10_000;
      let folded = 0;
      while ((folded += await keeper.store.queue.compactCounts()) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(folded).toBeGreaterThanOrEqual(2);
      expect(await keeper.jobs.counts()).toEqual([{ queue: "shared", counts: { pending: 33, running: 0, succeeded: 0, failed: 0, cancelled: 0 } }]);
    } finally {
      await keeper.stop();
      await Promise.allSettled(others.map((tw) => tw.stop()));
      await dropSchema(schema);
    }
  });
});
