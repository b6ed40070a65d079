import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import type { Store } from "../../src/store/store.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";
import { within } from "../support/real-time.js";

/**
 * Two tickworks in two schemas of one database, with a queue of the same name. The queue's locks are
 * advisory locks, which PostgreSQL keeps per database: keyed by queue name alone, one schema's claim or
 * slot holding would wait on (or, for a group, pass over) the other's.
 */
const [schemaA, schemaB] = [uniqueSchema(), uniqueSchema()];
let a: Store;
let b: Store;

beforeAll(async () => {
  a = postgres({ url: DATABASE_URL, schema: schemaA });
  b = postgres({ url: DATABASE_URL, schema: schemaB });
  await a.migrate();
  await b.migrate();
});
afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
  await Promise.all([dropSchema(schemaA), dropSchema(schemaB)]);
});

it("a transaction holding a queue's slots lock in one schema holds up that queue in its own schema only", async () => {
  const holder = new pg.Client({ connectionString: DATABASE_URL, options: `-c search_path="${schemaB}"` });
  await holder.connect();
  const now = Date.now();
  const hold = (store: Store, workerId: string) => store.queue.holdSlots({ queue: "emails", workerId, want: 1, cap: 2, now, until: now + 60_000 });
  let sameSchemaDone = false;
  let sameSchema: Promise<unknown> | undefined;
  try {
    // Schema B's queue "emails": its slots lock taken and kept by a transaction left open.
    await holder.query("BEGIN");
    await holder.query("SELECT * FROM tickwork_hold_slots('emails', 'worker-b1', 1, 2, $1, $2)", [now, now + 60_000]);
    sameSchema = hold(b, "worker-b2").then(() => (sameSchemaDone = true));

    // Schema A's queue of the same name goes on.
    expect(await within(hold(a, "worker-a"), 10_000, "schema A's slots while schema B holds its queue's lock")).toMatchObject({ held: 1 });
    // Schema B's own second holder is still waiting for the open transaction.
    expect(sameSchemaDone).toBe(false);
  } finally {
    await holder.query("ROLLBACK");
    await holder.end();
  }
  await within(sameSchema!, 10_000, "schema B's second holder once the transaction ended");
  expect(sameSchemaDone).toBe(true);
});
