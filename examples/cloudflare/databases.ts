import type { D1Database } from "@cloudflare/workers-types/index.ts";
import { durableObjectExecutor, type DurableObjectStorageLike } from "../../src/runtime/cloudflare/index.js";
import type { AppDatabase, SqlParam, Statement } from "../support/database.js";

/**
 * The examples' own tables, on Cloudflare: the same `AppDatabase` the Node examples use, so their
 * SQL (one text for SQLite and PostgreSQL, `$1` placeholders) and the code around it run unchanged.
 * SQLite and D1 both bind `?NNN` by number, so `$1` becomes `?1`.
 */
const numbered = (sql: string) => sql.replace(/\$(\d+)/g, "?$1");

/** A Durable Object's own SQLite (the portfolio's ledger, the aggregator's trackings, the registry's symbols). */
export function objectDatabase(storage: DurableObjectStorageLike, description: string): AppDatabase {
  const db = durableObjectExecutor(storage);
  const run = (s: Statement) => db.all(numbered(s.sql), s.params ?? []);
  return {
    description,
    query: async <T>(sql: string, params: readonly SqlParam[] = []) => run({ sql, params }) as T[],
    // Synchronous statements inside transactionSync: a throw rolls every one of them back.
    transaction: async (statements: readonly Statement[]) => void db.transaction(() => statements.forEach(run)),
    close: async () => {},
  };
}

/**
 * D1, where seed 003 keeps the swaps and the sweep's `competition_state` cursor (not in the
 * scheduler's own storage). A transaction is one `batch()`, which D1 runs atomically.
 */
export function d1Database(db: D1Database, description = "D1"): AppDatabase {
  const prepare = (s: Statement) => db.prepare(numbered(s.sql)).bind(...(s.params ?? []));
  return {
    description,
    query: async <T>(sql: string, params: readonly SqlParam[] = []) => (await prepare({ sql, params }).all<Record<string, unknown>>()).results as T[],
    transaction: async (statements) => {
      if (statements.length) await db.batch(statements.map(prepare));
    },
    close: async () => {},
  };
}
