/**
 * The one seam between tickwork's SQLite SQL and a SQLite engine. better-sqlite3, Node's
 * `node:sqlite`, Bun's `bun:sqlite` and a Durable Object's `ctx.storage.sql` are all synchronous, so
 * the same SQL text runs on any of them through this.
 */
export type SqlValue = string | number | bigint | null;

export interface SqliteExecutor {
  /** Runs a statement and returns its rows (a statement without rows returns []). */
  all<T>(sql: string, params?: readonly SqlValue[]): T[];
  /** Runs a statement and returns how many rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): number;
  /** Runs several statements separated by semicolons (migrations). */
  exec(sql: string): void;
  /**
   * Runs `fn` atomically (BEGIN IMMEDIATE where the engine takes BEGIN); a throw rolls everything
   * back. A call inside another is a savepoint: its throw undoes only its own writes, and the outer
   * transaction goes on unless it lets the error through.
   */
  transaction<T>(fn: () => T): T;
}

/** One open SQLite connection in a process (not a Durable Object), whichever driver opened it. */
export interface SqliteConnection {
  /** The driver that opened it: "node:sqlite", "bun:sqlite" or "better-sqlite3". */
  readonly driver: string;
  readonly executor: SqliteExecutor;
  /** Most values one statement may bind on this connection's SQLite build. */
  readonly maxParams: number;
  close(): void;
}

/**
 * Most values one statement may bind on the SQLite library behind `db`: its
 * SQLITE_MAX_VARIABLE_NUMBER, which a build lists among its compile options when it sets one
 * (Node's bundled SQLite: 32,766; Bun's on Linux: 250,000), else SQLite's default for its version
 * (32,766 since 3.32.0, 999 before). Read from the library rather than assumed, because Node built
 * with --shared-sqlite and Bun on macOS link whatever SQLite the system has.
 */
export function maxBoundParams(db: SqliteExecutor): number {
  for (const { compile_options: option } of db.all<{ compile_options: string }>("PRAGMA compile_options")) {
    const set = /^MAX_VARIABLE_NUMBER=(\d+)$/.exec(option);
    if (set) return Number(set[1]);
  }
  const version = db.all<{ v: string }>("SELECT sqlite_version() AS v")[0]?.v ?? "0";
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return major > 3 || (major === 3 && minor >= 32) ? 32_766 : 999;
}

/**
 * Rows as plain objects, built from the arrays a statement returned and its column names. The
 * drivers' own row objects are slow to read: node:sqlite builds each with a null prototype and its
 * properties added one by one, which V8 keeps as a dictionary, and reading a claimed job's columns
 * off those cost 2-3 µs a row more than off objects built here, which all share one shape (Node 22
 * and 24); on better-sqlite3 the gap is smaller (about 0.8 µs a row). A name listed twice keeps its
 * last value, as the drivers' own rows do.
 */
export function rowObjects(rows: unknown[], names: readonly string[]): Record<string, unknown>[] {
  const out = new Array<Record<string, unknown>>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const values = rows[r] as unknown[];
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
    out[r] = row;
  }
  return out;
}
