import { maxBoundParams, type SqlValue, type SqliteConnection, type SqliteExecutor } from "../db/sqlite-executor.js";

/** The parts of Bun's `bun:sqlite` tickwork uses, declared here so that Node needs no Bun types. */
export interface BunSqliteModule {
  Database: new (path: string) => BunDatabase;
}

interface BunDatabase {
  prepare(sql: string): BunStatement;
  exec(sql: string): void;
  /** better-sqlite3's API: savepoints when nested, `.immediate()` for BEGIN IMMEDIATE. */
  transaction<T>(fn: () => T): { immediate(): T };
  close(): void;
}

interface BunStatement {
  all(...params: SqlValue[]): unknown[];
  run(...params: SqlValue[]): { changes: number };
}

let loaded: BunSqliteModule | null | undefined;

/** True under Bun, which sets `process.versions.bun`. */
export function isBun(): boolean {
  return typeof process.versions.bun === "string";
}

/**
 * `bun:sqlite` under Bun, else undefined. Loaded synchronously and only under Bun, without a static
 * import, so this file loads on Node (and imports no Node built-in): `process.getBuiltinModule` has
 * it in recent Bun, `import.meta.require` (Bun's own) in older ones.
 */
export function bunSqliteModule(): BunSqliteModule | undefined {
  if (loaded === undefined) {
    if (!isBun()) loaded = null;
    else {
      const { getBuiltinModule } = process as { getBuiltinModule?: (id: string) => unknown };
      const bunRequire = (import.meta as { require?: (id: string) => unknown }).require;
      loaded = ((getBuiltinModule?.call(process, "bun:sqlite") ?? bunRequire?.("bun:sqlite")) as BunSqliteModule | undefined) ?? null;
    }
  }
  return loaded ?? undefined;
}

/**
 * `bun:sqlite` behind the executor seam, every statement prepared once and reused. Its rows are plain
 * objects and its integers numbers (no `safeIntegers`), as better-sqlite3's.
 */
export function bunSqliteExecutor(db: BunDatabase): SqliteExecutor {
  const cache = new Map<string, BunStatement>();
  const prepare = (sql: string) => {
    let stmt = cache.get(sql);
    if (!stmt) cache.set(sql, (stmt = db.prepare(sql)));
    return stmt;
  };
  return {
    // all() runs a statement without rows too, and returns [] for it.
    all: <T>(sql: string, params: readonly SqlValue[] = []) => prepare(sql).all(...params) as T[],
    run: (sql, params = []) => prepare(sql).run(...params).changes,
    exec: (sql) => db.exec(sql),
    transaction: (fn) => db.transaction(fn).immediate(),
  };
}

/** Opens `path` with `bun:sqlite` (the caller checked that the runtime has it). */
export function openBunSqlite(sqlite: BunSqliteModule, path: string): SqliteConnection {
  const db = new sqlite.Database(path);
  const executor = bunSqliteExecutor(db);
  return { driver: "bun:sqlite", executor, maxParams: maxBoundParams(executor), close: () => db.close() };
}
