import { afterAll, beforeAll, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import type { Store } from "../../src/store/store.js";
import { dropSchema, uniqueSchema, withPg, DATABASE_URL } from "../support/stores.js";

/**
 * Found by the grouped flow benchmark (4 processes, 1,000 groups): a worker's heartbeat and its own
 * settle of the same jobs ran at once on two connections, each locked the rows in its own order, and
 * PostgreSQL broke the deadlock by failing the settle; the jobs' leases then lapsed and they ran
 * twice. The heartbeat now passes over the rows another transaction holds, and counts them as held
 * while they are still the worker's, so the settle never waits on it and no job is taken for lost.
 */
const schema = uniqueSchema();
const NOW = Date.parse("2026-01-01T00:00:00Z");
let store: Store;

beforeAll(async () => {
  store = postgres({ url: DATABASE_URL, schema });
  await store.migrate();
});

afterAll(async () => {
  await store.close();
  await dropSchema(schema);
});

it("a heartbeat renews the rows it can lock, answers at once for a row another transaction holds, and counts it held", async () => {
  await store.queue.insertMany({ queue: "emails", rows: [1, 2, 3].map((n) => ({ payload: JSON.stringify({ n }), key: null, priority: 0, runAt: NOW, maxAttempts: 3, maxAttemptsFromQueue: false, waited: false })), now: NOW });
  const jobs = await store.queue.claimDue({ queue: "emails", limit: 3, now: NOW, leaseUntil: NOW + 30_000, workerId: "w1/emails" });
  expect(jobs).toHaveLength(3);
  const [held, ...free] = jobs.map((j) => j.id);

  const leases = () => withPg(async (client) => {
    const { rows } = await client.query<{ id: string; lease_until: string }>(`SELECT id::text AS id, lease_until::text AS lease_until FROM tickwork_jobs ORDER BY id`);
    return Object.fromEntries(rows.map((r) => [r.id, Number(r.lease_until)]));
  }, schema);

  // Another transaction (a settle in flight) holds one row's lock until it commits.
  const renewed = await withPg(async (client) => {
    await client.query("BEGIN");
    await client.query(`SELECT id FROM tickwork_jobs WHERE id = $1 FOR UPDATE`, [held]);
    try {
      // A heartbeat that waited on the lock would never return here: the lock is released after it.
      return await store.queue.heartbeat({ workerId: "w1/emails", ids: jobs.map((j) => j.id), leaseUntil: NOW + 60_000 });
    } finally {
      await client.query("ROLLBACK");
    }
  }, schema);
  expect([...renewed].sort()).toEqual([held!, ...free].sort());
  expect(await leases()).toEqual({ [held!]: NOW + 30_000, [free[0]!]: NOW + 60_000, [free[1]!]: NOW + 60_000 });

  // Once free, the next heartbeat renews it; a job that is no longer the worker's is not answered.
  await store.queue.settleMany({ workerId: "w1/emails", outcomes: [{ kind: "succeeded", id: free[0]!, attempt: 1 }], now: NOW });
  const next = await store.queue.heartbeat({ workerId: "w1/emails", ids: jobs.map((j) => j.id), leaseUntil: NOW + 90_000 });
  expect([...next].sort()).toEqual([held!, free[1]!].sort());
  expect((await leases())[held!]).toBe(NOW + 90_000);
});
