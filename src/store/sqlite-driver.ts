import { InvalidInputError, TickworkError, preview } from "../core/errors.js";
import type { SqliteConnection } from "../db/sqlite-executor.js";
import { loadBetterSqlite, openBetterSqlite } from "./better-sqlite3.js";
import { bunSqliteModule, isBun, openBunSqlite } from "./bun-sqlite.js";
import { nodeSqliteModule, openNodeSqlite } from "./node-sqlite.js";

export const SQLITE_DRIVERS = ["auto", "node:sqlite", "bun:sqlite", "better-sqlite3"] as const;

/**
 * Which SQLite `sqlite()` opens. "auto": the runtime's own (bun:sqlite under Bun, node:sqlite on
 * Node 22.13 and later), else the better-sqlite3 package.
 */
export type SqliteDriver = (typeof SQLITE_DRIVERS)[number];

/** The driver asked for is not in this runtime (node:sqlite on Node 20, bun:sqlite outside Bun). */
export class SqliteDriverUnavailableError extends TickworkError {
  readonly driver: SqliteDriver;

  constructor(driver: SqliteDriver, message: string, options?: { cause?: unknown }) {
    super("TW_SQLITE_DRIVER_UNAVAILABLE", message, options);
    this.driver = driver;
  }
}

export interface OpenSqliteOptions {
  driver?: SqliteDriver;
  /** How long a write waits for another connection's write lock before failing; default 5000 ms. */
  busyTimeoutMs?: number;
}

/**
 * Opens one connection as tickwork's SQLite store uses it, whatever the driver. busy_timeout comes
 * first: node:sqlite and bun:sqlite start at 0, and switching a file to WAL takes a lock that another
 * process opening it at the same moment may hold. WAL lets readers never block the writer;
 * `synchronous = NORMAL` in WAL mode keeps every committed transaction across a process crash (only
 * an OS crash or power loss can lose the last commits, SQLite's documented trade-off).
 */
export function openSqlite(path: string, options: OpenSqliteOptions = {}): SqliteConnection {
  const connection = openDriver(path, options.driver ?? "auto");
  try {
    connection.executor.exec(`PRAGMA busy_timeout = ${busyTimeout(options.busyTimeoutMs)}`);
    connection.executor.exec("PRAGMA journal_mode = WAL");
    connection.executor.exec("PRAGMA synchronous = NORMAL");
  } catch (error) {
    connection.close();
    throw error;
  }
  return connection;
}

function openDriver(path: string, driver: unknown): SqliteConnection {
  switch (driver) {
    case "auto": {
      const bun = bunSqliteModule();
      if (bun) return openBunSqlite(bun, path);
      const node = nodeSqliteModule();
      if (node) return openNodeSqlite(node, path);
      return betterSqlite(path, `sqlite() from tickwork/sqlite on ${runtime()} (which has no node:sqlite; Node 22.13 and later do)`);
    }
    case "node:sqlite": {
      const node = nodeSqliteModule();
      if (!node) throw new SqliteDriverUnavailableError(driver, `sqlite(): the driver option "node:sqlite" needs Node 22.13 or later, and this is ${runtime()}: use driver "auto" or "better-sqlite3"`);
      return openNodeSqlite(node, path);
    }
    case "bun:sqlite": {
      const bun = bunSqliteModule();
      if (!bun) throw new SqliteDriverUnavailableError(driver, `sqlite(): the driver option "bun:sqlite" needs Bun, and this is ${runtime()}: use driver "auto"`);
      return openBunSqlite(bun, path);
    }
    case "better-sqlite3":
      return betterSqlite(path, `sqlite() from tickwork/sqlite with driver "better-sqlite3"`);
    default:
      throw new InvalidInputError(`sqlite(): the driver option must be one of ${SQLITE_DRIVERS.map((d) => `"${d}"`).join(", ")}; got ${preview(driver)}`);
  }
}

/**
 * better-sqlite3 is a native addon, loaded when its first connection opens: it loads only into the
 * Node whose ABI it was built for; Bun refuses it and Deno fails inside it. Those failures become a
 * SqliteDriverUnavailableError carrying the addon's error, so the caller learns which driver to pick
 * instead of reading a loader's message. On Node, an error opening the file itself stays the driver's.
 */
function betterSqlite(path: string, usedBy: string): SqliteConnection {
  const BetterSqlite = loadBetterSqlite(usedBy);
  try {
    return openBetterSqlite(BetterSqlite, path);
  } catch (error) {
    if (isNode() && (error as { code?: unknown } | null)?.code !== "ERR_DLOPEN_FAILED") throw error;
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    const remedy = isNode() ? `rebuild it for this Node (\`npm rebuild better-sqlite3\`) or use driver "auto"` : `use driver "auto", this runtime's own SQLite`;
    const message = `sqlite(): better-sqlite3 could not load in ${runtime()} (${reason}): ${remedy}`;
    throw new SqliteDriverUnavailableError("better-sqlite3", message, { cause: error });
  }
}

function busyTimeout(ms: unknown = 5000): number {
  if (typeof ms !== "number" || !Number.isInteger(ms) || ms < 0 || ms > 2 ** 31 - 1) {
    throw new InvalidInputError(`sqlite(): the busyTimeoutMs option must be a whole number of milliseconds from 0 to ${2 ** 31 - 1}; got ${preview(ms)}`);
  }
  return ms;
}

function isNode(): boolean {
  return !isBun() && !("Deno" in globalThis);
}

function runtime(): string {
  if (isBun()) return `Bun ${process.versions.bun}`;
  const deno = (globalThis as { Deno?: { version?: { deno?: string } } }).Deno;
  return deno ? `Deno ${deno.version?.deno ?? ""}`.trim() : `Node ${process.versions.node}`;
}
