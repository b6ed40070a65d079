import { InvalidInputError, SchemaMismatchError } from "../core/errors.js";
import type { Migration } from "./migrations/migration.js";
import type { PgExecutor } from "../db/pg-executor.js";
import type { SqliteExecutor } from "../db/sqlite-executor.js";

/**
 * Applies missing SQLite migrations in one IMMEDIATE transaction: the first process takes the write
 * lock, the others wait for it (busy_timeout) and then find nothing left to do.
 */
export function migrateSqlite(db: SqliteExecutor, migrations: readonly Migration[]): void {
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS tickwork_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
    const done = applied(db.all<{ version: number; name: string }>(`SELECT version, name FROM tickwork_migrations`), migrations);
    for (const m of sorted(migrations)) {
      if (done.has(m.version)) continue;
      db.exec(m.sql);
      db.run(`INSERT INTO tickwork_migrations (version, name, applied_at) VALUES (?, ?, ?)`, [m.version, m.name, Date.now()]);
    }
  });
}

export function sqliteSchemaVersion(db: SqliteExecutor): number {
  const exists = db.all(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tickwork_migrations'`).length > 0;
  if (!exists) return 0;
  return db.all<{ v: number | null }>(`SELECT max(version) AS v FROM tickwork_migrations`)[0]?.v ?? 0;
}

/**
 * Applies missing PostgreSQL migrations in one transaction under an advisory lock keyed by the
 * schema, so processes starting together apply each step exactly once and the rest wait, then skip.
 */
export async function migratePostgres(db: PgExecutor, schemaOption: string | undefined, migrations: readonly Migration[]): Promise<void> {
  await db.transaction(function* (tx) {
    // Without an explicit schema, the tables go where the connection's search_path points
    // (a caller's own pool may point elsewhere than "public").
    const schema = schemaOption ?? (yield* tx.query<{ s: string | null }>(`SELECT current_schema() AS s`))[0]?.s;
    if (!schema) throw new InvalidInputError("postgres: the connection's search_path names no existing schema; pass postgres({ url, schema }) or point your pool's search_path at one");
    yield* tx.query(`SELECT pg_advisory_xact_lock(hashtext('tickwork_migrations:' || $1::text))`, [schema]);
    yield* tx.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    yield* tx.query(
      `CREATE TABLE IF NOT EXISTS ${quoteIdent(schema)}.tickwork_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`,
    );
    const done = applied(yield* tx.query<{ version: number; name: string }>(`SELECT version, name FROM ${quoteIdent(schema)}.tickwork_migrations`), migrations);
    yield* tx.query(`SET LOCAL search_path TO ${quoteIdent(schema)}`);
    for (const m of sorted(migrations)) {
      if (done.has(m.version)) continue;
      yield* tx.query(m.sql);
      yield* tx.query(`INSERT INTO tickwork_migrations (version, name, applied_at) VALUES ($1, $2, $3)`, [m.version, m.name, Date.now()]);
    }
  });
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The versions a database has applied, once each is known to be this version's step of that number:
 * a step recorded under another name was written by another build, and nothing is applied over it.
 */
function applied(rows: readonly { version: number; name: string }[], migrations: readonly Migration[]): Set<number> {
  const names = new Map(migrations.map((m) => [m.version, m.name]));
  for (const { version, name } of rows) {
    const expected = names.get(version);
    if (expected !== undefined && expected !== name) throw new SchemaMismatchError(version, name, expected);
  }
  return new Set(rows.map((r) => r.version));
}

function sorted(migrations: readonly Migration[]): Migration[] {
  return [...migrations].sort((a, b) => a.version - b.version);
}
