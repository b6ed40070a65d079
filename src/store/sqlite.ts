import Database from "better-sqlite3";
import { SqliteQueueStore } from "../queue/sqlite.js";
import { SqlScheduleStore } from "../schedule/sql.js";
import { SqlCacheStore } from "../cache/sql.js";
import { SqlIdempotencyStore } from "../idempotency/sql.js";
import { SqlDeliveryStore } from "../delivery/sql.js";
import { SqlFanoutStore } from "../fanout/sql.js";
import { sqliteSqlDb } from "../db/sql-db.js";
import { migrateSqlite, sqliteSchemaVersion } from "./migrate.js";
import { latestVersion } from "./migrations/migration.js";
import { sqliteMigrations } from "./migrations/sqlite.js";
import { betterSqliteExecutor } from "../db/better-sqlite3.js";
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
  const executor = betterSqliteExecutor(db);
  const sql = sqliteSqlDb(executor);
  return {
    name: `sqlite(${path})`,
    queue: new SqliteQueueStore(executor),
    schedule: new SqlScheduleStore(sql),
    cache: new SqlCacheStore(sql),
    idempotency: new SqlIdempotencyStore(sql),
    delivery: new SqlDeliveryStore(sql),
    fanout: new SqlFanoutStore(sql),
    migrate: async () => migrateSqlite(executor, sqliteMigrations),
    schemaVersion: async () => ({ current: sqliteSchemaVersion(executor), latest: latestVersion(sqliteMigrations) }),
    close: async () => {
      db.close();
    },
  };
}
