import { StoreSetupError, TickworkError } from "../core/errors.js";
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
  const connection = opened(path, options);
  return sqliteStore(connection.executor, {
    name: `sqlite(${path}, ${connection.driver})`,
    maxParams: connection.maxParams,
    close: () => connection.close(),
  });
}

/**
 * Opens the file, or says in one line what to do when it cannot be (`StoreSetupError`): the drivers'
 * own errors name neither the path nor the remedy. A missing peer driver keeps its own error.
 */
function opened(path: string, options: SqliteOptions): ReturnType<typeof openSqlite> {
  try {
    return openSqlite(path, options);
  } catch (error) {
    if (error instanceof TickworkError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: unknown } | null)?.code;
    const remedy = /directory does not exist/i.test(message)
      ? "create its directory first"
      : code === "SQLITE_NOTADB" || /not a database/i.test(message)
        ? "give tickwork a file of its own, or a new path"
        : "check that the path is a file (or a place for one) this process may read and write";
    throw new StoreSetupError(`cannot open the SQLite database ${path}: ${message}: ${remedy}`, { cause: error });
  }
}
