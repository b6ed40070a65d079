import { StoreSetupError } from "../core/errors.js";
import { existsSync } from "node:fs";
import { textProblem } from "../core/bounds.js";
import { postgres } from "../store/postgres.js";
import { sqlite } from "../store/sqlite.js";
import type { Store } from "../store/store.js";
import type { ConfigDatabase } from "./define-config.js";
import { CommandFailure, UsageError } from "./errors.js";

export const DEFAULT_DB = "./tickwork.db";
const POSTGRES_URL = /^postgres(ql)?:\/\//;
/** Any `scheme://`; a Windows path (C:\Users\...) has no double slash after its colon. */
const URL_SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//;
/**
 * PostgreSQL cuts identifiers to 63 bytes without a word (two long names would meet), and the
 * schema travels in the connection's options, where whitespace would split it.
 */
const MAX_SCHEMA_BYTES = 63;

/**
 * `--db` (or `TICKWORK_DB`, or ./tickwork.db): an SQLite path or a `postgres://` URL. The PostgreSQL
 * schema comes from `--schema` or the URL's `?schema=`; it is taken out of the URL, which `pg` would
 * otherwise pass to the server.
 */
export function parseDatabase(db: string, schema: string | undefined, command: string): ConfigDatabase {
  if (db === "") throw new UsageError("--db is empty: give an SQLite file path or a postgres:// URL", command);
  const scheme = URL_SCHEME.exec(db)?.[1];
  if (scheme !== undefined && !POSTGRES_URL.test(db)) {
    // Taken as a path, "mysql://host/db" would become an SQLite file in a folder named "mysql:".
    const hint = /^(sqlite3?|file)$/i.test(scheme) ? "an SQLite database is given by its file path, e.g. --db ./tickwork.db" : "give an SQLite file path or a postgres:// URL";
    throw new UsageError(`--db ${redact(db)}: the scheme "${scheme}://" is not supported: ${hint}`, command);
  }
  if (!POSTGRES_URL.test(db)) {
    if (schema !== undefined) throw new UsageError(`--schema applies to PostgreSQL only, and --db ${db} is an SQLite file`, command);
    return { kind: "sqlite", path: db };
  }
  let url: URL;
  try {
    url = new URL(db);
  } catch {
    throw new UsageError(`--db ${redact(db)} is not a valid URL`, command);
  }
  const fromUrl = url.searchParams.get("schema") ?? undefined;
  if (fromUrl !== undefined && schema !== undefined && fromUrl !== schema) {
    throw new UsageError(`--schema ${schema} and the URL's ?schema=${fromUrl} disagree: give one`, command);
  }
  url.searchParams.delete("schema");
  const chosen = schema ?? fromUrl;
  if (chosen === "") throw new UsageError("the PostgreSQL schema is empty: give a name, e.g. --schema tickwork", command);
  if (chosen !== undefined) checkSchema(chosen, command);
  return chosen === undefined ? { kind: "postgres", url: url.href } : { kind: "postgres", url: url.href, schema: chosen };
}

function checkSchema(schema: string, command: string): void {
  const problem = textProblem(schema) ?? (/\s/.test(schema) ? "contains whitespace" : undefined);
  if (problem) throw new UsageError(`--schema ${JSON.stringify(schema)} ${problem}`, command);
  const bytes = new TextEncoder().encode(schema).length;
  if (bytes > MAX_SCHEMA_BYTES) throw new UsageError(`--schema must be at most ${MAX_SCHEMA_BYTES} bytes (PostgreSQL would cut it), got ${bytes}`, command);
}

/**
 * Opens the store. Only `start` and `migrate` may create a database: any other command on an SQLite
 * path that does not exist fails instead of leaving an empty file behind.
 */
export function openStore(database: ConfigDatabase, options: { create: boolean }): Store {
  if (database.kind === "postgres") return postgres({ url: database.url, schema: database.schema });
  if (!options.create && database.path !== ":memory:" && !existsSync(database.path)) {
    throw new CommandFailure(`no SQLite database at ${database.path}: check --db, or create it with \`tickwork migrate\``);
  }
  try {
    return sqlite(database.path);
  } catch (error) {
    // The store's own error names the path and the remedy already.
    throw new CommandFailure(error instanceof StoreSetupError ? error.message : `cannot open the SQLite database at ${database.path}: ${(error as Error).message}`);
  }
}

/** For messages: the database without its password. */
export function describeDatabase(database: ConfigDatabase): string {
  if (database.kind === "sqlite") return `SQLite ${database.path}`;
  return `PostgreSQL ${redact(database.url)}${database.schema ? `, schema ${database.schema}` : ""}`;
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.href;
  } catch {
    return url.replace(/\/\/[^@/]*@/, "//***@");
  }
}
