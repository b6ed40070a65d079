import type Database from "better-sqlite3";
import type { SqlValue, SqliteExecutor } from "../db/sqlite-executor.js";

/** Bound values per statement on better-sqlite3 (its SQLITE_MAX_VARIABLE_NUMBER). */
export const BETTER_SQLITE_MAX_PARAMS = 32_766;

/** better-sqlite3 behind the executor seam, with every statement prepared once and reused. */
export function betterSqliteExecutor(db: Database.Database): SqliteExecutor {
  const cache = new Map<string, Database.Statement>();
  const prepare = (sql: string) => {
    let stmt = cache.get(sql);
    if (!stmt) cache.set(sql, (stmt = db.prepare(sql)));
    return stmt;
  };
  return {
    all<T>(sql: string, params: readonly SqlValue[] = []): T[] {
      const stmt = prepare(sql);
      if (stmt.reader) return stmt.all(...params) as T[];
      stmt.run(...params);
      return [];
    },
    run: (sql, params = []) => prepare(sql).run(...params).changes,
    exec: (sql) => void db.exec(sql),
    transaction: (fn) => db.transaction(fn).immediate(),
  };
}
