import type { SqlValue, SqliteExecutor } from "./sqlite-executor.js";

/**
 * One SQL text for both dialects: modules whose statements need nothing dialect-specific write them
 * once with PostgreSQL's `$1` placeholders. PostgreSQL's executor already has this shape; for SQLite
 * each `$n` becomes a plain `?` and the values are laid out in the order the placeholders appear
 * (plain `?` is the one form every SQLite binding accepts, the Durable Object's included).
 */
export interface SqlDb {
  query<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * Most values one statement may bind; batch statements size their chunks by it. On SQLite every
   * `$n` occurrence is its own binding. better-sqlite3: 32,766 (SQLITE_MAX_VARIABLE_NUMBER); a
   * Durable Object: 100; PostgreSQL: 65,535.
   */
  readonly maxParams: number;
}

export function sqliteSqlDb(db: SqliteExecutor, maxParams = 32_766): SqlDb {
  const translated = new Map<string, { text: string; order: number[] }>();
  return {
    maxParams,
    async query<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
      let t = translated.get(sql);
      if (!t) {
        const order: number[] = [];
        const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
          order.push(Number(n) - 1);
          return "?";
        });
        translated.set(sql, (t = { text, order }));
      }
      return db.all<T>(t.text, t.order.map((i) => params[i] as SqlValue));
    },
  };
}
