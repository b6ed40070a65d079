import type { Migration } from "./migration.js";

/** SQLite schema steps, shared by better-sqlite3 and the Durable Object store. Times are epoch ms. */
export const sqliteMigrations: readonly Migration[] = [
  {
    version: 1,
    name: "jobs",
    sql: `
      CREATE TABLE tickwork_jobs (
        id           INTEGER PRIMARY KEY,
        queue        TEXT    NOT NULL,
        payload      TEXT    NOT NULL,
        key          TEXT,
        status       TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
        priority     INTEGER NOT NULL DEFAULT 0,
        run_at       INTEGER NOT NULL,
        attempts     INTEGER NOT NULL DEFAULT 0,
        max_attempts INTEGER NOT NULL,
        last_error   TEXT,
        worker_id    TEXT,
        lease_until  INTEGER,
        created_at   INTEGER NOT NULL,
        started_at   INTEGER,
        finished_at  INTEGER
      );
      -- Claims: due pending jobs of a queue in priority, then run_at order. Partial, so finished
      -- rows never enter it and claim cost does not grow with history.
      CREATE INDEX tickwork_jobs_claim ON tickwork_jobs (queue, priority, run_at, id) WHERE status = 'pending';
      -- Next wake-up, and claims when only a few of many scheduled jobs are due.
      CREATE INDEX tickwork_jobs_due ON tickwork_jobs (queue, run_at) WHERE status = 'pending';
      -- A key is held by at most one live job of a queue (seed 004's skipDuplicates).
      CREATE UNIQUE INDEX tickwork_jobs_key ON tickwork_jobs (queue, key) WHERE key IS NOT NULL AND status IN ('pending', 'running');
      CREATE INDEX tickwork_jobs_lease ON tickwork_jobs (lease_until) WHERE status = 'running';
      CREATE INDEX tickwork_jobs_worker ON tickwork_jobs (worker_id) WHERE status = 'running';
      -- Retention prunes finished rows by age.
      CREATE INDEX tickwork_jobs_finished ON tickwork_jobs (status, finished_at) WHERE status IN ('succeeded', 'failed', 'cancelled');
    `,
  },
];
