import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import type { SqliteConnection } from "../../../src/db/sqlite-executor.js";
import { openSqlite } from "../../../src/store/sqlite-driver.js";
import { pgExecutor } from "../../../src/store/pg.js";
import { sqliteSqlDb, type SqlDb } from "../../../src/db/sql-db.js";
import { remoteTransactionFacts } from "../../cloudflare/support/remote-store.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../../support/stores.js";
import { transactionFacts } from "../../support/transaction-facts.js";

/**
 * The SQL seam's transactions on every store, opened as the stores open it: a body that throws, or
 * whose statement fails, leaves nothing behind; a nested body is part of the outer transaction; a
 * body that ends commits everything; a statement outside is never part of a transaction that runs
 * beside it. The same steps (test/support/transaction-facts.ts) run on each, the Durable Object's in
 * workerd.
 */
type Case = { name: string; facts(): Promise<unknown>; cleanup(): Promise<void> };

function sqliteCase(name: string, path: () => string): Case {
  let connection: SqliteConnection | undefined;
  return {
    name,
    facts: () => {
      connection = openSqlite(path());
      return transactionFacts(sqliteSqlDb(connection.executor, connection.maxParams));
    },
    cleanup: async () => void connection?.close(),
  };
}

function sqliteFileCase(): Case {
  const dir = mkdtempSync(join(tmpdir(), "tickwork-tx-"));
  const inner = sqliteCase("sqlite-file", () => join(dir, "tickwork.db"));
  return { ...inner, cleanup: async () => (await inner.cleanup(), rmSync(dir, { recursive: true, force: true })) };
}

function postgresCase(): Case {
  const schema = uniqueSchema();
  const pool = new pg.Pool({ connectionString: DATABASE_URL, options: `-c search_path="${schema}"`, max: 3 });
  return {
    name: "postgres",
    async facts() {
      await pool.query(`CREATE SCHEMA "${schema}"`);
      const db: SqlDb = pgExecutor(pool);
      return transactionFacts(db);
    },
    cleanup: async () => {
      await pool.end();
      await dropSchema(schema);
    },
  };
}

function durableObjectCase(): Case {
  return { name: "durable-object", facts: () => remoteTransactionFacts(`transactions-${Math.random().toString(36).slice(2, 10)}`), cleanup: async () => {} };
}

const cases: (() => Case)[] = [() => sqliteCase("sqlite-memory", () => ":memory:"), sqliteFileCase, postgresCase, durableObjectCase];

for (const make of cases) {
  const store = make();
  describe(`transactions on the SQL seam (${store.name})`, () => {
    afterEach(() => store.cleanup());

    it("commits all of a body's statements or, when the body or a statement throws, none of them", async () => {
      expect(await store.facts()).toEqual({
        thrown: { error: "the body failed" },
        failedStatement: true,
        nested: { error: "the outer body failed" },
        committed: { value: 2 },
        alongside: { error: "the body failed" },
        // Nothing of "thrown", "before-the-failure", "outer", "inner" or "inside".
        rows: ["kept-inner=1", "kept=1", "outside=1", "taken=0"],
      });
    });
  });
}
