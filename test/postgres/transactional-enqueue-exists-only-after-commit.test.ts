import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";
import { deferred, eventually, realEngines, within } from "../support/real-time.js";

describe("PostgreSQL: an enqueue with the caller's own client ({ tx })", () => {
  const schema = uniqueSchema();
  const engine = realEngines({ afterStop: () => dropSchema(schema) });
  let client: pg.Client | undefined;
  // Registered after realEngines, so it runs first: the client ends before the schema is dropped.
  afterEach(async () => {
    await client?.end();
    client = undefined;
  });

  it("leaves no job when the transaction rolls back, and is run by another engine's worker once it commits", async () => {
    // The worker sleeps an hour between polls: only the NOTIFY sent at commit can wake it.
    const consumer = await engine({ store: postgres({ url: DATABASE_URL, schema }), pollInterval: "1h", rescueInterval: "1h" });
    const ran: number[] = [];
    const committedRan = deferred<string>();
    consumer.tw.queue<{ invoice: number }>("invoices", {
      lease: "1h",
      handler: (job) => {
        ran.push(job.payload.invoice);
        committedRan.resolve(job.id);
      },
    });
    await consumer.tw.start();

    const producer = await engine({ store: postgres({ url: DATABASE_URL, schema }) });
    const invoices = producer.tw.queue<{ invoice: number }>("invoices");
    client = new pg.Client({ connectionString: DATABASE_URL, options: `-c search_path="${schema}"` });
    await client.connect();
    await client.query(`CREATE TABLE invoices (id integer PRIMARY KEY)`);

    await client.query("BEGIN");
    await client.query(`INSERT INTO invoices (id) VALUES (1)`);
    const rolledBack = await invoices.enqueue({ invoice: 1 }, { tx: client });
    await client.query("ROLLBACK");
    expect(await producer.tw.jobs.get(rolledBack.id)).toBeNull();
    expect((await client.query(`SELECT count(*)::int AS n FROM tickwork_jobs`)).rows).toEqual([{ n: 0 }]);

    await client.query("BEGIN");
    await client.query(`INSERT INTO invoices (id) VALUES (2)`);
    const committed = await invoices.enqueue({ invoice: 2 }, { tx: client });
    // Not visible outside the transaction yet, so no worker can have taken it.
    expect(await producer.tw.jobs.get(committed.id)).toBeNull();
    expect(ran).toEqual([]);
    await client.query("COMMIT");

    expect(await within(committedRan.promise, 5_000, "the committed job runs in the consumer engine")).toBe(committed.id);
    await eventually(async () => (await producer.tw.jobs.get(committed.id))?.status === "succeeded", "the committed job to succeed");
    expect(ran).toEqual([2]);
    const [counts] = await producer.tw.jobs.counts("invoices");
    expect(counts?.counts).toMatchObject({ pending: 0, running: 0, succeeded: 1 });
    expect((await client.query(`SELECT id FROM invoices`)).rows).toEqual([{ id: 2 }]);
  });
});
