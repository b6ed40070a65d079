import { maxBoundParams, rowObjects, type SqlValue, type SqliteConnection, type SqliteExecutor } from "../db/sqlite-executor.js";

/**
 * The parts of `node:sqlite` tickwork uses, declared here: @types/node for Node 20 (the oldest Node
 * tickwork supports) has no types for a module that Node 20 does not have.
 */
export interface NodeSqliteModule {
  DatabaseSync: new (path: string) => NodeDatabaseSync;
}

interface NodeDatabaseSync {
  prepare(sql: string): NodeStatementSync;
  exec(sql: string): void;
  close(): void;
  /** Node 22.16 and 24 have it; 22.13 to 22.15 do not. */
  readonly isTransaction?: boolean;
}

interface NodeStatementSync {
  all(...params: SqlValue[]): unknown[];
  run(...params: SqlValue[]): { changes: number | bigint };
  /** Node 22.16 and 24 have both; 22.13 to 22.15 neither. */
  setReturnArrays?(enabled: boolean): void;
  columns?(): { name: string }[];
}

/** A prepared statement, and the names of its result columns when it returns its rows as arrays. */
interface Prepared {
  stmt: NodeStatementSync;
  names: readonly string[] | null;
}

/** The statement's column names if its rows can come back as arrays: the runtime can do it and the statement has columns. */
function arrayColumns(stmt: NodeStatementSync): readonly string[] | null {
  if (!stmt.setReturnArrays || !stmt.columns) return null;
  const names = stmt.columns().map((c) => c.name);
  if (names.length === 0) return null;
  stmt.setReturnArrays(true);
  return names;
}

let loaded: NodeSqliteModule | null | undefined;

/**
 * `node:sqlite` when this runtime has it without a flag (Node 22.13 and later; Deno and Bun too),
 * else undefined. Loaded synchronously through `process.getBuiltinModule` rather than imported, so
 * this file loads on Node 20 as well, where neither the module nor (before 20.16) the function
 * exists.
 */
export function nodeSqliteModule(): NodeSqliteModule | undefined {
  if (loaded === undefined) loaded = (withoutSqliteExperimentalWarning(() => builtin("node:sqlite")) as NodeSqliteModule | undefined) ?? null;
  return loaded ?? undefined;
}

function builtin(id: string): unknown {
  const { getBuiltinModule } = process as { getBuiltinModule?: (id: string) => unknown };
  return getBuiltinModule?.call(process, id);
}

/**
 * Node 22 prints "ExperimentalWarning: SQLite is an experimental feature" the first time the module
 * loads (Node 24 no longer does). A user who runs tickwork did not choose node:sqlite and cannot act
 * on it, so that one warning is dropped: `process.emitWarning` is replaced only for the synchronous
 * load and restored after it, and every other warning goes through untouched.
 */
function withoutSqliteExperimentalWarning<T>(load: () => T): T {
  const emit = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: unknown } | undefined)?.type;
    const message = typeof warning === "string" ? warning : warning.message;
    if (type === "ExperimentalWarning" && message.startsWith("SQLite is an experimental feature")) return;
    return Reflect.apply(emit, this, [warning, ...rest]) as void;
  } as typeof process.emitWarning;
  try {
    return load();
  } finally {
    process.emitWarning = emit;
  }
}

/**
 * `node:sqlite` behind the executor seam, every statement prepared once and reused. Its rows are the
 * same plain objects as better-sqlite3's (no `readBigInts`: integers come back as numbers, and
 * tickwork's integers, times and ids, stay below 2^53).
 */
export function nodeSqliteExecutor(db: NodeDatabaseSync): SqliteExecutor {
  const cache = new Map<string, Prepared>();
  const prepared = (sql: string) => {
    let entry = cache.get(sql);
    if (!entry) {
      const stmt = db.prepare(sql);
      cache.set(sql, (entry = { stmt, names: arrayColumns(stmt) }));
    }
    return entry;
  };
  const prepare = (sql: string) => prepared(sql).stmt;
  // Open transactions and savepoints, for nesting as better-sqlite3 does it.
  let depth = 0;
  return {
    // all() runs a statement without rows too, and returns [] for it.
    all: <T>(sql: string, params: readonly SqlValue[] = []) => {
      const { stmt, names } = prepared(sql);
      const rows = stmt.all(...params);
      return (names ? rowObjects(rows, names) : rows) as T[];
    },
    run: (sql, params = []) => Number(prepare(sql).run(...params).changes),
    exec: (sql) => db.exec(sql),
    transaction<T>(fn: () => T): T {
      const savepoint = depth > 0 ? `tickwork_${depth}` : undefined;
      prepare(savepoint ? `SAVEPOINT ${savepoint}` : "BEGIN IMMEDIATE").run();
      depth++;
      try {
        const result = fn();
        if (typeof (result as { then?: unknown } | null)?.then === "function") throw new TypeError("a SQLite transaction's function must not return a promise");
        prepare(savepoint ? `RELEASE ${savepoint}` : "COMMIT").run();
        return result;
      } catch (error) {
        // Some errors (SQLITE_FULL, SQLITE_IOERR...) end the transaction in SQLite itself; where Node
        // cannot tell (before 22.16), a rollback that finds nothing to undo is not the error to report.
        if (db.isTransaction !== false) {
          try {
            if (savepoint) {
              prepare(`ROLLBACK TO ${savepoint}`).run();
              prepare(`RELEASE ${savepoint}`).run();
            } else {
              prepare("ROLLBACK").run();
            }
          } catch {
            // The original error says what went wrong.
          }
        }
        throw error;
      } finally {
        depth--;
      }
    },
  };
}

/** Opens `path` with `node:sqlite` (the caller checked that the runtime has it). */
export function openNodeSqlite(sqlite: NodeSqliteModule, path: string): SqliteConnection {
  const db = new sqlite.DatabaseSync(path);
  const executor = nodeSqliteExecutor(db);
  let open = true;
  // node:sqlite throws on a second close, where better-sqlite3 and bun:sqlite do nothing.
  const close = () => {
    if (open) db.close();
    open = false;
  };
  return { driver: "node:sqlite", executor, maxParams: maxBoundParams(executor), close };
}
