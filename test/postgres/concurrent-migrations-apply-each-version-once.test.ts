import { afterEach, describe, expect, it } from "vitest";
import { postgresMigrations } from "../../src/store/migrations/postgres.js";
import { postgres } from "../../src/store/postgres.js";
import type { Store } from "../../src/store/store.js";
import { DATABASE_URL, dropSchema, uniqueSchema, withPg } from "../support/stores.js";

describe("PostgreSQL: processes starting together on a fresh schema", () => {
  const schema = uniqueSchema();
  let stores: Store[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await dropSchema(schema);
  });

  it("all migrate at once; each version is applied exactly once and the schema is current", async () => {
    stores = Array.from({ length: 8 }, () => postgres({ url: DATABASE_URL, schema }));
    const results = await Promise.allSettled(stores.map((s) => s.migrate()));
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);

    const applied = await withPg((client) => client.query(`SELECT version, count(*)::int AS n FROM "${schema}".tickwork_migrations GROUP BY version ORDER BY version`));
    expect(applied.rows).toEqual(postgresMigrations.map((m) => ({ version: m.version, n: 1 })));
    const latest = Math.max(...postgresMigrations.map((m) => m.version));
    for (const store of stores) expect(await store.schemaVersion()).toEqual({ current: latest, latest });

    // The schema works for every one of them.
    const [id] = await stores[3]!.queue.insertMany({ queue: "q", rows: [{ payload: "{}", key: null, priority: 0, runAt: 0, maxAttempts: 1 }], now: 0 });
    expect(await stores[7]!.queue.get({ id: id!.id })).toMatchObject({ queue: "q", status: "pending" });
  });
});
