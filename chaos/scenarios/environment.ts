/**
 * One scenario's surroundings: a fresh database (a PostgreSQL schema, or a SQLite file), migrated by
 * the scenario's own role; a ledger directory; the controller's own ledger file (every fault it
 * injects); an observer engine that reads job counts through the public API (and never runs work);
 * and the processes it starts. `close` ends all of them, whatever happened.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { createTickwork, type Tickwork } from "../../src/index.js";
import { postgres } from "../../src/store/postgres.js";
import { sqlite } from "../../src/store/sqlite.js";
import { Processes } from "../children.js";
import type { PgServer } from "../cluster.js";
import { LedgerWriter, ledgerPath } from "../ledger.js";
import type { ScenarioName, Settings, StoreKind } from "../options.js";
import { FLOW_QUEUES } from "../processes/flow-queues.js";
import { Random } from "../random.js";
import { openStore, type Target } from "../target.js";

export interface Environment {
  scenario: ScenarioName;
  store: StoreKind;
  settings: Settings;
  server: PgServer | undefined;
  random: Random;
  dir: string;
  ledgerDir: string;
  target: Target;
  /** The controller's ledger: faults, windows, teardown. */
  controller: LedgerWriter;
  /** An engine on the target that only reads (`tw.jobs`), with the `chaos` queue (and the flows scenario's) declared, no handler. */
  observer: Tickwork;
  processes: Processes;
  log: (line: string) => void;
  /** Base fields every child config carries. */
  childBase(): { ledgerDir: string; fsync: boolean; target: Target };
  /** Whether a write could start on the SQLite file now (a frozen process may hold its write lock). */
  sqliteWritable(): boolean;
  close(): Promise<void>;
}

export async function openEnvironment(scenario: ScenarioName, store: StoreKind, settings: Settings, server: PgServer | undefined, runTag: string, index: number, log: (line: string) => void): Promise<Environment> {
  const dir = mkdtempSync(join(tmpdir(), `tw-chaos-${scenario}-${store}-`));
  const ledgerDir = join(dir, "ledger");
  mkdirSync(ledgerDir);
  const random = new Random(settings.seed + index * 7919);
  const schema = `chaos_${scenario.replace(/-/g, "_")}_${runTag}`;
  const target: Target =
    store === "postgres"
      ? { kind: "postgres", appUrl: server!.appUrl("chaos"), schema, appPrefix: `tw-chaos-${runTag}-${scenario}` }
      : { kind: "sqlite", path: join(dir, "tickwork.db") };

  let observer: Tickwork;
  try {
    // Migrated by the role the processes use, so that the tables are theirs.
    const migrator = openStore(target, "migrate", { max: 1 });
    try {
      await migrator.migrate();
    } finally {
      await migrator.close();
    }
    const observerStore = target.kind === "postgres" ? postgres({ url: server!.adminUrl(`tw-chaos-observer-${runTag}`), schema, max: 2 }) : sqlite(target.path);
    observer = await createTickwork({ store: observerStore, logger: () => {}, migrate: false, handleSignals: false });
    for (const queue of ["chaos", ...Object.values(FLOW_QUEUES)]) observer.queue(queue);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const controller = new LedgerWriter(ledgerPath(ledgerDir, "controller"), settings.fsync);
  const processes = new Processes();
  const probe = target.kind === "sqlite" ? new Database(target.path) : undefined;

  return {
    scenario,
    store,
    settings,
    server,
    random,
    dir,
    ledgerDir,
    target,
    controller,
    observer,
    processes,
    log,
    childBase: () => ({ ledgerDir, fsync: settings.fsync, target }),
    sqliteWritable() {
      if (!probe) return true;
      probe.pragma("busy_timeout = 300");
      try {
        probe.exec("BEGIN IMMEDIATE");
        probe.exec("ROLLBACK");
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      await processes.killAll().catch(() => {});
      await observer.stop().catch(() => {});
      probe?.close();
      controller.close();
      if (target.kind === "postgres" && !settings.keep) {
        const client = new pg.Client({ connectionString: server!.adminUrl(`tw-chaos-cleanup-${runTag}`) });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => client.end());
      }
    },
  };
}

/** Removes the scenario's directory (ledger, SQLite file) unless asked to keep it. */
export function removeDir(env: Environment): void {
  if (!env.settings.keep) rmSync(env.dir, { recursive: true, force: true });
}
