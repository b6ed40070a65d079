// Types only: better-sqlite3 is an optional peer, loaded when a store opens with it.
import type Database from "better-sqlite3";
import { rowObjects, type SqlValue, type SqliteConnection, type SqliteExecutor } from "../db/sqlite-executor.js";
import { requirePeer } from "./peer.js";

/** Bound values per statement on better-sqlite3 (its SQLITE_MAX_VARIABLE_NUMBER). */
export const BETTER_SQLITE_MAX_PARAMS = 32_766;

/** better-sqlite3 behind the executor seam, with every statement prepared once and reused. */
export function betterSqliteExecutor(db: Database.Database): SqliteExecutor {
  // A statement that returns rows returns them as arrays, its column names kept beside it (see rowObjects).
  const cache = new Map<string, { stmt: Database.Statement; names: string[] | null }>();
  const prepared = (sql: string) => {
    let entry = cache.get(sql);
    if (!entry) {
      const stmt = db.prepare(sql);
      cache.set(sql, (entry = { stmt, names: stmt.reader ? stmt.columns().map((c) => c.name) : null }));
      if (entry.names) stmt.raw(true);
    }
    return entry;
  };
  return {
    all<T>(sql: string, params: readonly SqlValue[] = []): T[] {
      const { stmt, names } = prepared(sql);
      if (names) return rowObjects(stmt.all(...params), names) as T[];
      stmt.run(...params);
      return [];
    },
    run: (sql, params = []) => prepared(sql).stmt.run(...params).changes,
    exec: (sql) => void db.exec(sql),
    transaction: (fn) => db.transaction(fn).immediate(),
  };
}

/** The better-sqlite3 constructor; `usedBy` says in a MissingPeerError what needed it. */
export function loadBetterSqlite(usedBy: string): typeof Database {
  return requirePeer<typeof Database>("better-sqlite3", usedBy);
}

/** Opens `path` with a loaded better-sqlite3. */
export function openBetterSqlite(BetterSqlite: typeof Database, path: string): SqliteConnection {
  const db = new BetterSqlite(path);
  return { driver: "better-sqlite3", executor: betterSqliteExecutor(db), maxParams: BETTER_SQLITE_MAX_PARAMS, close: () => db.close() };
}
