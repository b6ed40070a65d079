/**
 * The machine's limit for single-row write transactions on a SQLite file, measured with
 * better-sqlite3 in the same run as tickwork-on-SQLite: a loop of one-row INSERTs, each in its own
 * `BEGIN IMMEDIATE ... COMMIT` (how tickwork's store opens its write transactions), on a WAL file
 * with `synchronous = NORMAL` (the store's pragmas). A queue that wrote each claim and each
 * completion in its own transaction could not run jobs faster than half of this; batching claims
 * and completions is what lets tickwork aim above it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { now } from "../support.js";

/** Transactions per second over `transactions` single-row INSERT transactions (after a short warm-up). */
export function sqliteWriteLimit(transactions: number): number {
  const dir = mkdtempSync(join(tmpdir(), "tickwork-peers-sqlite-limit-"));
  const db = new Database(join(dir, "limit.db"));
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.exec("CREATE TABLE rows (id INTEGER PRIMARY KEY, queue TEXT NOT NULL, payload TEXT NOT NULL, run_at INTEGER NOT NULL)");
    const insert = db.prepare("INSERT INTO rows (queue, payload, run_at) VALUES (?, ?, ?)");
    const write = db.transaction((n: number) => insert.run("bench", `{"n":${n}}`, n));
    for (let n = 0; n < 1_000; n++) write.immediate(n);
    const t0 = now();
    for (let n = 0; n < transactions; n++) write.immediate(n);
    return (transactions / (now() - t0)) * 1000;
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
