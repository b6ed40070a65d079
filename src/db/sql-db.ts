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
   * Runs `body` in one transaction: its statements all commit, or a throw (the body's or a
   * statement's) rolls back every one. A body nested in another (`yield* inner(tx)`) runs in the
   * same transaction.
   */
  transaction<T>(body: SqlBody<T>): Promise<T>;
  /**
   * Most values one statement may bind; batch statements size their chunks by it. On SQLite every
   * `$n` occurrence is its own binding. better-sqlite3: 32,766 (SQLITE_MAX_VARIABLE_NUMBER); a
   * Durable Object: 100; PostgreSQL: 65,535.
   */
  readonly maxParams: number;
}

/**
 * A transaction's body: a generator that yields its statements, `const rows = yield* tx.query(...)`,
 * and gets each one's rows back (or its error, thrown where it yielded).
 *
 * A generator rather than an async function, because of SQLite. Its engines are synchronous and one
 * connection serves the whole process (or Durable Object), so an async body would keep the
 * transaction, and the write lock, open while it awaits:
 * - other code running meanwhile would run its statements inside the transaction and be rolled back
 *   with it; in a Durable Object too, where workerd holds back new requests during
 *   `storage.transaction` but not the timers and promises of those already in (a test in
 *   test/cloudflare/the-executor-runs-the-sqlite-sql-on-durable-object-storage.test.ts shows it);
 * - another connection to the same file in this process (a second store, or an application's own
 *   connection beside tickwork's) that writes meanwhile would wait in SQLite's busy handler, which
 *   sleeps on the one thread the transaction needs in order to finish: the process stalls for
 *   busy_timeout, then fails with SQLITE_BUSY.
 * A body yields statements and nothing else, so on SQLite it is driven to its end synchronously
 * inside the engine's own transaction (BEGIN IMMEDIATE on better-sqlite3, `transactionSync` on a
 * Durable Object): nothing interleaves and no lock outlives the call. On PostgreSQL the same body runs
 * statement by statement on one pooled client between BEGIN and COMMIT. The price is that a body runs
 * statements only, never a send or other awaited work, which is what a transaction holding locks
 * should do anyway.
 */
export type SqlBody<T> = (tx: SqlTx) => Generator<SqlStatement, T, unknown>;

/** What a transaction body runs its statements through. */
export interface SqlTx {
  /** One statement: `yield*` it for its rows. */
  query<T>(sql: string, params?: readonly unknown[]): Generator<SqlStatement, T[], unknown>;
  readonly maxParams: number;
}

/** A statement as a body yields it. */
export interface SqlStatement {
  readonly sql: string;
  readonly params: readonly unknown[];
}

export function sqlTx(maxParams: number): SqlTx {
  return {
    maxParams,
    *query<T>(sql: string, params: readonly unknown[] = []): Generator<SqlStatement, T[], unknown> {
      return (yield { sql, params }) as T[];
    },
  };
}

/** Drives a body to its end synchronously (SQLite): each statement's rows, or its error, go back into it. */
export function runBodySync<T>(body: Generator<SqlStatement, T, unknown>, run: (statement: SqlStatement) => unknown[]): T {
  let step = body.next();
  while (!step.done) {
    let rows: unknown[];
    try {
      rows = run(step.value);
    } catch (error) {
      step = body.throw(error);
      continue;
    }
    step = body.next(rows);
  }
  return step.value;
}

/** Drives a body statement by statement through an asynchronous driver (PostgreSQL). */
export async function runBody<T>(body: Generator<SqlStatement, T, unknown>, run: (statement: SqlStatement) => Promise<unknown[]>): Promise<T> {
  let step = body.next();
  while (!step.done) {
    const answer = await run(step.value).then(
      (rows) => ({ ok: true as const, rows }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    step = answer.ok ? body.next(answer.rows) : body.throw(answer.error);
  }
  return step.value;
}

/** Runs `body` in one transaction when it writes with more than one statement; a single statement is atomic already. */
export function atomically<T>(db: SqlDb, statements: number, body: SqlBody<T>): Promise<T> {
  return statements > 1 ? db.transaction(body) : runBody(body(sqlTx(db.maxParams)), (s) => db.query(s.sql, s.params));
}

export function sqliteSqlDb(db: SqliteExecutor, maxParams: number): SqlDb {
  const all = sqliteDollarRunner(db);
  const tx = sqlTx(maxParams);
  return {
    maxParams,
    query: async <T>(sql: string, params: readonly unknown[] = []) => all<T>(sql, params),
    transaction: async (body) => db.transaction(() => runBodySync(body(tx), (s) => all(s.sql, s.params))),
  };
}

/**
 * Runs a statement written with PostgreSQL's `$n` placeholders on SQLite, synchronously: each `$n`
 * becomes `?`, its value laid out where it appears. For a body driven inside a transaction the
 * caller already holds (runBodySync).
 */
export function sqliteDollarRunner(db: SqliteExecutor): <T>(sql: string, params: readonly unknown[]) => T[] {
  const translated = new Map<string, { text: string; order: number[] }>();
  return <T>(sql: string, params: readonly unknown[]): T[] => {
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
  };
}
