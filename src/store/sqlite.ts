import Database from "better-sqlite3";
import { BETTER_SQLITE_MAX_PARAMS, betterSqliteExecutor } from "./better-sqlite3.js";
import { sqliteStore } from "./sqlite-store.js";
import type { Store } from "./store.js";

export interface SqliteOptions {
  /** How long a write waits for another process's write lock before failing; default 5000 ms. */
  busyTimeoutMs?: number;
}

/**
 * The zero-setup store: one SQLite file (or `":memory:"`), in WAL mode so readers never block the
 * writer. `synchronous = NORMAL` in WAL mode keeps every committed transaction across a process
 * crash; only an OS crash or power loss can lose the last commits (SQLite's documented trade-off).
 */
export function sqlite(path: string, options: SqliteOptions = {}): Store {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  return sqliteStore(betterSqliteExecutor(db), { name: `sqlite(${path})`, maxParams: BETTER_SQLITE_MAX_PARAMS, close: () => db.close() });
}
