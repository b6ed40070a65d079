import Database from "better-sqlite3";
import pg from "pg";
import type { Store } from "../../src/store/store.js";
import { postgres } from "../../src/store/postgres.js";
import { sqlite } from "../../src/store/sqlite.js";

/**
 * The examples' own tables and tickwork's share one database: an SQLite file by default, or
 * PostgreSQL. Each example opens it with its own `CREATE TABLE` statements.
 */
export type DatabaseTarget = { kind: "sqlite"; path: string } | { kind: "postgres"; url: string; schema?: string };

export type SqlParam = string | number | null;

export interface Statement {
  sql: string;
  params?: readonly SqlParam[];
}

/** The example's own connection to the database that tickwork uses: the few verbs it needs. */
export interface AppDatabase {
  readonly description: string;
  query<T>(sql: string, params?: readonly SqlParam[]): Promise<T[]>;
  /** Runs the statements in one transaction: all of them, or none. */
  transaction(statements: readonly Statement[]): Promise<void>;
  close(): Promise<void>;
}

export function describeTarget(target: DatabaseTarget): string {
  return target.kind === "sqlite" ? `SQLite file ${target.path}` : `PostgreSQL ${safeHost(target.url)}, schema ${target.schema ?? "public"}`;
}

/**
 * Opens the tickwork store and the example's own connection on the same database, and creates the
 * example's tables. The store is closed by `tw.stop()`; the connection by `db.close()`.
 */
export async function openDatabase(target: DatabaseTarget, createTables: readonly string[]): Promise<{ store: Store; db: AppDatabase }> {
  const opened = target.kind === "sqlite" ? openSqlite(target.path) : await openPostgres(target.url, target.schema);
  try {
    await opened.db.transaction(createTables.map((sql) => ({ sql })));
  } catch (error) {
    await Promise.allSettled([opened.db.close(), opened.store.close()]);
    throw error;
  }
  return opened;
}

/**
 * Two connections to one SQLite file: tickwork's and this one. WAL mode lets them read while the
 * other writes; busy_timeout makes a writer wait for the other's short write instead of failing.
 */
function openSqlite(path: string): { store: Store; db: AppDatabase } {
  const store = sqlite(path);
  const conn = new Database(path);
  conn.pragma("journal_mode = WAL");
  conn.pragma("busy_timeout = 5000");
  const statements = new Map<string, Database.Statement>();
  const prepare = (sql: string) => {
    let stmt = statements.get(sql);
    if (!stmt) statements.set(sql, (stmt = conn.prepare(sql)));
    return stmt;
  };
  // `$1, $2...` are named parameters to SQLite; better-sqlite3 binds them from an object keyed 1, 2...
  const bind = (params: readonly SqlParam[]) => (params.length ? [Object.fromEntries(params.map((v, i) => [i + 1, v]))] : []);
  const run = (sql: string, params: readonly SqlParam[] = []) => {
    const stmt = prepare(sql);
    if (stmt.reader) return stmt.all(...bind(params));
    stmt.run(...bind(params));
    return [];
  };
  return {
    store,
    db: {
      description: describeTarget({ kind: "sqlite", path }),
      query: async <T>(sql: string, params?: readonly SqlParam[]) => run(sql, params) as T[],
      transaction: async (list) => conn.transaction(() => list.forEach((s) => run(s.sql, s.params))).immediate(),
      close: async () => void conn.close(),
    },
  };
}

async function openPostgres(url: string, schema = "public"): Promise<{ store: Store; db: AppDatabase }> {
  const quoted = `"${schema.replaceAll('"', '""')}"`;
  const pool = new pg.Pool({ connectionString: url, max: 5, options: `-c search_path=${quoted}` });
  pool.on("error", () => {});
  try {
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
  } catch (error) {
    await pool.end();
    throw error;
  }
  return {
    store: postgres({ url, schema }),
    db: {
      description: describeTarget({ kind: "postgres", url, schema }),
      query: async <T>(sql: string, params: readonly SqlParam[] = []) => (await pool.query(sql, params as SqlParam[])).rows as T[],
      async transaction(list) {
        const client = await pool.connect();
        try {
          await client.query("BEGIN");
          for (const s of list) await client.query(s.sql, (s.params ?? []) as SqlParam[]);
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK").catch(() => {});
          throw error;
        } finally {
          client.release();
        }
      },
      close: () => pool.end(),
    },
  };
}

function safeHost(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname}`;
  } catch {
    return "(unparsed url)";
  }
}
