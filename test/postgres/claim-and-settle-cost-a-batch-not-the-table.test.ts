import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLAIM_DUE, SETTLE_MANY } from "../../src/queue/store/postgres/sql.js";
import { postgres } from "../../src/store/postgres.js";
import { preparedPlan } from "../support/pg-plans.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";

/**
 * Regressions found by the side-by-side benchmark, each a plan whose cost grew with the table:
 * - a backlog just enqueued into a fresh table has no statistics yet (autovacuum analyzes it up to a
 *   minute later); with an index on (queue, run_at) the planner then claimed by reading every due job
 *   and sorting them (external merge on disk at 100,000 jobs), on every claim;
 * - on a small analyzed table (a few thousand rows) the claim and the settle hash-joined their batch
 *   with a sequential scan of the whole table instead of looking the ids up in the primary key;
 * - handed 500 ids it could see, on a table of 20,000 to 100,000 rows not yet analyzed, the planner
 *   priced the settle's 500 random reads above a scan of the whole table.
 * Both statements are planned on every call (REPLAN in src/queue/store/postgres/settle.ts), so the custom plan is
 * the one checked; the generic plan and a table grown from empty are the other test's
 * (batch-lookups-stay-index-probes-as-the-table-grows-from-empty).
 */

const NOW = Date.parse("2026-01-01T00:00:00Z");

describe.each([
  { table: "100,000 pending jobs never analyzed", pending: 100_000, analyze: false },
  { table: "5,000 pending jobs, analyzed", pending: 5_000, analyze: true },
])("PostgreSQL, a table of $table", ({ pending, analyze }) => {
  const schema = uniqueSchema();
  let client: pg.Client;

  beforeAll(async () => {
    const store = postgres({ url: DATABASE_URL, schema });
    try {
      await store.migrate();
    } finally {
      await store.close();
    }
    client = new pg.Client({ connectionString: DATABASE_URL, options: `-c search_path="${schema}"` });
    await client.connect();
    await client.query(
      `INSERT INTO tickwork_jobs (queue, payload, status, priority, run_at, attempts, max_attempts, created_at)
       SELECT 'emails', '{}', 'pending', 0, $1::bigint - g, 0, 5, $1::bigint - g FROM generate_series(1, $2::int) AS g`,
      [NOW, pending],
    );
    if (analyze) await client.query(`ANALYZE tickwork_jobs`);
    await client.query(`UPDATE tickwork_jobs SET status = 'running', attempts = 1 WHERE id <= 500`);
  });

  afterAll(async () => {
    await client?.end();
    await dropSchema(schema);
  });

  it.each(["force_custom_plan"])("the claim walks the claim index to its limit and sorts nothing (%s)", async (mode) => {
    const plan = await preparedPlan(client, CLAIM_DUE, ["emails", NOW, 500, "w1/emails", NOW + 20_000, 5, 500], mode);
    expect(plan, plan.join(" > ")).toContain("Index Scan(tickwork_jobs_claim)");
    expect(plan.some((s) => /^(Bitmap )?Index Scan\(tickwork_jobs_pkey\)$/.test(s)), plan.join(" > ")).toBe(true);
    expect(plan.filter((s) => s.startsWith("Sort") || s.startsWith("Seq Scan") || s.startsWith("Hash")), plan.join(" > ")).toEqual([]);
  });

  it.each(["force_custom_plan"])("the settle looks its batch up in the primary key (%s)", async (mode) => {
    const ids = Array.from({ length: 500 }, (_, i) => i + 1);
    const plan = await preparedPlan(
      client,
      SETTLE_MANY,
      [ids, ids.map(() => 1), ids.map(() => "succeeded"), ids.map(() => null), ids.map(() => null), ids.map(() => 0), NOW, ids.map(() => "running"), ids.map(() => null), []],
      mode,
      ["::bigint[]", "::int[]", "::text[]", "::bigint[]", "::text[]", "::int[]", "", "::text[]", "::text[]", "::bigint[]"],
    );
    expect(plan.some((s) => /^(Bitmap )?Index Scan\(tickwork_jobs_pkey\)$/.test(s)), plan.join(" > ")).toBe(true);
    expect(plan.filter((s) => s.startsWith("Seq Scan")), plan.join(" > ")).toEqual([]);
  });
});
