// Types only: `pg` is an optional peer, loaded when postgres() is called.
import type pg from "pg";
import { requirePeer } from "./peer.js";
import { PostgresQueueStore } from "../queue/store/postgres/store.js";
import { HANDOFFS_CHANNEL, JOBS_CHANNEL, JOB_EVENTS_CHANNEL, parseHandoff, parsePause, type ListenerQuery } from "../queue/store/postgres/notify.js";
import { SqlScheduleStore } from "../schedule/sql.js";
import { SqlCacheStore } from "../cache/sql.js";
import { SqlIdempotencyStore } from "../idempotency/sql.js";
import { SqlDeliveryStore } from "../delivery/sql.js";
import { SqlFanoutStore } from "../fanout/sql.js";
import { migratePostgres, quoteIdent } from "./migrate.js";
import { latestVersion } from "./migrations/migration.js";
import { postgresMigrations } from "./migrations/postgres.js";
import { classify, pgExecutor, type PostgresPool } from "./pg.js";
import type { Store } from "./store.js";
import { InvalidInputError, describe } from "../core/errors.js";

export type { PostgresPool, PostgresPoolClient } from "./pg.js";

export interface PostgresOptions {
  /** A connection string, e.g. `postgres://postgres@127.0.0.1:5432/test`. */
  url?: string;
  /** Your own pool; tickwork then uses it as configured (its search_path included) and never ends it. */
  pool?: PostgresPool;
  /** Schema holding tickwork's tables (with `url` only; any name up to 63 bytes, created if missing); default: the connection's search_path (usually `public`). */
  schema?: string;
  /** Pool size when tickwork creates the pool, 1 to 1000; default 10. */
  max?: number;
}

/**
 * The store for many processes on many machines. Every statement is prepared once per connection;
 * enqueues `NOTIFY` and idle workers `LISTEN`, so nobody polls.
 */
export function postgres(config: string | PostgresOptions): Store {
  const options = checkOptions(config);
  const driver = requirePeer<typeof pg>("pg", "postgres() from tickwork/postgres");

  const connection: pg.PoolConfig = {
    connectionString: options.url,
    max: options.max ?? 10,
    // search_path per connection, so one database can hold several isolated tickwork schemas. The
    // server splits this string at spaces unless a backslash escapes them (a schema may hold both).
    options: options.schema ? `-c search_path=${quoteIdent(options.schema).replace(/[\\ ]/g, "\\$&")}` : undefined,
  };
  const ownsPool = !options.pool;
  const pool = options.pool ?? new driver.Pool(connection);
  // An idle client's error (the server went away) must not crash the process; the next query reports it.
  if (ownsPool) pool.on("error", () => {});
  const executor = pgExecutor(pool);
  const queue = new PostgresQueueStore(executor);
  // Announcements ride the listener only while one engine listens on this store: with two, the
  // engine whose listener sent one would drop it, though only the other's worker may run the queue.
  let listeners = 0;

  return {
    name: `postgres(${describeTarget(options)})`,
    queue,
    schedule: new SqlScheduleStore(executor),
    cache: new SqlCacheStore(executor),
    idempotency: new SqlIdempotencyStore(executor),
    delivery: new SqlDeliveryStore(executor),
    fanout: new SqlFanoutStore(executor),
    migrate: () => migratePostgres(executor, options.schema, postgresMigrations),
    async schemaVersion() {
      // Unqualified: the connection's search_path says where tickwork's tables are.
      const [found] = await executor.query<{ t: string | null }>(`SELECT to_regclass('tickwork_migrations')::text AS t`);
      const [row] = found?.t ? await executor.query<{ v: number | null }>(`SELECT max(version) AS v FROM tickwork_migrations`) : [];
      return { current: row?.v ?? 0, latest: latestVersion(postgresMigrations) };
    },
    async subscribe(onJobs, onHanded, onPaused) {
      if (++listeners > 1) queue.announceOn(null);
      const stop = await listen(
        driver, connection, options.pool,
        {
          // This process's own announcements come back from its own connection: its enqueue woke its worker already.
          [JOBS_CHANNEL]: (payload, own) => {
            const pause = parsePause(payload);
            if (pause) onPaused?.(pause.queue, pause.group);
            else if (!own) onJobs(payload);
          },
          ...(onHanded
            ? {
                [HANDOFFS_CHANNEL]: (payload: string) => {
                  const handoff = payload === "*" ? "*" : parseHandoff(payload);
                  if (handoff) onHanded(handoff);
                },
              }
            : {}),
        },
        (query) => queue.announceOn(listeners === 1 ? query : null),
      ).catch((error: unknown) => {
        listeners--;
        throw error;
      });
      return async () => {
        listeners--;
        queue.announceOn(null);
        await stop();
      };
    },
    // Its own connection, opened at the first wait: a producer process that only enqueues and waits
    // never starts workers, so it has no other listener.
    subscribeJobs: (onJob) => listen(driver, connection, options.pool, { [JOB_EVENTS_CHANNEL]: (ids) => (ids === "*" ? onJob("*") : ids.split(",").forEach(onJob)) }),
    async close() {
      if (ownsPool) await pool.end();
    },
  };
}

