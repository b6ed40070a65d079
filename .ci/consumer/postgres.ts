// The PostgreSQL-only shape: pg is the one peer installed (with @types/pg, which tickwork itself does
// not need). The user's own pg.Pool goes in as tickwork's `pool`, so its type is checked against
// tickwork's PostgresPool. tickwork/sqlite imports without better-sqlite3 and its better-sqlite3
// driver fails when called.
import assert from "node:assert/strict";
import pg from "pg";
import { createTickwork } from "tickwork";
import { postgres, type PostgresPool } from "tickwork/postgres";
import { sqlite } from "tickwork/sqlite";
import { idempotencyKey } from "tickwork/hono";
import { createAdminApp } from "tickwork/server";
import { fakeClock } from "tickwork/testing";
import { expectMissingPeer } from "./missing-peer.js";

const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = `tw_consumer_${process.pid}`;
const pool = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schema}` });
const asTickworkPool: PostgresPool = pool;
await pool.query(`CREATE SCHEMA ${schema}`);
try {
  const tw = await createTickwork({ store: postgres({ pool: asTickworkPool }), clock: fakeClock("2026-01-01T00:00:00Z"), logger: () => {} });
  const greeted: string[] = [];
  const greet = tw.queue<{ name: string }>("greet", { handler: (job) => void greeted.push(job.payload.name) });
  await greet.enqueue({ name: "ada" });
  await tw.tick();
  assert.deepEqual(greeted, ["ada"]);
  const admin = createAdminApp(tw, { token: "consumer-token-0123456789" });
  assert.equal((await admin.app.request("/healthz")).status, 200);
  admin.close();
  assert.equal(typeof idempotencyKey({ idempotency: tw.idempotency }), "function");
  await tw.stop();
} finally {
  await pool.query(`DROP SCHEMA ${schema} CASCADE`);
  await pool.end();
}

// On Node 22.13+ the default driver is node:sqlite, which needs no package: ask for better-sqlite3.
await expectMissingPeer(() => sqlite(":memory:", { driver: "better-sqlite3" }), "better-sqlite3");
console.log(`  postgres shape: ran a job on PostgreSQL (schema ${schema}, dropped) through the user's own pg.Pool`);
