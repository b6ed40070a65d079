import { openSqlite, type SqliteDriver } from "./sqlite-driver.js";
import { sqliteStore } from "./sqlite-store.js";
import type { Store } from "./store.js";

export { SQLITE_DRIVERS, SqliteDriverUnavailableError, type SqliteDriver } from "./sqlite-driver.js";

export interface SqliteOptions {
  /** How long a write waits for another process's write lock before failing; default 5000 ms. */
  busyTimeoutMs?: number;
  /**
   * Which SQLite opens the file; default "auto": bun:sqlite under Bun, node:sqlite on Node 22.13 and
   * later, else the better-sqlite3 package (an optional peer: `npm install better-sqlite3`). All
   * three read and write the same file format, so a database moves between them as it is.
   */
  driver?: SqliteDriver;
}

/**
 * The zero-setup store: one SQLite file (or `":memory:"`), in WAL mode so readers never block the
 * writer. `synchronous = NORMAL` in WAL mode keeps every committed transaction across a process
 * crash; only an OS crash or power loss can lose the last commits (SQLite's documented trade-off).
 * The store is named for the file and the driver, e.g. `sqlite(./tickwork.db, node:sqlite)`.
 */
export function sqlite(path: string, options: SqliteOptions = {}): Store {
  const connection = openSqlite(path, options);
  return sqliteStore(connection.executor, {
    name: `sqlite(${path}, ${connection.driver})`,
    maxParams: connection.maxParams,
    close: () => connection.close(),
  });
}
