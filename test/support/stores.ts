import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { QueueStore } from "../../src/queue/store/store.js";
import type { Store } from "../../src/store/store.js";
import { sqlite } from "../../src/store/sqlite.js";
import { postgres } from "../../src/store/postgres.js";
import { remoteStore } from "../cloudflare/support/remote-store.js";

/**
 * PostgreSQL is never skipped: without DATABASE_URL the local server is used, and if it cannot be
 * reached the PostgreSQL suites fail rather than hide.
 */
export const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export interface StoreCase {
  name: "sqlite-memory" | "sqlite-file" | "postgres" | "durable-object";
  /** A fresh, empty store. Call `cleanup` after the test (the store itself is closed by `tw.stop()`). */
  make(): Store;
  /** Opens another store on the same database as the last `make()` (a second process, an eviction). */
  reopen(): Store;
  cleanup(): Promise<void>;
}

export function sqliteMemoryCase(): StoreCase {
  return { name: "sqlite-memory", make: () => sqlite(":memory:"), reopen: () => { throw new Error("a :memory: database cannot be reopened"); }, cleanup: async () => {} };
}

export function sqliteFileCase(): StoreCase {
  let dir: string | undefined;
  return {
    name: "sqlite-file",
    make() {
      dir = mkdtempSync(join(tmpdir(), "tickwork-"));
      return sqlite(join(dir, "tickwork.db"));
    },
    reopen: () => sqlite(join(dir!, "tickwork.db")),
    cleanup: async () => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function postgresCase(): StoreCase {
  let schema: string | undefined;
  return {
    name: "postgres",
    make() {
      schema = uniqueSchema();
      return postgres({ url: DATABASE_URL, schema });
    },
    reopen: () => postgres({ url: DATABASE_URL, schema: schema! }),
    cleanup: async () => {
      if (schema) await dropSchema(schema);
    },
  };
}

/**
 * The Durable Object store, in real workerd (miniflare): each `make()` is a new object, `reopen()`
 * the same object again (its storage, as after an eviction). The engine stays in the test process
 * with its fake clock; every store operation runs in the object, in the run's one workerd.
 */
export function durableObjectCase(): StoreCase {
  let name: string | undefined;
  return {
    name: "durable-object",
    make() {
      name = `contract-${Math.random().toString(36).slice(2, 10)}`;
      return remoteStore(name);
    },
    reopen: () => remoteStore(name!),
    cleanup: async () => {},
  };
}

/** Every store the contract suites run against. */
export function allStoreCases(): StoreCase[] {
  return [sqliteMemoryCase(), sqliteFileCase(), postgresCase(), durableObjectCase()];
}

export function uniqueSchema(): string {
  return `tw_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Runs `fn` with a plain pg client on the test database (for inspecting rows and plans). */
export async function withPg<T>(fn: (client: pg.Client) => Promise<T>, schema?: string): Promise<T> {
  const client = new pg.Client({ connectionString: DATABASE_URL, options: schema ? `-c search_path="${schema}"` : undefined });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * `store` with one operation of its queue module wrapped: `wrap` gets the real operation and returns
 * what callers get instead (it counts, holds or records, and calls through). The store itself is
 * untouched, and every other operation goes to it as it is.
 */
export function wrapQueueOperation<K extends keyof QueueStore>(store: Store, operation: K, wrap: (real: QueueStore[K]) => QueueStore[K]): Store {
  const inner = store.queue;
  const wrapped = wrap((inner[operation] as (...args: unknown[]) => unknown).bind(inner) as QueueStore[K]);
  const queue = new Proxy(inner, { get: (target, property) => (property === operation ? wrapped : Reflect.get(target, property)) });
  return { ...store, queue };
}
