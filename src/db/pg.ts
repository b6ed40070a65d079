import type pg from "pg";
import { StoreUnavailableError } from "../core/errors.js";
import type { PgExecutor, QueryOptions } from "./pg-executor.js";

/** `pg` behind the executor seam: named prepared statements (unnamed when replanned), and connection failures typed as such. */
export function pgExecutor(client: pg.Pool | pg.PoolClient): PgExecutor {
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

export async function pgTransaction<T>(pool: pg.Pool, fn: (db: PgExecutor) => Promise<T>): Promise<T> {
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
