import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLAIM_DUE, FIND_KEY_HOLDERS, HEARTBEAT, NEXT_WAKE, PRUNE_FINISHED, RESCUE_EXPIRED } from "../../src/queue/store/postgres/sql.js";
import { postgres } from "../../src/store/postgres.js";
import { planSteps, preparedPlan, type PlanNode } from "../support/pg-plans.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";

/**
 * "No query's cost grows with the number of finished rows" (DESIGN.md): with 100,000 finished jobs
 * and a handful of live ones, the hot statements must reach the live rows through the partial
 * indexes and never scan the table. Checked under the custom plan (built for the values), and, for
 * the statements the store prepares once per connection, the generic plan too (built once for any
 * values, which named statements switch to after a few executions). The statements that reach a
 * batch by id are planned on every call (REPLAN in src/queue/store/postgres/settle.ts), so only their custom plan ever runs.
 */

const NOW = Date.parse("2026-01-01T00:00:00Z");
const FINISHED = 100_000;

const indexesOf = (steps: string[]) => steps.flatMap((s) => /\((tickwork_jobs_\w+)\)$/.exec(s)?.[1] ?? []);

describe("PostgreSQL: the hot queries on a table of mostly finished jobs", () => {
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
    // Finished history in two queues, keyed as producers that dedupe would leave them.
    await client.query(
      `INSERT INTO tickwork_jobs (queue, payload, key, status, priority, run_at, attempts, max_attempts, created_at, started_at, finished_at)
       SELECT CASE WHEN g % 4 = 0 THEN 'reports' ELSE 'emails' END, '{"n":1}', 'order-' || g, 'succeeded', 0,
              $1::bigint - g * 1000, 1, 5, $1::bigint - g * 1000, $1::bigint - g * 1000, $1::bigint - g * 1000 + 50
       FROM generate_series(1, $2::int) AS g`,
      [NOW, FINISHED],
    );
    // A few live jobs: pending (due and in the future) and running (leases live and lapsed).
    await client.query(
      `INSERT INTO tickwork_jobs (queue, payload, key, status, priority, run_at, attempts, max_attempts, created_at)
       SELECT 'emails', '{"n":2}', 'live-' || g, 'pending', g % 3, $1::bigint + (g - 5) * 1000, 0, 5, $1::bigint - 60000
       FROM generate_series(1, 10) AS g`,
      [NOW],
    );
    await client.query(
      `INSERT INTO tickwork_jobs (queue, payload, status, run_at, attempts, max_attempts, worker_id, lease_until, created_at, started_at)
       SELECT 'emails', '{"n":3}', 'running', $1::bigint - 30000, 1, 5, 'w1/emails', $1::bigint + (g - 2) * 10000, $1::bigint - 60000, $1::bigint - 30000
       FROM generate_series(1, 4) AS g`,
      [NOW],
    );
    await client.query(`ANALYZE tickwork_jobs`);
  });

  afterAll(async () => {
    await client?.end();
    await dropSchema(schema);
  });

  // `uses`: for each group, the plan must read at least one of its indexes.
  const PENDING = ["tickwork_jobs_claim"];
  const RUNNING = ["tickwork_jobs_lease"];
  const statements = [
    { name: "the claim", sql: CLAIM_DUE, params: ["emails", NOW, 10, "w2/emails", NOW + 20_000, 5, 10], uses: [PENDING], prepared: false },
    { name: "the heartbeat (by the ids the worker holds)", sql: HEARTBEAT, params: ["w1/emails", NOW + 20_000, "{100011,100012,100013}"], uses: [["tickwork_jobs_pkey", "tickwork_jobs_lease"]], prepared: false },
    { name: "the rescue of lapsed leases", sql: RESCUE_EXPIRED, params: [NOW, ["emails", "reports"], 1000, "lease expired"], uses: [["tickwork_jobs_lease"]], prepared: false },
    { name: "the next wake-up (a due job or a lapsing lease)", sql: NEXT_WAKE, params: [["emails", "reports"], true], uses: [PENDING, RUNNING], prepared: true },
    { name: "the dedupe lookup by key", sql: FIND_KEY_HOLDERS, params: ["emails", ["live-3", "order-17"]], uses: [["tickwork_jobs_key"]], prepared: true },
    // The oldest finished rows (g > 86,400) are past a day's retention, so the prune has rows to delete.
    { name: "the prune of finished jobs past retention", sql: PRUNE_FINISHED, params: ["succeeded", NOW - 86_400_000, 1000], uses: [["tickwork_jobs_finished"]], prepared: false },
  ];

  function expectIndexed(steps: string[], uses: string[][]): void {
    const plan = steps.join(" > ");
    expect(steps.filter((s) => s.startsWith("Seq Scan(tickwork_jobs)")), plan).toEqual([]);
    for (const group of uses) expect(indexesOf(steps).some((i) => group.includes(i)), `${plan}\nreads none of ${group.join(", ")}`).toBe(true);
  }

  describe.each(statements)("$name", ({ sql, params, uses }) => {
    it("uses a partial index and never scans the table (custom plan)", async () => {
      const { rows } = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${sql}`, params);
      expectIndexed(planSteps(rows[0]!["QUERY PLAN"][0].Plan), uses);
    });
  });

  describe.each(statements.filter((s) => s.prepared))("$name, prepared once per connection", ({ sql, params, uses }) => {
    it("uses a partial index and never scans the table (generic plan)", async () => {
      expectIndexed(await preparedPlan(client, sql, params, "force_generic_plan"), uses);
    });
  });
});
