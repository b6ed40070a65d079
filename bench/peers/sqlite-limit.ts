/**
 * The machine's limit for single-row write transactions on a SQLite file, measured in the same run
 * as tickwork-on-SQLite and on the same SQLite: the connection `openSqlite` gives in this runtime
 * (the driver tickwork's `sqlite(path)` picks: node:sqlite on Node 22.13 and later, better-sqlite3
 * before), with the store's pragmas (WAL, `synchronous = NORMAL`). A loop of one-row INSERTs, each
 * in its own `BEGIN IMMEDIATE ... COMMIT` (the executor's `transaction`, how tickwork's store opens
 * its write transactions). A queue that wrote each claim and each completion in its own transaction
 * could not run jobs faster than half of this; batching claims and completions is what lets
 * tickwork aim above it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/store/sqlite-driver.js";
import { now } from "../support.js";

/** The SQLite driver the limit (and tickwork's SQLite rows) run on in this runtime, and its library version. */
export function sqliteRuntime(): { driver: string; version: string } {
  const db = openSqlite(":memory:");
  try {
    return { driver: db.driver, version: String(db.executor.all<{ v: string }>("SELECT sqlite_version() AS v")[0]!.v) };
  } finally {
    db.close();
  }
}

/** Transactions per second over `transactions` single-row INSERT transactions (after a short warm-up). */
export function sqliteWriteLimit(transactions: number): number {
  const dir = mkdtempSync(join(tmpdir(), "tickwork-peers-sqlite-limit-"));
  const db = openSqlite(join(dir, "limit.db"));
  try {
    const sql = db.executor;
    sql.exec("CREATE TABLE rows (id INTEGER PRIMARY KEY, queue TEXT NOT NULL, payload TEXT NOT NULL, run_at INTEGER NOT NULL)");
    const insert = "INSERT INTO rows (queue, payload, run_at) VALUES (?, ?, ?)";
    const write = (n: number) => sql.transaction(() => sql.run(insert, ["bench", `{"n":${n}}`, n]));
    for (let n = 0; n < 1_000; n++) write(n);
    const t0 = now();
    for (let n = 0; n < transactions; n++) write(n);
    return (transactions / (now() - t0)) * 1000;
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
