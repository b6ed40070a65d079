import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SETTLE_MANY, SETTLE_SUCCEEDED } from "../../src/queue/store/postgres/sql.js";
import { postgres } from "../../src/store/postgres.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../support/stores.js";

/**
 * Regression: statistics gathered while the queue is idle say about one job is running. A generic
 * plan of the batched settle built on them once drove the join from the running-only partial
 * indexes, comparing every running row with every outcome (seconds per batch under a backlog).
 * The statement must reach its rows by primary key whatever the statistics say. It is planned on
 * every call now (REPLAN in src/queue/store/postgres/settle.ts); the generic plan is checked as well, as the
 * shape of the statement, not the plan cache, is what keeps the running-only indexes out.
 */
const schema = uniqueSchema();
let client: pg.Client;

beforeAll(async () => {
  const store = postgres({ url: DATABASE_URL, schema });
  await store.migrate();
  await store.close();
  client = new pg.Client({ connectionString: DATABASE_URL, options: `-c search_path="${schema}"` });
  await client.connect();
  await client.query(
    `INSERT INTO tickwork_jobs (queue, payload, status, run_at, attempts, max_attempts, created_at, finished_at)
     SELECT 'bench', '{}', 'succeeded', 1, 1, 5, 1, 2 FROM generate_series(1, 100000)`,
  );
  await client.query(
    `INSERT INTO tickwork_jobs (queue, payload, status, run_at, attempts, max_attempts, created_at)
     SELECT 'bench', '{}', 'pending', 1, 0, 5, 1 FROM generate_series(1, 12000)`,
  );
  // Statistics taken while idle: no job running.
  await client.query(`ANALYZE tickwork_jobs`);
  await client.query(`UPDATE tickwork_jobs SET status = 'running', attempts = 1, worker_id = 'w', lease_until = 99999999999999 WHERE status = 'pending'`);
});

afterAll(async () => {
  await client?.end();
  await dropSchema(schema);
});

const array = (values: (string | number)[]) => `'{${values.join(",")}}'`;
const statements = [
  {
    name: "the settle of mixed outcomes",
    sql: SETTLE_MANY,
    args: (ids: string[]) =>
      `${array(ids)}, ${array(ids.map(() => 1))}, ${array(ids.map(() => "succeeded"))}, ${array(ids.map(() => "NULL"))}, ${array(ids.map(() => "NULL"))}, ${array(ids.map(() => "NULL"))}, 5, ${array(ids.map(() => "running"))}, 'w', '{}'`,
  },
  {
    name: "the settle of successes",
    sql: SETTLE_SUCCEEDED,
    // No results: a batch of jobs that returned nothing sends an empty array.
    args: (ids: string[]) => `${array(ids)}, ${array(ids.map(() => 1))}, 5, ${array(ids.map(() => "running"))}, '{}', '{}', 'w'`,
  },
];

describe.each(statements)("$name", ({ sql, args }) => {
  it.each(["force_custom_plan", "force_generic_plan"])("with stale statistics, the %s reads jobs through the primary key only", async (mode) => {
    const ids = (await client.query<{ id: string }>(`SELECT id::text AS id FROM tickwork_jobs WHERE status = 'running' ORDER BY id LIMIT 1000`)).rows.map((r) => r.id);
    await client.query(`SET plan_cache_mode = ${mode}`);
    await client.query(`PREPARE settle AS ${sql}`);
    try {
      const { rows } = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN EXECUTE settle(${args(ids)})`);
      const plan = rows.map((r) => r["QUERY PLAN"]).join("\n");
      expect(plan, plan).toContain("tickwork_jobs_pkey");
      expect(plan, plan).not.toMatch(/tickwork_jobs_(worker|lease)|Seq Scan on tickwork_jobs/);
    } finally {
      await client.query(`DEALLOCATE settle`);
      await client.query(`RESET plan_cache_mode`);
    }
  });
});
