// The SQLite-only shape: better-sqlite3 is the one peer installed (Node 22.13+ could use node:sqlite
// and install nothing; this shape asks for better-sqlite3, the driver on Node 20). Every subpath that runs in Node
// imports; the ones whose peers are missing fail only when called, naming the package.
import assert from "node:assert/strict";
import { createTickwork } from "tickwork";
import { sqlite } from "tickwork/sqlite";
import { postgres } from "tickwork/postgres";
import { idempotencyKey } from "tickwork/hono";
import { adminApp, createAdminApp, serve } from "tickwork/server";
import { fakeClock } from "tickwork/testing";
import { expectMissingPeer } from "./missing-peer.js";

const token = "consumer-token-0123456789";
const tw = await createTickwork({ store: sqlite(":memory:", { driver: "better-sqlite3" }), clock: fakeClock("2026-01-01T00:00:00Z"), logger: () => {} });
const greeted: string[] = [];
const greet = tw.queue<{ name: string }>("greet", { handler: (job) => void greeted.push(job.payload.name) });
await greet.enqueue({ name: "ada" });
await tw.tick();
assert.deepEqual(greeted, ["ada"]);

const admin = createAdminApp(tw, { token });
assert.equal((await admin.app.request("/healthz")).status, 200);
admin.close();
assert.equal(typeof idempotencyKey({ idempotency: tw.idempotency }), "function");

await expectMissingPeer(() => postgres("postgres://127.0.0.1:5432/none"), "pg");
await expectMissingPeer(() => adminApp(tw, { token }), "prom-client");
await expectMissingPeer(() => serve(tw, { token, metrics: false, port: 0 }), "@hono/node-server");
await tw.stop();
console.log("  sqlite shape: ran a job on SQLite, served /healthz from createAdminApp");
