import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SchemaMismatchError, createTickwork } from "../../../src/index.js";
import { postgres } from "../../../src/store/postgres.js";
import { sqlite } from "../../../src/store/sqlite.js";
import { DATABASE_URL, dropSchema, uniqueSchema, withPg } from "../../support/stores.js";

/**
 * A database whose recorded migration steps are not this version's (an unreleased build migrated it,
 * with steps since squashed into the baseline) is refused at start with SchemaMismatchError, naming
 * the step, and nothing in it changes: no table is created over the ones it has.
 */
describe("a database migrated by another build", () => {
  it("SQLite: the engine refuses it, naming the step, and writes nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tickwork-foreign-"));
    try {
      const path = join(dir, "jobs.db");
      const db = new Database(path);
      db.exec(`CREATE TABLE tickwork_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);
               INSERT INTO tickwork_migrations VALUES (1, 'jobs', 0), (2, 'tasks and cache', 0);`);
      db.close();
      const started = createTickwork({ store: sqlite(path), handleSignals: false, logLevel: "critical" });
      await expect(started).rejects.toThrow(SchemaMismatchError);
      await expect(started).rejects.toMatchObject({ code: "TW_SCHEMA_UNKNOWN", version: 1, recorded: "jobs", expected: "baseline" });
      const after = new Database(path);
      expect(after.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all()).toEqual([{ name: "tickwork_migrations" }]);
      after.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("PostgreSQL: the engine refuses it, naming the step, and writes nothing", async () => {
    const schema = uniqueSchema();
    try {
      await withPg(async (side) => {
        await side.query(`CREATE SCHEMA "${schema}"`);
        await side.query(`CREATE TABLE "${schema}".tickwork_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`);
        await side.query(`INSERT INTO "${schema}".tickwork_migrations VALUES (1, 'jobs', 0), (19, 'attempts', 0)`);
      });
      const started = createTickwork({ store: postgres({ url: DATABASE_URL, schema }), handleSignals: false, logLevel: "critical" });
      await expect(started).rejects.toThrow(SchemaMismatchError);
      await expect(started).rejects.toMatchObject({ code: "TW_SCHEMA_UNKNOWN", version: 1, recorded: "jobs", expected: "baseline" });
      const tables = await withPg(async (side) => (await side.query<{ t: string }>(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1`, [schema])).rows);
      expect(tables).toEqual([{ t: "tickwork_migrations" }]);
    } finally {
      await dropSchema(schema);
    }
  });
});
