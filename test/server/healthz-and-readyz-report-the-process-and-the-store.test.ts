import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import { DatabaseProxy } from "../support/database-proxy.js";
import { allStoreCases, dropSchema, sqliteFileCase, uniqueSchema } from "../support/stores.js";
import { adminFor } from "./support/admin.js";

describe.each(allStoreCases())("/healthz and /readyz ($name)", (storeCase) => {
  const admin = adminFor(storeCase);

  it("healthz says the process is up; readyz says the store answers at the latest schema", async () => {
    const a = await admin();
    expect(await a.request("GET", "/healthz", { token: null })).toMatchObject({ status: 200, body: { status: "ok" } });
    const ready = await a.request("GET", "/readyz", { token: null });
    expect(ready.status).toBe(200);
    const { current, latest } = await a.tw.store.schemaVersion();
    expect(current).toBe(latest);
    expect(ready.body).toEqual({ status: "ready", schema: { current, latest } });
  });

});

describe("PostgreSQL going away", () => {
  const proxy = new DatabaseProxy();
  let schema = "";
  const admin = adminFor({
    name: "postgres",
    make: () => postgres({ url: proxy.url, schema: (schema = uniqueSchema()) }),
    reopen: () => postgres({ url: proxy.url, schema }),
    cleanup: async () => {
      await proxy.close();
      await dropSchema(schema);
    },
  });

  it("readyz and the API answer 503 while the store cannot be reached, healthz stays 200, and all recover", async () => {
    await proxy.open();
    const a = await admin();
    a.tw.queue("mail", { handler: () => {} });
    expect((await a.request("GET", "/readyz", { token: null })).status).toBe(200);

    await proxy.close();
    const ready = await a.request("GET", "/readyz", { token: null });
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ status: "unavailable", reason: "the store cannot be reached" });
    expect(a.named("store.error")).toMatchObject([{ operation: "readyz" }]);
    const queues = await a.get("/api/queues");
    expect(queues.status).toBe(503);
    expect(queues.body).toEqual({ error: "store_unavailable", code: "TW_STORE_UNAVAILABLE", message: "the store cannot be reached; try again" });
    expect((await a.request("GET", "/healthz", { token: null })).status).toBe(200);

    await proxy.open();
    expect((await a.request("GET", "/readyz", { token: null })).status).toBe(200);
    expect((await a.get("/api/queues")).status).toBe(200);
  });
});

describe("/readyz and the schema version", () => {
  const storeCase = sqliteFileCase();
  const admin = adminFor(storeCase);

  it("is 503 while migrations are pending, and when newer code migrated the database", async () => {
    const a = await admin();
    const { latest } = await a.tw.store.schemaVersion();
    const db = new Database(a.tw.store.name.slice("sqlite(".length, a.tw.store.name.lastIndexOf(", ")));
    try {
      db.prepare("DELETE FROM tickwork_migrations WHERE version = ?").run(latest);
      expect(await a.request("GET", "/readyz", { token: null })).toMatchObject({
        status: 503,
        body: { status: "unavailable", reason: "migrations are pending", schema: { current: latest - 1, latest } },
      });
      db.prepare("INSERT INTO tickwork_migrations (version, name, applied_at) VALUES (?, 'a', 0), (?, 'b', 0)").run(latest, latest + 1);
      expect(await a.request("GET", "/readyz", { token: null })).toMatchObject({
        status: 503,
        body: { status: "unavailable", reason: "the database was migrated by newer code", schema: { current: latest + 1, latest } },
      });
    } finally {
      db.close();
    }
  });
});
