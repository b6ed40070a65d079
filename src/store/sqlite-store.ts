import { SqliteQueueStore } from "../queue/store/sqlite.js";
import { SqlScheduleStore } from "../schedule/sql.js";
import { SqlCacheStore } from "../cache/sql.js";
import type { CacheStore } from "../cache/store.js";
import { SqlIdempotencyStore } from "../idempotency/sql.js";
import { SqlDeliveryStore } from "../delivery/sql.js";
import { SqlFanoutStore } from "../fanout/sql.js";
import { sqliteSqlDb } from "../db/sql-db.js";
import type { SqliteExecutor } from "../db/sqlite-executor.js";
import { migrateSqlite, sqliteSchemaVersion } from "./migrate.js";
import { latestVersion } from "./migrations/migration.js";
import { sqliteMigrations } from "./migrations/sqlite.js";
import type { Store } from "./store.js";

export interface SqliteStoreOptions {
  /** Names the store in `engine.started` and `status()`. */
  name: string;
  /** Most values one statement may bind on this engine. */
  maxParams: number;
  /** Where `tw.cache` keeps its values; default the store's own table. */
  cache?: CacheStore;
  /** Releases the database; default nothing. */
  close?: () => void;
  /** The largest job payload a queue may be set to take (see QueueStore.maxPayloadBytes); default no ceiling but the library's own. */
  maxPayloadBytes?: number;
}

/** A store on one SQLite connection, better-sqlite3's in Node or a Durable Object's: the same SQL, migrations and modules. */
export function sqliteStore(executor: SqliteExecutor, options: SqliteStoreOptions): Store {
  const sql = sqliteSqlDb(executor, options.maxParams);
  return {
    name: options.name,
    queue: new SqliteQueueStore(executor, sql, options.maxPayloadBytes),
    schedule: new SqlScheduleStore(sql),
    cache: options.cache ?? new SqlCacheStore(sql),
    idempotency: new SqlIdempotencyStore(sql),
    delivery: new SqlDeliveryStore(sql),
    fanout: new SqlFanoutStore(sql),
    migrate: async () => migrateSqlite(executor, sqliteMigrations),
    schemaVersion: async () => ({ current: sqliteSchemaVersion(executor), latest: latestVersion(sqliteMigrations) }),
    close: async () => options.close?.(),
  };
}
