import pg from "pg";
import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import type { Store } from "../../src/store/store.js";
import { DATABASE_URL, allStoreCases, dropSchema, uniqueSchema, wrapQueueOperation } from "../support/stores.js";
import { deferred, realEngines, type Deferred } from "../support/real-time.js";

/**
 * Records the inserts a real store is sent (the store itself is untouched), and can hold the next one
 * at the door until the test lets it through, to have enqueues arrive while an insert is on its way.
 */
function recordingInserts(store: Store): { store: Store; inserts: number[]; holdNext: () => Deferred } {
  const inserts: number[] = [];
  let gate: Deferred | undefined;
  const recorded = wrapQueueOperation(store, "insertMany", (insertMany) => async (params) => {
    inserts.push(params.rows.length);
    const held = gate;
    gate = undefined;
    if (held) await held.promise;
    return insertMany(params);
  });
  return { store: recorded, inserts, holdNext: () => (gate = deferred()) };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe.each(allStoreCases())("$name: enqueues made at the same time", (c) => {
  const engine = realEngines({ afterStop: () => c.cleanup() });

  it("made in one turn of the event loop are written by one insert, each call answered with its own job", async () => {
    const { store, inserts } = recordingInserts(c.make());
    const { tw } = await engine({ store });
    const mail = tw.queue<{ n: number }>("mail");
    const jobs = await Promise.all(Array.from({ length: 50 }, (_, n) => mail.enqueue({ n })));

    expect(inserts).toEqual([50]);
    expect(new Set(jobs.map((j) => j.id)).size).toBe(50);
    for (const [n, job] of jobs.entries()) {
      expect(job).toMatchObject({ payload: { n }, status: "pending", duplicate: false });
      expect((await tw.jobs.get(job.id))?.payload).toEqual({ n });
    }
  });

  it("arriving while an insert is on its way wait for it, then go together", async () => {
    const { store, inserts, holdNext } = recordingInserts(c.make());
    const { tw } = await engine({ store });
    const mail = tw.queue<{ n: number }>("mail");
    const door = holdNext();
    const first = mail.enqueue({ n: 0 });
    const later: Promise<unknown>[] = [];
    for (let n = 1; n <= 10; n++) {
      await turn();
      later.push(mail.enqueue({ n }));
    }
    expect(inserts).toEqual([1]);
    door.resolve();
    await Promise.all([first, ...later]);
    expect(inserts).toEqual([1, 10]);
    expect((await tw.jobs.counts("mail"))[0]?.counts).toMatchObject({ pending: 11 });
  });

  it("with the same key become one job: the later call gets it back as a duplicate", async () => {
    const { store, inserts } = recordingInserts(c.make());
    const { tw } = await engine({ store });
    const mail = tw.queue<{ to: string }>("mail");
    const [a, b] = await Promise.all([mail.enqueue({ to: "a" }, { key: "welcome:7" }), mail.enqueue({ to: "b" }, { key: "welcome:7" })]);

    expect(inserts).toEqual([2]);
    expect(a).toMatchObject({ duplicate: false, payload: { to: "a" } });
    expect(b).toMatchObject({ duplicate: true, id: a.id, payload: { to: "a" } });
    expect((await tw.jobs.counts("mail"))[0]?.counts).toMatchObject({ pending: 1 });
  });

  it("within a caller's enqueueMany stay all-or-nothing and in their order", async () => {
    const { store, inserts } = recordingInserts(c.make());
    const { tw } = await engine({ store });
    const mail = tw.queue<{ n: number }>("mail");
    const [one, many] = await Promise.all([mail.enqueue({ n: 0 }), mail.enqueueMany([1, 2, 3].map((n) => ({ payload: { n } })))]);

    expect(inserts).toEqual([4]);
    expect(one.payload).toEqual({ n: 0 });
    expect(many.map((j) => j.payload)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  });
});

describe("PostgreSQL: a combined insert the server refuses", () => {
  const schema = uniqueSchema();
  const engine = realEngines({ afterStop: () => dropSchema(schema) });

  it("is written again call by call, so only the call whose row was refused fails", async () => {
    const { store, inserts } = recordingInserts(postgres({ url: DATABASE_URL, schema }));
    const { tw } = await engine({ store });
    // A rule of the user's own schema, as a trigger or a constraint would be: the server refuses the row.
    const client = new pg.Client({ connectionString: DATABASE_URL, options: `-c search_path="${schema}"` });
    await client.connect();
    try {
      await client.query(`ALTER TABLE tickwork_jobs ADD CONSTRAINT no_poison CHECK (payload::text NOT LIKE '%poison%')`);
    } finally {
      await client.end();
    }
    const mail = tw.queue<{ to: string }>("mail");
    const calls = await Promise.allSettled([mail.enqueue({ to: "a" }), mail.enqueue({ to: "poison" }), mail.enqueue({ to: "c" })]);

    expect(inserts).toEqual([3, 1, 1, 1]);
    expect(calls.map((c) => c.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(String((calls[1] as PromiseRejectedResult).reason)).toMatch(/no_poison/);
    const written = await tw.jobs.list({ queue: "mail" });
    expect(written.map((j) => (j.payload as { to: string }).to).sort()).toEqual(["a", "c"]);
  });
});