/**
 * A dedicated connection that LISTENs on some channels, each with its handler (`own`: notified by
 * this connection itself). If it drops, it reconnects with backoff and then reports `*` to every
 * handler (anything may have been notified meanwhile), so no signal is lost for good. `connected`
 * is given a way to send statements on it while it is up, and null while it is not.
 */
async function listen(
  driver: typeof pg,
  connection: pg.PoolConfig,
  pool: PostgresPool | undefined,
  channels: Record<string, (payload: string, own: boolean) => void>,
  connected?: (query: ListenerQuery | null) => void,
): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let stopped = false;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let delay = 100;
  const config = pool ? (pool as unknown as { options: pg.ClientConfig }).options : connection;

  const connect = async (): Promise<void> => {
    const c = new driver.Client(config);
    c.on("error", () => reconnect(c));
    c.on("end", () => reconnect(c));
    await c.connect();
    const [me] = (await c.query<{ pid: number; schema: string | null }>("SELECT pg_backend_pid() AS pid, current_schema() AS schema")).rows;
    // Another schema's tickwork notifies on the same channels (see SCOPED): only this schema's count.
    const scope = `${me?.schema ?? ""}/`;
    c.on("notification", (msg) => {
      if (msg.payload?.startsWith(scope)) channels[msg.channel]?.(msg.payload.slice(scope.length) || "*", msg.processId === me?.pid);
    });
    for (const channel of Object.keys(channels)) await c.query(`LISTEN ${channel}`);
    client = c;
    delay = 100;
    connected?.((sql, params) => c.query(sql, params));
  };
  const reconnect = (c: pg.Client) => {
    if (stopped || client !== c) return;
    client = undefined;
    connected?.(null);
    c.end().catch(() => {});
    const attempt = () => {
      if (stopped) return;
      connect().then(
        () => Object.values(channels).forEach((onPayload) => onPayload("*", false)),
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

/** PostgreSQL's longest identifier, in bytes (NAMEDATALEN - 1): a longer schema name would be cut short. */
const MAX_SCHEMA_BYTES = 63;
const OPTION_KEYS = new Set(["url", "pool", "schema", "max"]);

/** The options, checked before any connection is made; a bad one is refused naming it. */
function checkOptions(config: unknown): PostgresOptions {
  const fail = (message: string): never => {
    throw new InvalidInputError(`postgres: ${message}`);
  };
  if (typeof config === "string") {
    if (config.trim() === "") fail("the connection string is empty");
    return { url: config };
  }
  if (config === null || typeof config !== "object" || Array.isArray(config)) return fail(`expected a connection string or { url | pool, schema?, max? }, got ${describe(config)}`);
  const options = config as Record<string, unknown>;
  for (const key of Object.keys(options)) if (!OPTION_KEYS.has(key)) fail(`unknown option "${key}" (expected url, pool, schema, max)`);
  const { url, pool, schema, max } = options;
  if (url !== undefined && (typeof url !== "string" || url.trim() === "")) fail(`url must be a connection string, got ${describe(url)}`);
  if (pool !== undefined && (pool === null || typeof pool !== "object" || typeof (pool as { query?: unknown }).query !== "function")) fail(`pool must be a pg Pool, got ${describe(pool)}`);
  if (url !== undefined && pool !== undefined) fail("give url or pool, not both");
  if (schema !== undefined) {
    if (pool !== undefined) fail("schema goes with url: your own pool keeps the search_path it was configured with");
    if (typeof schema !== "string" || schema === "" || schema.includes("\0")) fail(`schema must be a schema's name, got ${describe(schema)}`);
    const bytes = new TextEncoder().encode(schema as string).length;
    if (bytes > MAX_SCHEMA_BYTES) fail(`schema must be at most ${MAX_SCHEMA_BYTES} bytes (PostgreSQL's longest name), got ${bytes}`);
  }
  if (max !== undefined && (typeof max !== "number" || !Number.isInteger(max) || max < 1 || max > 1_000)) fail(`max must be an integer from 1 to 1000, got ${describe(max)}`);
  return options as PostgresOptions;
}
