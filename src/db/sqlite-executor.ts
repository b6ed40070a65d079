/**
 * The one seam between tickwork's SQLite SQL and a SQLite engine. better-sqlite3 and a Durable
 * Object's `ctx.storage.sql` are both synchronous, so the same SQL text runs on either through this.
 */
export type SqlValue = string | number | bigint | null;

export interface SqliteExecutor {
  /** Runs a statement and returns its rows (a statement without rows returns []). */
  all<T>(sql: string, params?: readonly SqlValue[]): T[];
  /** Runs a statement and returns how many rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): number;
  /** Runs several statements separated by semicolons (migrations). */
  exec(sql: string): void;
  /** Runs `fn` atomically; a throw rolls everything back. */
  transaction<T>(fn: () => T): T;
}
