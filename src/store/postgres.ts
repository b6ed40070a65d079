import pg from "pg";
import { StoreUnavailableError } from "../core/errors.js";
import { JOBS_CHANNEL, PostgresQueueStore } from "../queue/postgres.js";
import { SqlScheduleStore } from "../schedule/sql.js";
import { SqlCacheStore } from "../cache/sql.js";
import { SqlIdempotencyStore } from "../idempotency/sql.js";
import { SqlDeliveryStore } from "../delivery/sql.js";
import { SqlFanoutStore } from "../fanout/sql.js";
import { migratePostgres, quoteIdent } from "./migrate.js";
import { latestVersion } from "./migrations/migration.js";
import { postgresMigrations } from "./migrations/postgres.js";
import type { PgExecutor, QueryOptions } from "./pg-executor.js";
import type { Store } from "./store.js";

export interface PostgresOptions {
  /** A connection string, e.g. `postgres://postgres@127.0.0.1:5432/test`. */
  url?: string;
  /** Your own pool; tickwork then uses it as configured (its search_path included) and never ends it. */
  pool?: pg.Pool;
  /** Schema holding tickwork's tables (with `url` only); default: the connection's search_path (usually `public`). */
  schema?: string;
  /** Pool size when tickwork creates the pool; default 10. */
  max?: number;
}

/**
 * The store for many processes on many machines. Every statement is prepared once per connection;
 * enqueues `NOTIFY` and idle workers `LISTEN`, so nobody polls.
 */
export function postgres(config: string | PostgresOptions): Store {
  const options: PostgresOptions = typeof config === "string" ? { url: config } : config;

  const connection: pg.PoolConfig = {
    connectionString: options.url,
    max: options.max ?? 10,
    // search_path per connection, so one database can hold several isolated tickwork schemas.
    options: options.schema ? `-c search_path=${quoteIdent(options.schema)}` : undefined,
  };
  const ownsPool = !options.pool;
  const pool = options.pool ?? new pg.Pool(connection);
  // An idle client's error (the server went away) must not crash the process; the next query reports it.
  if (ownsPool) pool.on("error", () => {});
  const executor = pgExecutor(pool);

  return {
    name: `postgres(${describeTarget(options)})`,
    queue: new PostgresQueueStore(executor),
    schedule: new SqlScheduleStore(executor),
    cache: new SqlCacheStore(executor),
    idempotency: new SqlIdempotencyStore(executor),
    delivery: new SqlDeliveryStore(executor),
    fanout: new SqlFanoutStore(executor),
    migrate: () => migratePostgres((fn) => transaction(pool, fn), options.schema, postgresMigrations),
    async schemaVersion() {
      // Unqualified: the connection's search_path says where tickwork's tables are.
      const [found] = await executor.query<{ t: string | null }>(`SELECT to_regclass('tickwork_migrations')::text AS t`);
      const [row] = found?.t ? await executor.query<{ v: number | null }>(`SELECT max(version) AS v FROM tickwork_migrations`) : [];
      return { current: row?.v ?? 0, latest: latestVersion(postgresMigrations) };
    },
    subscribe: (onJobs) => listen(connection, options.pool, onJobs),
    async close() {
      if (ownsPool) await pool.end();
    },
  };
}

/** `pg` behind the executor seam: named prepared statements (unnamed when replanned), and connection failures typed as such. */
function pgExecutor(client: pg.Pool | pg.PoolClient): PgExecutor {
  return {
    maxParams: 65_535,
    async query<T>(sql: string, params: readonly unknown[] = [], options: QueryOptions = {}): Promise<T[]> {
      try {
        const result = await client.query({ name: options.replan ? undefined : statementName(sql), text: sql, values: params as unknown[] });
        return result.rows as T[];
      } catch (error) {
        throw classify(error);
      }
    },
  };
}

const names = new Map<string, string>();
function statementName(sql: string): string | undefined {
  // Only parameterised statements are worth preparing; DDL and one-offs run unnamed.
  if (!sql.includes("$1")) return undefined;
  let name = names.get(sql);
  if (!name) names.set(sql, (name = `tickwork_${names.size + 1}`));
  return name;
}

async function transaction<T>(pool: pg.Pool, fn: (db: PgExecutor) => Promise<T>): Promise<T> {
  const client = await pool.connect().catch((error: unknown) => Promise.reject(classify(error)));
  try {
    await client.query("BEGIN");
    const result = await fn(pgExecutor(client));
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/**
 * A dedicated connection that LISTENs for enqueues. If it drops, it reconnects with backoff and then
 * reports `*` (anything may have been enqueued meanwhile), so no wake-up is lost for good.
 */
async function listen(connection: pg.PoolConfig, pool: pg.Pool | undefined, onJobs: (queue: string) => void): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let stopped = false;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let delay = 100;
  const config = pool ? (pool as unknown as { options: pg.ClientConfig }).options : connection;

  const connect = async (): Promise<void> => {
    const c = new pg.Client(config);
    c.on("notification", (msg) => onJobs(msg.payload ?? "*"));
    c.on("error", () => reconnect(c));
    c.on("end", () => reconnect(c));
    await c.connect();
    await c.query(`LISTEN ${JOBS_CHANNEL}`);
    client = c;
    delay = 100;
  };
  const reconnect = (c: pg.Client) => {
    if (stopped || client !== c) return;
    client = undefined;
    c.end().catch(() => {});
    const attempt = () => {
      if (stopped) return;
      connect().then(
        () => onJobs("*"),
        () => {
          delay = Math.min(delay * 2, 5_000);
          retryTimer = setTimeout(attempt, delay);
        },
      );
    };
    retryTimer = setTimeout(attempt, delay);
  };

  try {
    await connect();
  } catch (error) {
    throw classify(error);
  }
  return async () => {
    stopped = true;
    clearTimeout(retryTimer);
    await client?.end().catch(() => {});
  };
}

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EHOSTUNREACH", "57P01", "57P02", "57P03"]);

/** Connection-level failures become `StoreUnavailableError`; SQL errors stay as they are (they are bugs). */
function classify(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error;
  const code = (error as { code?: string } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if ((code && (CONNECTION_CODES.has(code) || code.startsWith("08"))) || /Connection terminated|connection timeout|Client has encountered a connection error/i.test(message)) {
    return new StoreUnavailableError(`PostgreSQL is unreachable: ${message}`, { cause: error });
  }
  return error;
}

function describeTarget(options: PostgresOptions): string {
  const schema = options.schema ? `schema ${options.schema}` : "the connection's search_path";
  if (!options.url) return `your pool, ${schema}`;
  try {
    const url = new URL(options.url);
    return `${url.host}${url.pathname}, ${schema}`;
  } catch {
    return schema;
  }
}
