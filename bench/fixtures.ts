/**
 * The databases the queue benchmark runs on: a fresh SQLite file (WAL) or a fresh PostgreSQL schema
 * per measurement, each with a side connection for what the engine has no API for (bulk-inserting
 * finished history, counting live jobs, dropping the schema).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { Store } from "../src/store/store.js";
import { createTickwork, type Tickwork } from "../src/tickwork.js";
import { MissingPeerError } from "../src/core/errors.js";
import { sqlite } from "../src/store/sqlite.js";
import { openSqlite, SQLITE_DRIVERS, SqliteDriverUnavailableError, type SqliteDriver } from "../src/store/sqlite-driver.js";
import { postgres } from "../src/store/postgres.js";
import { payloadBody } from "./support.js";

export const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** One empty, migrated database. */
export interface Fixture {
  /** A new store on this database; each engine gets its own, as a separate process would. */
  open(): Store;
  /** Adds `count` succeeded jobs of `queue` (finished in the last few minutes, so retention keeps them), then ANALYZE. */
  addFinished(queue: string, count: number): Promise<void>;
  /** Jobs still pending or running. */
  live(): Promise<number>;
  countByStatus(status: string): Promise<number>;
  /** Closes the side connection and removes the file or schema. */
  drop(): Promise<void>;
}

export interface Backend {
  /** "SQLite" on the driver sqlite() picks by default, "SQLite, <driver>" on another. */
  name: string;
  fresh(): Promise<Fixture>;
  /** Version and the settings that move the figures (durability above all). */
  describe(): Promise<{ version: string; settings: Record<string, string> }>;
}

// Both dialects count live jobs through the two partial indexes (status = 'pending' / 'running'),
// so polling for "all settled" stays cheap next to 100,000 finished rows.
const LIVE_COUNT = `SELECT (SELECT count(*) FROM tickwork_jobs WHERE status = 'pending')
                         + (SELECT count(*) FROM tickwork_jobs WHERE status = 'running') AS n`;

