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
import { createHttpClient } from "tickwork/http";
import { verifyWebhook, webhookSender } from "tickwork/delivery";
import { fanoutReceiver } from "tickwork/fanout";
import { slackSink } from "tickwork/notify";
import type { Cache } from "tickwork/cache";
import { DuplicateRequestError } from "tickwork/idempotency";

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
      // The modules' subpaths: each loads and its names are the engine's own.
      assert.equal(typeof createHttpClient({ baseUrl: "http://127.0.0.1:1" }).get, "function");
      assert.equal(typeof webhookSender({ url: "http://127.0.0.1:1", secret: "whsec_Y29uc3VtZXItc2VjcmV0LTAxMjM0NTY3" }), "function");
      assert.equal(typeof verifyWebhook, "function");
      assert.equal(typeof fanoutReceiver, "function");
      assert.equal(slackSink({ url: "https://hooks.slack.com/services/T/B/x" }).kind, "slack");
      const noCache: Cache | null = null;
      assert.equal(noCache, null);
      assert.equal(typeof DuplicateRequestError, "function");
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
