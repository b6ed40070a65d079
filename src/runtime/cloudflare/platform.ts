/**
 * The few pieces of the Workers platform tickwork touches, typed by shape. A Durable Object's real
 * `ctx.storage`, a `KVNamespace` and a service binding satisfy them as they are, so the library
 * does not need `@cloudflare/workers-types` in its public types (and a project's own types fit).
 */

/** A value the Durable Object's SQL API binds and returns. */
export type SqlStorageValue = ArrayBuffer | string | number | null;

/** `ctx.storage.sql`: synchronous SQLite of a Durable Object. */
export interface SqlStorageLike {
  exec(query: string, ...bindings: SqlStorageValue[]): { toArray(): Record<string, SqlStorageValue>[] };
}

/** `ctx.storage` of a SQLite-backed Durable Object, as the store uses it. */
export interface DurableObjectStorageLike {
  readonly sql: SqlStorageLike;
  /** The only way to run a transaction: the SQL API refuses BEGIN and SAVEPOINT. */
  transactionSync<T>(fn: () => T): T;
}

/** The `alarm()` argument: whether this invocation is a retry of one that threw. */
export interface AlarmInfo {
  readonly isRetry: boolean;
  readonly retryCount: number;
}

/** A Workers KV namespace, as the cache uses it. */
export interface KvNamespaceLike {
  get(key: string, type: "text"): Promise<string | null>;
  getWithMetadata<M>(key: string, type: "text"): Promise<{ value: string | null; metadata: M | null }>;
  put(key: string, value: string, options?: { metadata?: unknown; expirationTtl?: number }): Promise<void>;
  delete(key: string): Promise<void>;
}

/** A level of the worker-logs service (an `env.LOGS` binding). */
export type LogsLevel = "DEBUG" | "INFO" | "WARN" | "ERROR";

export interface LogsEntry {
  level: LogsLevel;
  message: string;
  context?: Record<string, unknown>;
}

/**
 * A Workers RPC logging binding such as `env.LOGS` (the worker-logs service): entries for an
 * application id, several per call.
 */
export interface LogsBinding {
  logBatch(appId: string, entries: LogsEntry[]): Promise<unknown>;
}

