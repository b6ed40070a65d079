import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/core/errors.js";
import { postgres } from "../../src/store/postgres.js";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import { DATABASE_URL, withPg } from "../support/stores.js";

/**
 * `postgres({ url, schema })` puts tickwork's tables in `schema`, whatever characters its name holds
 * (a space, a quote, a backslash): the name is quoted in SQL and escaped in the connection's options,
 * which the server splits at spaces. Options that cannot work are refused with InvalidInputError naming
 * the field, before any connection is made, instead of PostgreSQL's own error at the first query.
 */
describe("PostgreSQL store options", () => {
  const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
  const dropped: string[] = [];
  let tw: Tickwork | undefined;
  afterEach(async () => {
    await tw?.stop();
    tw = undefined;
    for (const schema of dropped.splice(0)) await withPg((c) => c.query(`DROP SCHEMA IF EXISTS ${quoted(schema)} CASCADE`));
  });

  it('a schema named with a space, a quote and a backslash ("tw odd \\"x\\" \\\\ n") holds the tables, and jobs run in it', async () => {
    const schema = `tw odd "x" \\ ${process.pid}`;
    dropped.push(schema);
    tw = await createTickwork({ store: postgres({ url: DATABASE_URL, schema }), logger: () => {}, handleSignals: false });
    const ran: unknown[] = [];
    const q = tw.queue<{ n: number }>("odd", { handler: (job) => void ran.push(job.payload.n) });
    await q.enqueue({ n: 1 });
    expect((await tw.tick()).ran).toBe(1);
    expect(ran).toEqual([1]);
    const tables = await withPg(async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'tickwork_jobs'`, [schema])).rows[0]!.n);
    expect(tables).toBe(1);
  });

  it("options that cannot work are refused naming the field, before any connection", () => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL });
    try {
      const refusals: [unknown, RegExp][] = [
        ["", /postgres: the connection string is empty/],
        [42, /postgres: expected a connection string or \{ url \| pool, schema\?, max\? \}, got 42/],
        [{ url: DATABASE_URL, schema: "" }, /postgres: schema must be a schema's name, got ""/],
        [{ url: DATABASE_URL, schema: "s".repeat(64) }, /postgres: schema must be at most 63 bytes \(PostgreSQL's longest name\), got 64/],
        [{ url: DATABASE_URL, schema: "a\0b" }, /postgres: schema must be a schema's name/],
        [{ url: DATABASE_URL, max: 0 }, /postgres: max must be an integer from 1 to 1000, got 0/],
        [{ url: DATABASE_URL, max: 2.5 }, /postgres: max must be an integer from 1 to 1000/],
        [{ url: 7 }, /postgres: url must be a connection string, got 7/],
        [{ url: DATABASE_URL, pool }, /postgres: give url or pool, not both/],
        [{ pool, schema: "mine" }, /postgres: schema goes with url/],
        [{ pool: {} }, /postgres: pool must be a pg Pool/],
        [{ url: DATABASE_URL, shema: "typo" }, /postgres: unknown option "shema"/],
      ];
      for (const [options, message] of refusals) {
        expect(() => postgres(options as never), String(message)).toThrow(InvalidInputError);
        expect(() => postgres(options as never)).toThrow(message);
      }
    } finally {
      void pool.end();
    }
  });
});
