// Generated from 0001_baseline.sql by scripts/sql-modules.ts (npm run sql:modules). Edit the .sql file, not this one.
export default `-- tickwork's SQLite schema, version 1: shared by every SQLite driver and the Durable Object store.
-- Times are epoch milliseconds, read from the engine's clock. Booleans are 0 or 1.

-- ---- jobs ------------------------------------------------------------------------------------

CREATE TABLE tickwork_jobs (
  id                      INTEGER PRIMARY KEY,
  queue                   TEXT    NOT NULL,
  -- The payload as JSON text, or '' when it is long and kept in tickwork_job_payloads.
  payload                 TEXT    NOT NULL,
  key                     TEXT,
  status                  TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
  priority                INTEGER NOT NULL DEFAULT 0,
  run_at                  INTEGER NOT NULL,
  -- Attempts counted so far: a claim counts one, given back if its job never started.
  attempts                INTEGER NOT NULL DEFAULT 0,
  max_attempts            INTEGER NOT NULL,
  last_error              TEXT,
  -- The worker holding a running job, and until when.
  worker_id               TEXT,
  lease_until             INTEGER,
  created_at              INTEGER NOT NULL,
  -- When the current attempt started; null while a running job is held by its worker, not started.
  started_at              INTEGER,
  finished_at             INTEGER,
  -- The job did not set its own maxAttempts: the worker that claims it writes its queue's.
  max_attempts_from_queue INTEGER NOT NULL DEFAULT 0,
  -- A job's group (a tenant, an account): claims of a grouped queue walk the groups round-robin and
  -- hold each to its groupConcurrency and groupRateLimit.
  group_key               TEXT,
  -- The handler's return value as JSON text, kept with the job's retention.
  result                  TEXT,
  -- The last value a running handler reported.
  progress                TEXT,
  -- Times the job was put back without spending an attempt (bounded by the queue's maxSnoozes).
  snoozes                 INTEGER NOT NULL DEFAULT 0,
  -- The attempts before the current one (a JSON array, the last few kept); the current attempt is
  -- the row's own started_at, finished_at, status and last_error.
  history                 TEXT,
  -- Someone in another process awaits the job's end, so settling it signals them.
  waited                  INTEGER NOT NULL DEFAULT 0,
  -- Flows: a parent waits, pending with run_at at the end of time, while children_waiting of its
  -- children_total children have not ended; the last one's settle makes it due in the same
  -- transaction. child_failure: what a child failing for good does to it ('fail' it, or 'continue',
  -- counted in children_failed).
  parent_id               INTEGER,
  children_total          INTEGER NOT NULL DEFAULT 0,
  children_waiting        INTEGER NOT NULL DEFAULT 0,
  children_failed         INTEGER NOT NULL DEFAULT 0,
  child_failure           TEXT,
  -- The W3C Trace Context of the enqueue that created the job, as a JSON carrier, so its run's span
  -- links to it in any process. Only an engine with a tracer writes it.
  trace_context           TEXT
);
-- Claims: due pending jobs of a queue in priority, then run_at order. Partial, so finished rows never
-- enter it and a claim's cost does not grow with history. It also serves the next wake-up (read once
-- per priority): a second (queue, run_at) index would cost one more B-tree write per enqueue, claim
-- and settle.
CREATE INDEX tickwork_jobs_claim ON tickwork_jobs (queue, priority, run_at, id) WHERE status = 'pending';
-- A key is held by at most one live job of a queue: an enqueue of a held key is skipped.
CREATE UNIQUE INDEX tickwork_jobs_key ON tickwork_jobs (queue, key) WHERE key IS NOT NULL AND status IN ('pending', 'running');
-- Rescues of lapsed leases. Heartbeats name the jobs they renew (primary key): no index by worker.
CREATE INDEX tickwork_jobs_lease ON tickwork_jobs (lease_until) WHERE status = 'running';
-- Retention prunes finished rows by age.
CREATE INDEX tickwork_jobs_finished ON tickwork_jobs (status, finished_at) WHERE status IN ('succeeded', 'failed', 'cancelled');
-- A grouped queue's pending jobs by group. Ungrouped jobs never enter it.
CREATE INDEX tickwork_jobs_group ON tickwork_jobs (queue, group_key, priority, run_at, id) WHERE status = 'pending' AND group_key IS NOT NULL;
CREATE INDEX tickwork_jobs_parent ON tickwork_jobs (parent_id) WHERE parent_id IS NOT NULL;
-- The dashboard's failed jobs, polled every few seconds, and the job browser's failed and cancelled
-- tabs list by status, newest first: without these the list walks the table from its newest row,
-- every row of a million finished ones when none failed. One per status, each in id order, so a page
-- is a range of it with no sort; only these two statuses, whose jobs are few: a claim or a success
-- writes nothing here.
CREATE INDEX tickwork_jobs_failed ON tickwork_jobs (id) WHERE status = 'failed';
CREATE INDEX tickwork_jobs_cancelled ON tickwork_jobs (id) WHERE status = 'cancelled';

-- SQLite rewrites a whole row on every UPDATE, and a job's row is updated at least twice (its claim,
-- its outcome). A payload longer than a few hundred characters is written here once, and the job's
-- payload column holds '' (never a JSON text) to say so: the row a claim and an outcome rewrite
-- stays small.
CREATE TABLE tickwork_job_payloads (
  id      INTEGER PRIMARY KEY,
  payload TEXT    NOT NULL
);
-- Fires only for a job whose payload is here, so deleting the rest costs nothing more.
CREATE TRIGGER tickwork_job_payloads_deleted AFTER DELETE ON tickwork_jobs WHEN OLD.payload = ''
BEGIN
  DELETE FROM tickwork_job_payloads WHERE id = OLD.id;
END;

-- A queue's jobs by status, kept by triggers in the statements that insert, move and delete jobs: a
-- count reads one row per queue, whatever the table holds. One row per queue with a column per
-- status, so a job that changes status costs one UPDATE of one row (a row per queue and status cost
-- two statements a change, and no-op jobs ran about 10% slower).
CREATE TABLE tickwork_job_counts (
  queue     TEXT    PRIMARY KEY,
  pending   INTEGER NOT NULL DEFAULT 0,
  running   INTEGER NOT NULL DEFAULT 0,
  succeeded INTEGER NOT NULL DEFAULT 0,
  failed    INTEGER NOT NULL DEFAULT 0,
  cancelled INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TRIGGER tickwork_jobs_counted_insert AFTER INSERT ON tickwork_jobs
BEGIN
  INSERT INTO tickwork_job_counts (queue, pending, running, succeeded, failed, cancelled)
  VALUES (NEW.queue, NEW.status = 'pending', NEW.status = 'running', NEW.status = 'succeeded', NEW.status = 'failed', NEW.status = 'cancelled')
  ON CONFLICT (queue) DO UPDATE SET pending = pending + excluded.pending, running = running + excluded.running,
    succeeded = succeeded + excluded.succeeded, failed = failed + excluded.failed, cancelled = cancelled + excluded.cancelled;
END;
-- A job never changes queue; only a change of status moves a count.
CREATE TRIGGER tickwork_jobs_counted_update AFTER UPDATE OF status ON tickwork_jobs WHEN OLD.status <> NEW.status
BEGIN
  UPDATE tickwork_job_counts SET
    pending = pending + (NEW.status = 'pending') - (OLD.status = 'pending'),
    running = running + (NEW.status = 'running') - (OLD.status = 'running'),
    succeeded = succeeded + (NEW.status = 'succeeded') - (OLD.status = 'succeeded'),
    failed = failed + (NEW.status = 'failed') - (OLD.status = 'failed'),
    cancelled = cancelled + (NEW.status = 'cancelled') - (OLD.status = 'cancelled')
  WHERE queue = NEW.queue;
END;
CREATE TRIGGER tickwork_jobs_counted_delete AFTER DELETE ON tickwork_jobs
BEGIN
  UPDATE tickwork_job_counts SET
    pending = pending - (OLD.status = 'pending'), running = running - (OLD.status = 'running'),
    succeeded = succeeded - (OLD.status = 'succeeded'), failed = failed - (OLD.status = 'failed'),
    cancelled = cancelled - (OLD.status = 'cancelled')
  WHERE queue = OLD.queue;
END;

-- A key held for a period (unique: { for }, throttle): the job enqueued under it, and until when an
-- enqueue of the same key gets that job back instead of a new one, whatever its status.
CREATE TABLE tickwork_job_keys (
  queue  TEXT    NOT NULL,
  key    TEXT    NOT NULL,
  job_id INTEGER,
  until  INTEGER NOT NULL,
  PRIMARY KEY (queue, key)
);

-- ---- flow control ----------------------------------------------------------------------------

-- Rate budgets shared by every process: one row per bucket (a named limiter, a queue's global
-- rateLimit, a group's groupRateLimit). tat is the bucket's theoretical arrival time (GCRA): the
-- instant, in fractional ms, by which every token taken so far has been paid back.
CREATE TABLE tickwork_limits (
  bucket       TEXT    PRIMARY KEY,
  tat          REAL    NOT NULL,
  paused_until INTEGER,
  updated_at   INTEGER NOT NULL
);
-- Paused queues (group_key '') and paused groups of a queue: no claim starts their jobs.
CREATE TABLE tickwork_queue_pauses (
  queue     TEXT    NOT NULL,
  group_key TEXT    NOT NULL,
  paused_at INTEGER NOT NULL,
  PRIMARY KEY (queue, group_key)
);
-- Where the round-robin over a grouped queue's groups goes on: the group the last claim, in any
-- process, ended on. Claims of a queue take turns, so they share one walk instead of bunching.
CREATE TABLE tickwork_group_cursors (
  queue     TEXT PRIMARY KEY,
  group_key TEXT NOT NULL
);
-- A queue's globalConcurrency is shared out as slots: each worker holds a count of them until a time
-- it renews, and runs at most that many of the queue's jobs at once. The counts of live holds never
-- add up to more than the limit; a worker that dies stops renewing, and its slots count until its
-- hold lapses. wanted: what the worker could run; one holding fewer than its fair share of what it
-- wants makes the others give back down to theirs.
CREATE TABLE tickwork_queue_slots (
  queue     TEXT    NOT NULL,
  worker_id TEXT    NOT NULL,
  slots     INTEGER NOT NULL,
  wanted    INTEGER NOT NULL,
  until     INTEGER NOT NULL,
  PRIMARY KEY (queue, worker_id)
);

-- ---- periodic tasks --------------------------------------------------------------------------

-- One row per periodic task: the slot last claimed (each slot is claimed once, by a conditional
-- update, so any number of processes may tick), the run lease, and what status() reports.
CREATE TABLE tickwork_tasks (
  name                 TEXT    PRIMARY KEY,
  last_slot            INTEGER NOT NULL,
  missed               INTEGER NOT NULL DEFAULT 0,
  running_slot         INTEGER,
  running_by           TEXT,
  running_until        INTEGER,
  next_run_after       INTEGER,
  paused_until         INTEGER,
  breaker_open         INTEGER NOT NULL DEFAULT 0,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  last_run_at          INTEGER,
  last_scheduled_at    INTEGER,
  last_duration_ms     INTEGER,
  last_outcome         TEXT,
  last_result          TEXT,
  last_error           TEXT,
  runs                 INTEGER NOT NULL DEFAULT 0,
  failures             INTEGER NOT NULL DEFAULT 0,
  overlaps_skipped     INTEGER NOT NULL DEFAULT 0,
  created_at           INTEGER NOT NULL
);
-- The last runs of each task (bounded by the task's history option).
CREATE TABLE tickwork_task_runs (
  id           INTEGER PRIMARY KEY,
  task         TEXT    NOT NULL,
  scheduled_at INTEGER NOT NULL,
  started_at   INTEGER NOT NULL,
  finished_at  INTEGER NOT NULL,
  duration_ms  INTEGER NOT NULL,
  outcome      TEXT    NOT NULL,
  manual       INTEGER NOT NULL,
  result       TEXT,
  error        TEXT,
  runner       TEXT    NOT NULL
);
CREATE INDEX tickwork_task_runs_task ON tickwork_task_runs (task, id);
-- Scheduler-wide state: the ops kill switch (pauseUntil).
CREATE TABLE tickwork_scheduler (
  id           INTEGER PRIMARY KEY CHECK (id = 1),
  paused_until INTEGER
);
INSERT INTO tickwork_scheduler (id, paused_until) VALUES (1, NULL);

-- ---- cache and idempotency -------------------------------------------------------------------

-- Key-value cache: a value and when it was fetched, so a reader can refuse one too old for it.
CREATE TABLE tickwork_cache (
  key        TEXT    PRIMARY KEY,
  value      TEXT    NOT NULL,
  fetched_at INTEGER NOT NULL
);
-- One row per (scope, key, operation): claimed while the operation runs ('processing'), then
-- 'completed' with its result for replays. claim_id fences completion to the claim's owner.
CREATE TABLE tickwork_idempotency (
  scope        TEXT    NOT NULL,
  key          TEXT    NOT NULL,
  operation    TEXT    NOT NULL,
  status       TEXT    NOT NULL CHECK (status IN ('processing', 'completed')),
  claim_id     TEXT    NOT NULL,
  fingerprint  TEXT,
  result       TEXT,
  created_at   INTEGER NOT NULL,
  renewed_at   INTEGER NOT NULL,
  completed_at INTEGER,
  PRIMARY KEY (scope, key, operation)
);
-- An operation that changes its scope (one that opens a new account) is found by key and operation.
CREATE INDEX tickwork_idempotency_key ON tickwork_idempotency (key, operation);
-- Expired keys are deleted by age.
CREATE INDEX tickwork_idempotency_created ON tickwork_idempotency (created_at);

-- ---- deliveries and fan-outs -----------------------------------------------------------------

-- Delivery outbox: every emitted item until it is delivered or dropped. id is the delivery's stable
-- identity (the webhook-id receivers dedupe on); a key is held by one item at a time, so a key with
-- a delivery or a retry outstanding is not emitted again.
CREATE TABLE tickwork_deliveries (
  id          TEXT    PRIMARY KEY,
  delivery    TEXT    NOT NULL,
  key         TEXT,
  payload     TEXT    NOT NULL,
  attempts    INTEGER NOT NULL DEFAULT 0,
  run_at      INTEGER NOT NULL,
  lease_until INTEGER NOT NULL DEFAULT 0,
  last_error  TEXT,
  created_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX tickwork_deliveries_key ON tickwork_deliveries (delivery, key) WHERE key IS NOT NULL;
-- First sends and retries are claimed separately (retries have their own per-tick share).
CREATE INDEX tickwork_deliveries_fresh ON tickwork_deliveries (delivery, run_at, created_at) WHERE attempts = 0;
CREATE INDEX tickwork_deliveries_retry ON tickwork_deliveries (delivery, run_at) WHERE attempts > 0;
-- Dropped deliveries (the retry schedule ran out), kept with their last error for replay.
CREATE TABLE tickwork_delivery_dead (
  id         TEXT    PRIMARY KEY,
  delivery   TEXT    NOT NULL,
  key        TEXT,
  payload    TEXT    NOT NULL,
  attempts   INTEGER NOT NULL,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  dropped_at INTEGER NOT NULL
);
CREATE INDEX tickwork_delivery_dead_dropped ON tickwork_delivery_dead (delivery, dropped_at, id);
-- One row per fan-out: the last state pushed, its version, and the one next wake-up (a retry or a
-- reconciliation; a retry never replaces a sooner one).
CREATE TABLE tickwork_fanouts (
  name                 TEXT    PRIMARY KEY,
  state                TEXT,
  version              INTEGER NOT NULL DEFAULT 0,
  next_at              INTEGER,
  next_reason          TEXT,
  lease_until          INTEGER NOT NULL DEFAULT 0,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  last_error           TEXT,
  last_push_at         INTEGER,
  last_success_at      INTEGER,
  updated_at           INTEGER NOT NULL
);
-- Per target: the state version it has acknowledged, so a retry goes only to those behind.
CREATE TABLE tickwork_fanout_targets (
  fanout     TEXT    NOT NULL,
  target     TEXT    NOT NULL,
  grp        TEXT    NOT NULL,
  version    INTEGER NOT NULL DEFAULT 0,
  failures   INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  pushed_at  INTEGER,
  PRIMARY KEY (fanout, target)
);
`;
