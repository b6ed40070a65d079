import Database from "better-sqlite3";
import pg from "pg";
import type { Store } from "../../src/store/store.js";
import { postgres } from "../../src/store/postgres.js";
import { sqlite } from "../../src/store/sqlite.js";
import { CREATE_TABLES } from "./sql.js";

/**
 * The example's tables and tickwork's share one database: an SQLite file by default, or PostgreSQL.
 * The same shape as the other examples' `database.ts`, plus transactions that read as they go.
 */
export type DatabaseTarget = { kind: "sqlite"; path: string } | { kind: "postgres"; url: string; schema?: string };

export type SqlParam = string | number | null;

export interface Statement {
  sql: string;
  params: readonly SqlParam[];
}

/**
 * A transaction's body: a generator that yields statements and receives their rows. The ledger's
 * changes read and decide as they go (lock the account, look for an earlier execution, check the
 * balance, write), and one body serves both databases:
 * - SQLite (better-sqlite3) is synchronous, and a write transaction holds the file's write lock.
 *   Awaiting inside one would let this process's other requests run meanwhile, and their writes
 *   (tickwork claiming an idempotency key on its own connection) would wait on that lock while the
 *   transaction waits for them. So on SQLite the body is driven to its end in one synchronous call.
 * - PostgreSQL is driven statement by statement on one pooled connection between BEGIN and COMMIT.
 * A throw anywhere in the body rolls the transaction back.
 */
export type TxBody<T> = Generator<Statement, T, unknown[]>;

/** One statement inside a transaction body: `const [row] = yield* sql<Row>(TEXT, a, b)`. */
export function* sql<R>(text: string, ...params: SqlParam[]): TxBody<R[]> {
  return (yield { sql: text, params }) as R[];
}

/** The example's own connection to the database that tickwork uses. */
export interface AppDatabase {
  readonly description: string;
  query<T>(sql: string, params?: readonly SqlParam[]): Promise<T[]>;
  /** Runs the body in one transaction: committed when it returns, rolled back when it throws. */
  transaction<T>(body: () => TxBody<T>): Promise<T>;
  close(): Promise<void>;
}

export function describeTarget(target: DatabaseTarget): string {
  return target.kind === "sqlite" ? `SQLite file ${target.path}` : `PostgreSQL ${safeHost(target.url)}, schema ${target.schema ?? "public"}`;
}

/**
 * Opens the tickwork store and the example's own connection on the same database, and creates the
 * example's tables. The store is closed by `tw.stop()`; the connection by `db.close()`.
 */
export async function openDatabase(target: DatabaseTarget): Promise<{ store: Store; db: AppDatabase }> {
  const opened = target.kind === "sqlite" ? openSqlite(target.path) : await openPostgres(target.url, target.schema);
  try {
    await opened.db.transaction(function* () {
      // Two servers starting at once on PostgreSQL could both try to create a table (CREATE TABLE IF
      // NOT EXISTS is not safe against that there); the lock makes the second wait. SQLite's
      // IMMEDIATE transaction already does.
      if (target.kind === "postgres") yield* sql(`SELECT pg_advisory_xact_lock(hashtext('paper-orders tables'))`);
      for (const text of CREATE_TABLES) yield* sql(text);
    });
  } catch (error) {
    await Promise.allSettled([opened.db.close(), opened.store.close()]);
    throw error;
  }
  return opened;
}

/**
 * Two connections to one SQLite file: tickwork's and this one. WAL mode lets them read while the
 * other writes; busy_timeout makes a writer wait for another process's short write instead of failing.
 */
function openSqlite(path: string): { store: Store; db: AppDatabase } {
  const store = sqlite(path);
  const conn = new Database(path);
  conn.pragma("journal_mode = WAL");
  conn.pragma("synchronous = NORMAL");
  conn.pragma("busy_timeout = 5000");
  const statements = new Map<string, Database.Statement>();
  const prepare = (text: string) => {
    let stmt = statements.get(text);
    if (!stmt) statements.set(text, (stmt = conn.prepare(text)));
    return stmt;
  };
  // `$1, $2...` are named parameters to SQLite; better-sqlite3 binds them from an object keyed 1, 2...
  const bind = (params: readonly SqlParam[]) => (params.length ? [Object.fromEntries(params.map((v, i) => [i + 1, v]))] : []);
  const run = (text: string, params: readonly SqlParam[] = []): unknown[] => {
    const stmt = prepare(text);
    if (stmt.reader) return stmt.all(...bind(params));
    stmt.run(...bind(params));
    return [];
  };
  return {
    store,
    db: {
      description: describeTarget({ kind: "sqlite", path }),
      query: async <T>(text: string, params?: readonly SqlParam[]) => run(text, params) as T[],
      transaction: async <T>(body: () => TxBody<T>) =>
        conn
          .transaction(() => {
            const steps = body();
            let step = steps.next();
            while (!step.done) step = steps.next(run(step.value.sql, step.value.params));
            return step.value;
          })
          .immediate(),
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
      query: async <T>(text: string, params: readonly SqlParam[] = []) => (await pool.query(text, params as SqlParam[])).rows as T[],
      async transaction<T>(body: () => TxBody<T>) {
        const client = await pool.connect();
        const steps = body();
        try {
          await client.query("BEGIN");
          let step = steps.next();
          while (!step.done) step = steps.next((await client.query(step.value.sql, step.value.params as SqlParam[])).rows);
          await client.query("COMMIT");
          return step.value;
        } catch (error) {
          steps.return(undefined as T);
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
