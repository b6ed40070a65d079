// Every Node peer installed: both stores, and the admin server with Prometheus metrics over
// @hono/node-server. (tickwork/cloudflare runs in workerd: the cloudflare shape covers it.)
import assert from "node:assert/strict";
import pg from "pg";
import { createTickwork } from "tickwork";
import { sqlite } from "tickwork/sqlite";
import { postgres } from "tickwork/postgres";
import { idempotencyKey } from "tickwork/hono";
import { serve } from "tickwork/server";
import { fakeClock } from "tickwork/testing";

const token = "consumer-token-0123456789";
const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = `tw_consumer_${process.pid}`;

try {
  for (const store of [sqlite(":memory:"), postgres({ url, schema, max: 2 })]) {
    const tw = await createTickwork({ store, clock: fakeClock("2026-01-01T00:00:00Z"), logger: () => {} });
    try {
      const greet = tw.queue<{ name: string }>("greet", { handler: () => {} });
      await greet.enqueue({ name: "ada" });
      await tw.tick();
      assert.equal(typeof idempotencyKey({ idempotency: tw.idempotency }), "function");
      const server = await serve(tw, { token, port: 0 });
      try {
        const metrics = await fetch(`${server.url}metrics`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal(metrics.status, 200);
        assert.match(await metrics.text(), /tickwork_jobs\{queue="greet",status="succeeded"\} 1/);
      } finally {
        await server.close();
      }
    } finally {
      await tw.stop();
    }
    console.log(`  all shape: ${store.name}: a job ran, /metrics served over @hono/node-server`);
  }
} finally {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
}
