import type pg from "pg";
import { StoreUnavailableError } from "../core/errors.js";
import type { PgExecutor, QueryOptions } from "../db/pg-executor.js";
import { runBody, sqlTx, type SqlBody } from "../db/sql-db.js";

/** `pg` behind the executor seam: named prepared statements (unnamed when replanned), and connection failures typed as such. */
export function pgExecutor(pool: pg.Pool): PgExecutor {
  return { maxParams: MAX_PARAMS, query: querying((config) => pool.query(config)), transaction: (body) => transaction(pool, body) };
}

const MAX_PARAMS = 65_535;

function querying(send: (config: pg.QueryConfig) => Promise<pg.QueryResult>): PgExecutor["query"] {
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

/** The body's statements on one client of the pool, between BEGIN and COMMIT (ROLLBACK on a throw). */
async function transaction<T>(pool: pg.Pool, body: SqlBody<T>): Promise<T> {
  const client = await pool.connect().catch((error: unknown) => Promise.reject(classify(error)));
  const query = querying((config) => client.query(config));
  // A client whose ROLLBACK failed has lost its connection or its state: it is destroyed, not reused.
  let broken: Error | undefined;
  try {
    await query("BEGIN");
    const result = await runBody(body(sqlTx(MAX_PARAMS)), (s) => query(s.sql, s.params));
    await query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch((e: Error) => (broken = e));
    throw error;
  } finally {
    client.release(broken);
  }
}

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EHOSTUNREACH", "57P01", "57P02", "57P03"]);

/** Connection-level failures become `StoreUnavailableError`; SQL errors stay as they are (they are bugs). */
export function classify(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error;
  const code = (error as { code?: string } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if ((code && (CONNECTION_CODES.has(code) || code.startsWith("08"))) || /Connection terminated|connection timeout|Client has encountered a connection error/i.test(message)) {
    return new StoreUnavailableError(`PostgreSQL is unreachable: ${message}`, { cause: error });
  }
  return error;
}
