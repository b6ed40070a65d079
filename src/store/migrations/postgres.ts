import type { Migration } from "./migration.js";

/** PostgreSQL schema steps. Times are epoch ms in bigint, read from the engine's clock, never now(). */
export const postgresMigrations: readonly Migration[] = [
  {
    version: 1,
    name: "jobs",
    sql: `
      CREATE TABLE tickwork_jobs (
        id           bigserial PRIMARY KEY,
        queue        text     NOT NULL,
        payload      json     NOT NULL,
        key          text,
        status       text     NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
        priority     integer  NOT NULL DEFAULT 0,
        run_at       bigint   NOT NULL,
        attempts     integer  NOT NULL DEFAULT 0,
        max_attempts integer  NOT NULL,
        last_error   text,
        worker_id    text,
        lease_until  bigint,
        created_at   bigint   NOT NULL,
        started_at   bigint,
        finished_at  bigint
      );
      CREATE INDEX tickwork_jobs_claim ON tickwork_jobs (queue, priority, run_at, id) WHERE status = 'pending';
      CREATE INDEX tickwork_jobs_due ON tickwork_jobs (queue, run_at) WHERE status = 'pending';
      CREATE UNIQUE INDEX tickwork_jobs_key ON tickwork_jobs (queue, key) WHERE key IS NOT NULL AND status IN ('pending', 'running');
      CREATE INDEX tickwork_jobs_lease ON tickwork_jobs (lease_until) WHERE status = 'running';
      CREATE INDEX tickwork_jobs_worker ON tickwork_jobs (worker_id) WHERE status = 'running';
      CREATE INDEX tickwork_jobs_finished ON tickwork_jobs (status, finished_at) WHERE status IN ('succeeded', 'failed', 'cancelled');
    `,
  },
];
