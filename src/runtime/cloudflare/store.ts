import type { CacheStore } from "../../cache/store.js";
import { sqliteStore } from "../../store/sqlite-store.js";
import type { Store } from "../../store/store.js";
import { DURABLE_OBJECT_MAX_PARAMS, durableObjectExecutor } from "./executor.js";
import type { DurableObjectStorageLike } from "./platform.js";

/**
 * A Durable Object's row holds at most 2 MB; a payload past a few hundred characters is kept in a
 * row of its own beside the job's (its id and the payload), so 1.5 MiB leaves that row room.
 */
export const DURABLE_OBJECT_MAX_PAYLOAD_BYTES = 1.5 * 1024 * 1024;

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
  return sqliteStore(durableObjectExecutor(storage), { name: options.name ?? "durableObject", maxParams: DURABLE_OBJECT_MAX_PARAMS, cache: options.cache, maxPayloadBytes: DURABLE_OBJECT_MAX_PAYLOAD_BYTES });
}
