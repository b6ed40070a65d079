/**
 * What the per-job count trigger costs a claim on SQLite, three ways, on three files in one process,
 * alternating, 15 times: the row trigger as the schema has it; the same trigger with a `WHEN` that a
 * flag row holds off for the statement, the claim counting its batch itself; and no trigger. The
 * claim takes 100 pending jobs at a time off a partial index, as tickwork's does, through the same
 * connection layer (WAL, synchronous=NORMAL) as the store.
 *
 *   npx -y node@22.23.3 --import tsx bench/peers/sqlite-count-trigger.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SqliteConnection } from "../../src/db/sqlite-executor.js";
import { openSqlite } from "../../src/store/sqlite-driver.js";
import { fmt, summarise } from "../support.js";

const VARIANTS = ["row trigger", "held off", "no trigger"] as const;
type Variant = (typeof VARIANTS)[number];
const JOBS = 20_000;
const COUNT = `BEGIN UPDATE counts SET pending = pending + (NEW.status = 'pending') - (OLD.status = 'pending'),
  running = running + (NEW.status = 'running') - (OLD.status = 'running') WHERE queue = NEW.queue; END`;

function open(variant: Variant): { db: SqliteConnection; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "tickwork-count-trigger-"));
  const db = openSqlite(join(dir, "jobs.db"));
  db.executor.exec(`CREATE TABLE jobs (id INTEGER PRIMARY KEY, queue TEXT NOT NULL, status TEXT NOT NULL, run_at INTEGER NOT NULL, lease INTEGER);
    CREATE INDEX jobs_claim ON jobs (queue, run_at, id) WHERE status = 'pending';
    CREATE TABLE counts (queue TEXT PRIMARY KEY, pending INTEGER NOT NULL DEFAULT 0, running INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
    INSERT INTO counts VALUES ('q', 0, 0);
    CREATE TABLE flag (deferred INTEGER NOT NULL); INSERT INTO flag VALUES (0);`);
  if (variant === "row trigger") db.executor.exec(`CREATE TRIGGER counted AFTER UPDATE OF status ON jobs WHEN OLD.status <> NEW.status ${COUNT}`);
  if (variant === "held off") db.executor.exec(`CREATE TRIGGER counted AFTER UPDATE OF status ON jobs WHEN OLD.status <> NEW.status AND (SELECT deferred FROM flag) IS NOT 1 ${COUNT}`);
  return { db, dir };
}

/** µs of wall time per job to claim JOBS pending jobs, 100 a transaction. */
function claimAll({ executor: sql }: SqliteConnection, variant: Variant): number {
  sql.exec("DELETE FROM jobs");
  sql.transaction(() => {
    for (let n = 0; n < JOBS; n++) sql.run("INSERT INTO jobs (queue, status, run_at) VALUES ('q', 'pending', ?)", [n]);
  });
  const t0 = performance.now();
  for (let claimed = -1; claimed !== 0; ) {
    claimed = sql.transaction(() => {
      if (variant === "held off") sql.run("UPDATE flag SET deferred = ?", [1]);
      const rows = sql.all("UPDATE jobs SET status = 'running', lease = 1 WHERE id IN (SELECT id FROM jobs WHERE queue = 'q' AND status = 'pending' ORDER BY run_at, id LIMIT 100) RETURNING id");
      if (variant === "held off") {
        sql.run("UPDATE flag SET deferred = ?", [0]);
        sql.run("UPDATE counts SET pending = pending - ?, running = running + ? WHERE queue = 'q'", [rows.length, rows.length]);
      }
      return rows.length;
    });
  }
  return ((performance.now() - t0) * 1000) / JOBS;
}

const files = new Map(VARIANTS.map((v) => [v, open(v)]));
const times = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]));
for (let rep = 0; rep < 15; rep++) for (const v of rep % 2 ? [...VARIANTS].reverse() : VARIANTS) times.get(v)!.push(claimAll(files.get(v)!.db, v));
for (const v of VARIANTS) {
  const s = summarise(times.get(v)!);
  console.log(`${v.padEnd(11)} claim: ${fmt(s.median)} µs a job (min ${fmt(s.min)}, max ${fmt(s.max)})`);
}
for (const { db, dir } of files.values()) {
  db.close();
  rmSync(dir, { recursive: true, force: true });
}
