import { SqlCacheStore } from "../../cache/sql.js";
import { SqlDeliveryStore } from "../../delivery/sql.js";
import { SqlFanoutStore } from "../../fanout/sql.js";
import type { CacheStore } from "../../cache/store.js";
import { SqlIdempotencyStore } from "../../idempotency/sql.js";
import { SqliteQueueStore } from "../../queue/sqlite.js";
import { SqlScheduleStore } from "../../schedule/sql.js";
import { migrateSqlite, sqliteSchemaVersion } from "../../store/migrate.js";
import { latestVersion } from "../../store/migrations/migration.js";
import { sqliteMigrations } from "../../store/migrations/sqlite.js";
import { sqliteSqlDb } from "../../db/sql-db.js";
import type { Store } from "../../store/store.js";
import { DURABLE_OBJECT_MAX_PARAMS, durableObjectExecutor } from "./executor.js";
import type { DurableObjectStorageLike } from "./platform.js";

export interface DurableObjectStoreOptions {
  /** Named in `engine.started` and `status()`; default `durableObject`. */
  name?: string;
  /** Where `tw.cache` keeps its values; default the store's own table. `kvCache(env.PRICES)` puts them in Workers KV. */
  cache?: CacheStore;
}

/**
 * The store on a Durable Object's SQLite storage: the same SQL and migrations as `sqlite(path)` in
 * Node, run through `ctx.storage.sql`. Everything is as durable as the object's storage; the object is
 * single-threaded, so no lock is ever waited for. The store belongs to the object: `close()` leaves
 * the storage alone.
 */
export function durableObjectStore(storage: DurableObjectStorageLike, options: DurableObjectStoreOptions = {}): Store {
  const executor = durableObjectExecutor(storage);
  const sql = sqliteSqlDb(executor, DURABLE_OBJECT_MAX_PARAMS);
  return {
    name: options.name ?? "durableObject",
    queue: new SqliteQueueStore(executor),
    schedule: new SqlScheduleStore(sql),
    cache: options.cache ?? new SqlCacheStore(sql),
    idempotency: new SqlIdempotencyStore(sql),
    delivery: new SqlDeliveryStore(sql),
    fanout: new SqlFanoutStore(sql),
    migrate: async () => migrateSqlite(executor, sqliteMigrations),
    schemaVersion: async () => ({ current: sqliteSchemaVersion(executor), latest: latestVersion(sqliteMigrations) }),
    close: async () => {},
  };
}
