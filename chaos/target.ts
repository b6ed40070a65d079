/**
 * The database one scenario runs on, as every process of it opens it: a schema of its own on the
 * PostgreSQL server, or one SQLite file that all its processes share. Opening goes through the
 * public store entry points, as an application would.
 */
import pg from "pg";
import { postgres } from "../src/store/postgres.js";
import { sqlite } from "../src/store/sqlite.js";
import type { Store } from "../src/store/store.js";

export type Target =
  | {
      kind: "postgres";
      /** URL for the scenario's processes, without application_name (each process adds its own). */
      appUrl: string;
      schema: string;
      /** Every connection of the scenario's processes is named `<appPrefix>-<role>-<pid>`. */
      appPrefix: string;
    }
  | { kind: "sqlite"; path: string };

/** A URL with this connection's application_name, so the controller can find (and kill) its backends. */
export function namedUrl(url: string, applicationName: string): string {
  const u = new URL(url);
  u.searchParams.set("application_name", applicationName);
  return u.toString();
}

/**
 * The store of one process of the scenario. `pool`: the application's own pool (the pool scenario
 * shares it between tickwork and the application's queries).
 */
export function openStore(target: Target, role: string, options: { max: number; pool?: pg.Pool }): Store {
  if (target.kind === "sqlite") return sqlite(target.path);
  if (options.pool) return postgres({ pool: options.pool });
  return postgres({ url: namedUrl(target.appUrl, `${target.appPrefix}-${role}-${process.pid}`), schema: target.schema, max: options.max });
}

/** The application's own pool on the target (PostgreSQL only), with tickwork's schema on its search_path. */
export function appPool(target: Extract<Target, { kind: "postgres" }>, role: string, max: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: namedUrl(target.appUrl, `${target.appPrefix}-${role}-${process.pid}`),
    options: `-c search_path="${target.schema}"`,
    max,
  });
  // An idle client's error (the server went away, its backend was terminated) is reported by the next query.
  pool.on("error", () => {});
  return pool;
}