/** SQLite on `driver`; "auto" is what `sqlite(path)` opens in this runtime. */
export function sqliteBackendOn(driver: SqliteDriver): Backend {
  return {
    name: driver === "auto" ? "SQLite" : `SQLite, ${driver}`,
    async fresh() {
      const dir = mkdtempSync(join(tmpdir(), "tickwork-bench-"));
      const path = join(dir, "bench.db");
      const setup = sqlite(path, { driver });
      await setup.migrate();
      await setup.close();
      // Opened after the schema exists; the engine's own connection is opened later by `open()`, so it
      // reads the statistics ANALYZE writes here when it prepares its statements.
      const side = openSqlite(path, { driver });
      const count = (sql: string, params: (string | number)[] = []) => Number(side.executor.all<{ n: number }>(sql, params)[0]!.n);
      return {
        open: () => sqlite(path, { driver }),
        async addFinished(queue, count) {
          const at = Date.now();
          side.executor.run(
            `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
             INSERT INTO tickwork_jobs (queue, payload, status, priority, run_at, attempts, max_attempts, created_at, started_at, finished_at)
             SELECT ?, '{"n":' || n || '}', 'succeeded', 0, ? - n, 1, 5, ? - n, ? - n, ? - n FROM g`,
            [count, queue, at, at, at, at],
          );
          side.executor.exec("ANALYZE");
        },
        live: async () => count(LIVE_COUNT),
        countByStatus: async (status) => count(`SELECT count(*) AS n FROM tickwork_jobs WHERE status = ?`, [status]),
        async drop() {
          side.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
    async describe() {
      const db = openSqlite(":memory:", { driver });
      try {
        const version = String(db.executor.all<{ v: string }>("SELECT sqlite_version() AS v")[0]!.v);
        return { version, settings: { driver: db.driver, journal_mode: "wal", synchronous: "normal (the store's default)" } };
      } finally {
        db.close();
      }
    },
  };
}

export const sqliteBackend: Backend = sqliteBackendOn("auto");

/** The drivers other than the default that load in this runtime, each a backend of its own. */
export function otherSqliteBackends(): Backend[] {
  const auto = openSqlite(":memory:");
  const picked = auto.driver;
  auto.close();
  return SQLITE_DRIVERS.filter((driver) => driver !== "auto" && driver !== picked && loads(driver)).map(sqliteBackendOn);
}

function loads(driver: SqliteDriver): boolean {
  try {
    openSqlite(":memory:", { driver }).close();
    return true;
  } catch (error) {
    if (error instanceof SqliteDriverUnavailableError || error instanceof MissingPeerError) return false;
    throw error;
  }
}

/** A fresh schema with tickwork's tables, and a side connection on it for filling and counting rows. */
export async function migratedPostgresSchema(prefix: string): Promise<{ schema: string; side: pg.Client; count(sql: string, params?: unknown[]): Promise<number> }> {
  const schema = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const setup = postgres({ url: DATABASE_URL, schema });
  try {
    await setup.migrate();
  } finally {
    await setup.close();
  }
  const side = new pg.Client({ connectionString: DATABASE_URL, options: `-c search_path="${schema}"` });
  await side.connect();
  const count = async (sql: string, params: unknown[] = []) => Number((await side.query<{ n: string }>(sql, params)).rows[0]!.n);
  return { schema, side, count };
}

export const postgresBackend: Backend = {
  name: "PostgreSQL",
  async fresh() {
    const { schema, side, count } = await migratedPostgresSchema("tw_bench");
    return {
      open: () => postgres({ url: DATABASE_URL, schema }),
      async addFinished(queue, n) {
        const at = Date.now();
        await side.query(
          `INSERT INTO tickwork_jobs (queue, payload, status, priority, run_at, attempts, max_attempts, created_at, started_at, finished_at)
           SELECT $1, json_build_object('n', g), 'succeeded', 0, $2::bigint - g, 1, 5, $2::bigint - g, $2::bigint - g, $2::bigint - g
           FROM generate_series(1, $3::int) AS g`,
          [queue, at, n],
        );
        await side.query("ANALYZE tickwork_jobs");
      },
      live: () => count(LIVE_COUNT),
      countByStatus: (status) => count(`SELECT count(*) AS n FROM tickwork_jobs WHERE status = $1`, [status]),
      async drop() {
        try {
          await side.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        } finally {
          await side.end();
        }
      },
    };
  },
  async describe() {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      const show = async (name: string) => (await client.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name]!;
      const settings: Record<string, string> = {};
      for (const name of ["synchronous_commit", "fsync", "shared_buffers"]) settings[name] = await show(name);
      return { version: await show("server_version"), settings };
    } finally {
      await client.end();
    }
  },
};

/** The no-op jobs' payload: a number, and for the payload-size rows a body of that size. */
export type Payload = { n: number; body?: unknown };

/** `count` payloads numbered from `from`, as `enqueueMany` takes them, each about `bytes` long (0: just the number). */
export function payloads(from: number, count: number, bytes = 0): { payload: Payload }[] {
  const body = payloadBody(bytes);
  return Array.from({ length: count }, (_, i) => ({ payload: body === undefined ? { n: from + i } : { n: from + i, body } }));
}

/**
 * Engines for the benchmarks: events off but for the rare warnings and errors, counted by scenario
 * (per-job events are debug, below the level, so the sink costs what `() => {}` costs; a benchmark
 * that hid a store error would report a wrong figure). Signals are left to the bench, and the
 * schema is already migrated by the fixture.
 */
export function benchEngines(): { engine(store: Store): Promise<Tickwork>; problems: ReadonlyMap<string, number>; setScenario(name: string): void; report(): string[] } {
  const problems = new Map<string, number>();
  let scenario = "setup";
  return {
    problems,
    setScenario: (name) => void (scenario = name),
    engine: (store) =>
      createTickwork({
        store,
        logger: (event) => {
          if (event.level === "debug" || event.level === "info") return;
          const key = `${scenario}: ${event.event}${typeof event.operation === "string" ? ` (${event.operation})` : ""}`;
          problems.set(key, (problems.get(key) ?? 0) + 1);
        },
        handleSignals: false,
        migrate: false,
      }),
    report: () =>
      problems.size === 0
        ? ["Engine warnings and errors during the run: none."]
        : ["Engine warnings and errors during the run (these scenarios' figures are suspect):", ...[...problems].map(([key, n]) => `- ${key}: ${n}`)],
  };
}
