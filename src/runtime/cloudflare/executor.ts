import { InvalidInputError } from "../../core/errors.js";
import type { SqlValue, SqliteExecutor } from "../../db/sqlite-executor.js";
import type { DurableObjectStorageLike, SqlStorageValue } from "./platform.js";

/**
 * A Durable Object's SQLite (`ctx.storage.sql`) behind the executor seam that better-sqlite3 also
 * fills, so the SQLite store's SQL text runs here unchanged. Three quirks of the platform, each
 * handled here rather than in the SQL:
 * - transactions go through `transactionSync` (the SQL API refuses BEGIN and SAVEPOINT);
 * - a cursor's `rowsWritten` counts index writes too (an UPDATE of one indexed row reports 2), so the
 *   changed-row count that fences outcomes is read with `changes()`;
 * - bindings are strings, numbers, null and ArrayBuffers: a bigint is bound as a number when exact;
 * - a statement binds at most 100 values (Cloudflare's SQL limits). Local workerd does not enforce it,
 *   so this executor does: a statement that would fail in production fails in tests too.
 */
export function durableObjectExecutor(storage: DurableObjectStorageLike): SqliteExecutor {
  const { sql } = storage;
  // exec() runs a statement as it is called; toArray() reads (and finishes) its rows.
  const exec = (text: string, params: readonly SqlValue[]) => {
    if (params.length > DURABLE_OBJECT_MAX_PARAMS) {
      throw new InvalidInputError(`a Durable Object binds at most ${DURABLE_OBJECT_MAX_PARAMS} values per statement; this one binds ${params.length}: ${text.slice(0, 80)}`);
    }
    return sql.exec(text, ...params.map(bindable)).toArray();
  };
  return {
    all: <T>(text: string, params: readonly SqlValue[] = []) => exec(text, params) as T[],
    run(text, params = []) {
      exec(text, params);
      return Number(sql.exec("SELECT changes() AS n").toArray()[0]?.n ?? 0);
    },
    exec: (text) => void sql.exec(text).toArray(),
    transaction: (fn) => storage.transactionSync(fn),
  };
}

/** Bound values per statement on a Durable Object's SQLite (Cloudflare's Durable Objects limits). */
export const DURABLE_OBJECT_MAX_PARAMS = 100;

function bindable(value: SqlValue): SqlStorageValue {
  if (typeof value !== "bigint") return value;
  if (value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(value);
  throw new InvalidInputError(`a Durable Object's SQLite binds integers up to 2^53 exactly; got ${value}n`);
}
