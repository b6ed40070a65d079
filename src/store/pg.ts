import { StoreSetupError, StoreUnavailableError } from "../core/errors.js";
import type { PgExecutor, QueryOptions } from "../db/pg-executor.js";
import { runBody, sqlTx } from "../db/sql-db.js";

/**
 * The part of a `pg.Pool` tickwork uses, declared here rather than taken from @types/pg so that
 * tickwork's declarations compile in a project without @types/pg. A `pg.Pool` is one (the tests
 * that pass their own pool check it).
 */
export interface PostgresPool {
  query(config: PostgresQueryConfig): Promise<PostgresQueryResult>;
  /** The callback form: tickwork checks clients out with it (see checkOut). */
  connect(callback: (error: Error | undefined, client: PostgresPoolClient | undefined) => void): void;
  on(event: "error", listener: (error: Error) => void): unknown;
  end(): Promise<void>;
}

/** A client checked out of a {@link PostgresPool} (a `pg.PoolClient`). */
export interface PostgresPoolClient {
  query(config: PostgresQueryConfig): Promise<PostgresQueryResult>;
  query(text: string): Promise<PostgresQueryResult>;
  release(error?: Error | boolean): void;
  on(event: "error", listener: (error: Error) => void): unknown;
  removeListener(event: "error", listener: (error: Error) => void): unknown;
}

export interface PostgresQueryConfig {
  name?: string | undefined;
  text: string;
  values?: unknown[] | undefined;
}

export interface PostgresQueryResult {
  rows: unknown[];
}

/** `pg` behind the executor seam: named prepared statements (unnamed when replanned), and connection failures typed as such. */
export function pgExecutor(pool: PostgresPool): PgExecutor {
  return {
    maxParams: MAX_PARAMS,
    query: querying((config) => pool.query(config)),
    transaction: (body) => onOneClient(pool, (query) => runBody(body(sqlTx(MAX_PARAMS)), (s) => query(s.sql, s.params))),
    overlapped: (body) => onOneClient(pool, body),
  };
}

const MAX_PARAMS = 65_535;

function querying(send: (config: PostgresQueryConfig) => Promise<PostgresQueryResult>): PgExecutor["query"] {
  return async <T>(sql: string, params: readonly unknown[] = [], options: QueryOptions = {}): Promise<T[]> => {
    try {
      const result = await send({ name: options.replan ? undefined : statementName(sql), text: sql, values: params as unknown[] });
      return result.rows as T[];
    } catch (error) {
      throw classify(error);
    }
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

/** `body`'s statements on one client of the pool, between BEGIN and COMMIT (ROLLBACK on a throw). */
async function onOneClient<T>(pool: PostgresPool, body: (query: PgExecutor["query"]) => Promise<T>): Promise<T> {
  // A connection that drops while the client is checked out fails the statement in flight (which
  // the body sees); the client also emits "error", which the pool listens for only while the client
  // is idle in it. Unheard, that event would be an uncaught exception that ends the process.
  const dropped = () => {};
  const client = await checkOut(pool, dropped);
  const query = querying((config) => client.query(config));
  // A client whose ROLLBACK failed has lost its connection or its state: it is destroyed, not reused.
  let broken: Error | undefined;
  try {
    await query("BEGIN");
    const result = await body(query);
    await query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch((e: Error) => (broken = e));
    throw error;
  } finally {
    client.removeListener("error", dropped);
    client.release(broken);
  }
}

/**
 * A client of the pool with `onError` listening before anything else runs. The pool hands a client
 * over from inside the driver's parsing of the server's bytes (the statement before ended, its client
 * went back and came out again for this caller); when the server's FATAL message for that connection
 * came in the same read, the driver emits it as "error" before that parse returns. A listener added
 * once a promise resolved would come too late, so the callback form attaches it synchronously.
 */
function checkOut(pool: PostgresPool, onError: (error: Error) => void): Promise<PostgresPoolClient> {
  return new Promise((resolve, reject) => {
    pool.connect((error, client) => {
      if (error || !client) return reject(classify(error ?? new Error("the pool gave no client")));
      client.on("error", onError);
      resolve(client);
    });
  });
}

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EHOSTUNREACH", "57P01", "57P02", "57P03"]);

/** What to do about a server's refusal that waiting does not fix, by SQLSTATE. */
const SETUP_REMEDIES: Record<string, string> = {
  // invalid_catalog_name
  "3D000": "create the database (CREATE DATABASE) or fix the database name in the URL",
  // invalid_authorization_specification, invalid_password
  "28000": "check the user in the URL and the server's pg_hba.conf",
  "28P01": "check the user and password in the URL",
  // insufficient_privilege
  "42501": "the user needs CONNECT on the database and CREATE on it (for tickwork's schema) or on the schema; or run tickwork migrate once as a user that has them",
};

/**
 * Connection-level failures become `StoreUnavailableError`; a server's refusal that waiting does not
 * fix (no such database, login or permission refused) becomes `StoreSetupError` with its remedy; other
 * SQL errors stay as they are (they are bugs).
 */
export function classify(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || error instanceof StoreSetupError) return error;
  const code = (error as { code?: string } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const remedy = code === undefined ? undefined : SETUP_REMEDIES[code];
  if (remedy) return new StoreSetupError(`PostgreSQL refused: ${message}: ${remedy}`, { cause: error });
  if ((code && (CONNECTION_CODES.has(code) || code.startsWith("08"))) || /Connection terminated|connection timeout|Client has encountered a connection error/i.test(message)) {
    return new StoreUnavailableError(`PostgreSQL is unreachable: ${message}`, { cause: error });
  }
  return error;
}
