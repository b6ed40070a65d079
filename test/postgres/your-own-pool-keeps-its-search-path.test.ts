import pg from "pg";
import { afterEach, expect, it } from "vitest";
import { createTickwork } from "../../src/tickwork.js";
import { postgres } from "../../src/store/postgres.js";
import { DATABASE_URL, dropSchema, uniqueSchema, withPg } from "../support/stores.js";

let schema: string | undefined;
afterEach(async () => {
  if (schema) await dropSchema(schema);
});

it("a caller's pool whose search_path names a schema gets tickwork's tables in that schema, not in public", async () => {
  schema = uniqueSchema();
  await withPg((c) => c.query(`CREATE SCHEMA "${schema}"`));
  const pool = new pg.Pool({ connectionString: DATABASE_URL, options: `-c search_path="${schema}"` });
  try {
    const tw = await createTickwork({ store: postgres({ pool }), logger: () => {}, handleSignals: false });
    const job = await tw.queue("q").enqueue({ n: 1 });
    expect(await tw.jobs.get(job.id)).toMatchObject({ id: job.id, status: "pending" });
    const version = await tw.store.schemaVersion();
    expect(version.current).toBe(version.latest);
    await tw.stop();
    const rows = await withPg((c) => c.query(`SELECT id::text AS id FROM "${schema}".tickwork_jobs`));
    expect(rows.rows).toEqual([{ id: job.id }]);
  } finally {
    // tickwork never ends a pool it did not create.
    await pool.end();
  }
});
