import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { createTickwork, type Tickwork, type TickworkOptions } from "../../../src/tickwork.js";
import type { LogEvent } from "../../../src/core/logger.js";
import type { Store } from "../../../src/store/store.js";
import { sqlite } from "../../../src/store/sqlite.js";
import { postgres } from "../../../src/store/postgres.js";
import { fakeClock, type FakeClock } from "../../../src/testing/fake-clock.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../../support/stores.js";
import { START } from "../../support/queue-fixtures.js";

/**
 * Every tickwork table's rows, as text: two snapshots are equal exactly when nothing was written in
 * between, which is how a refused call is shown to have written nothing.
 */
export type Snapshot = Record<string, string[]>;

/** A store the properties of a file run against: a real SQLite file, or a fresh PostgreSQL schema. */
export interface PropertyStore {
  readonly name: "sqlite-file" | "postgres";
  /** The one store of the file (migrated); engines made by `engine()` share it and never close it. */
  store(): Store;
  snapshot(): Promise<Snapshot>;
}

interface StoreKind {
  name: PropertyStore["name"];
  open(): Promise<{ store: Store; snapshot: () => Promise<Snapshot>; cleanup: () => Promise<void> }>;
}

const sqliteFile: StoreKind = {
  name: "sqlite-file",
  async open() {
    const dir = mkdtempSync(join(tmpdir(), "tickwork-property-"));
    const path = join(dir, "tickwork.db");
    const store = sqlite(path);
    await store.migrate();
    // A second connection reads what the store committed (WAL: it never blocks the store's writes).
    const reader = new Database(path, { readonly: true, fileMustExist: true });
    const tables = (reader.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'tickwork%' ORDER BY name").all() as { name: string }[]).map((t) => t.name);
    const reads = tables.map((table) => [table, reader.prepare(`SELECT * FROM "${table}"`)] as const);
    return {
      store,
      snapshot: async () => Object.fromEntries(reads.map(([table, read]) => [table, (read.all() as unknown[]).map((row) => JSON.stringify(row)).sort()])),
      cleanup: async () => {
        reader.close();
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const postgresSchema: StoreKind = {
  name: "postgres",
  async open() {
    const schema = uniqueSchema();
    const store = postgres({ url: DATABASE_URL, schema });
    await store.migrate();
    const reader = new pg.Client({ connectionString: DATABASE_URL, options: `-c search_path="${schema}"` });
    await reader.connect();
    const { rows } = await reader.query<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_name LIKE 'tickwork%' ORDER BY 1", [schema]);
    const tables = rows.map((r) => r.name);
    // One round trip per snapshot: every table's rows as JSON text.
    const sql = tables.map((table) => `SELECT '${table}' AS t, row_to_json(x)::text AS r FROM "${table}" x`).join(" UNION ALL ");
    return {
      store,
      snapshot: async () => {
        const result = await reader.query<{ t: string; r: string }>(sql);
        const snapshot: Snapshot = Object.fromEntries(tables.map((t) => [t, [] as string[]]));
        for (const { t, r } of result.rows) snapshot[t]!.push(r);
        for (const t of tables) snapshot[t]!.sort();
        return snapshot;
      },
      cleanup: async () => {
        await reader.end();
        await store.close();
        await dropSchema(schema);
      },
    };
  },
};

/** The stores every property runs against: SQLite in a real temp file, and PostgreSQL. */
export const STORE_KINDS: readonly StoreKind[] = [sqliteFile, postgresSchema];

/** Opens `kind` once for the enclosing describe block (beforeAll) and removes it after (afterAll). */
export function propertyStore(kind: StoreKind): PropertyStore {
  let opened: Awaited<ReturnType<StoreKind["open"]>> | undefined;
  beforeAll(async () => {
    opened = await kind.open();
  });
  afterAll(async () => {
    await opened?.cleanup();
    opened = undefined;
  });
  const must = () => {
    if (!opened) throw new Error(`the ${kind.name} store is not open (beforeAll failed?)`);
    return opened;
  };
  return {
    name: kind.name,
    store: () => must().store,
    snapshot: () => must().snapshot(),
  };
}

export interface RunEngine {
  tw: Tickwork;
  clock: FakeClock;
  events: LogEvent[];
}

/**
 * A fresh engine on the file's shared store, with its own fake clock at START and its events in
 * memory. Each run of a property gets its own, so a value one run got accepted (a task with a bad
 * cadence, a queue with a bad lease) cannot break the runs after it, nor fast-check's shrinking.
 * It is never stopped: stopping would close the shared store, and an engine that was never started
 * holds nothing but memory.
 */
export async function runEngine(ps: PropertyStore, options: Omit<TickworkOptions, "store" | "clock" | "logger" | "handleSignals" | "migrate"> = {}): Promise<RunEngine> {
  const clock = fakeClock(START);
  const events: LogEvent[] = [];
  const tw = await createTickwork({ ...options, store: ps.store(), clock, logger: (e) => void events.push(e), handleSignals: false, migrate: false });
  return { tw, clock, events };
}

let counter = 0;

/** A name no other run of the file has used (queues, tasks, deliveries and fan-outs share a store). */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

/** What changed between two snapshots, in a line per table, or null when nothing did. */
export function snapshotChange(before: Snapshot, after: Snapshot): string | null {
  const lines: string[] = [];
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = new Set(before[table] ?? []);
    const now = new Set(after[table] ?? []);
    const added = [...now].filter((r) => !was.has(r));
    const removed = [...was].filter((r) => !now.has(r));
    if (added.length || removed.length) {
      lines.push(`${table}: +${added.length} -${removed.length}${added.length ? `, e.g. added ${added[0]!.slice(0, 300)}` : ""}${removed.length ? `, e.g. removed ${removed[0]!.slice(0, 300)}` : ""}`);
    }
  }
  return lines.length ? lines.join("\n") : null;
}
