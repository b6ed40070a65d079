// Generated from 0001_baseline.sql by scripts/sql-modules.ts (npm run sql:modules). Edit the .sql file, not this one.
export default `-- tickwork's PostgreSQL schema, version 1. Times are epoch milliseconds in bigint, read from the
-- engine's clock, never now(). The migration runs with search_path set to tickwork's schema.

-- ---- jobs ------------------------------------------------------------------------------------

CREATE TABLE tickwork_jobs (
  id                      bigserial PRIMARY KEY,
  queue                   text     NOT NULL,
  payload                 json     NOT NULL,
  key                     text,
  status                  text     NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
  priority                integer  NOT NULL DEFAULT 0,
  run_at                  bigint   NOT NULL,
  -- Attempts counted so far: a claim counts one, given back if its job never started.
  attempts                integer  NOT NULL DEFAULT 0,
  max_attempts            integer  NOT NULL,
  last_error              text,
  -- The worker holding a running job, and until when.
  worker_id               text,
  lease_until             bigint,
  created_at              bigint   NOT NULL,
  -- When the current attempt started; null while a running job is held by its worker, not started.
  started_at              bigint,
  finished_at             bigint,
  -- The job did not set its own maxAttempts: the worker that claims it writes its queue's.
  max_attempts_from_queue boolean  NOT NULL DEFAULT false,
  -- A job's group (a tenant, an account): claims of a grouped queue walk the groups round-robin and
  -- hold each to its groupConcurrency and groupRateLimit.
  group_key               text,
  -- The handler's return value, kept with the job's retention; the last progress a handler reported.
  result                  json,
  progress                json,
  -- Times the job was put back without spending an attempt (bounded by the queue's maxSnoozes).
  snoozes                 integer  NOT NULL DEFAULT 0,
  -- The attempts before the current one (the last few kept); the current attempt is the row's own
  -- started_at, finished_at, status and last_error.
  history                 jsonb,
  -- Someone awaits the job's end, so settling it notifies them.
  waited                  boolean  NOT NULL DEFAULT false,
  -- Flows: a parent waits, pending with run_at at the end of time, while children_waiting of its
  -- children_total children have not ended; the last one's settle makes it due in the same
  -- transaction. child_failure: what a child failing for good does to it ('fail' or 'continue').
  parent_id               bigint,
  children_total          integer  NOT NULL DEFAULT 0,
  children_waiting        integer  NOT NULL DEFAULT 0,
  children_failed         integer  NOT NULL DEFAULT 0,
  child_failure           text,
  -- The W3C Trace Context of the enqueue that created the job (only an engine with a tracer writes it).
  trace_context           text
);
-- A row over about 2 KB is toasted: its long values compressed, and moved out of the row only while
-- the row is still longer than this target (2 KB by default). A compressed 2 KB payload stayed in
-- the row, and every claim and outcome, each a new version of the row, copied it: 2 KB payloads ran
-- about 1.15x faster with the target at its minimum. Rows under about 2 KB are never toasted.
ALTER TABLE tickwork_jobs SET (toast_tuple_target = 128);
-- A payload over about 2 KB is compressed when stored; lz4 costs a fraction of the default pglz (bulk
-- enqueue of 2 KB payloads went about 1.25x faster) for a similar size. A server built without lz4
-- refuses the statement and keeps pglz: that is the only error swallowed.
DO $lz4$
BEGIN
  EXECUTE 'ALTER TABLE tickwork_jobs ALTER COLUMN payload SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
  NULL;
END
$lz4$;
-- Claims: due pending jobs of a queue in priority, then run_at order. Partial, so finished rows never
-- enter it and a claim's cost does not grow with history. It also serves the next wake-up (read per
-- priority). A second (queue, run_at) index held every pending row again and gave the planner a claim
-- that sorts the whole due backlog: without fresh statistics (a burst into an idle queue, before
-- autovacuum analyzes) each claim of 500 from 100,000 due jobs cost 80 ms instead of 10.
CREATE INDEX tickwork_jobs_claim ON tickwork_jobs (queue, priority, run_at, id) WHERE status = 'pending';
-- A key is held by at most one live job of a queue: an enqueue of a held key is skipped.
CREATE UNIQUE INDEX tickwork_jobs_key ON tickwork_jobs (queue, key) WHERE key IS NOT NULL AND status IN ('pending', 'running');
-- Rescues of lapsed leases. Heartbeats name the jobs they renew (primary key): no index by worker,
-- which would cost one more B-tree write per claim.
CREATE INDEX tickwork_jobs_lease ON tickwork_jobs (lease_until) WHERE status = 'running';
-- Retention prunes finished rows by age.
CREATE INDEX tickwork_jobs_finished ON tickwork_jobs (status, finished_at) WHERE status IN ('succeeded', 'failed', 'cancelled');
-- A grouped queue's pending jobs by group, and its running ones (the room of a group under
-- groupConcurrency). Ungrouped jobs never enter them, so queues without groups pay nothing for them.
CREATE INDEX tickwork_jobs_group ON tickwork_jobs (queue, group_key, priority, run_at, id) WHERE status = 'pending' AND group_key IS NOT NULL;
CREATE INDEX tickwork_jobs_group_running ON tickwork_jobs (queue, group_key) WHERE status = 'running' AND group_key IS NOT NULL;
CREATE INDEX tickwork_jobs_parent ON tickwork_jobs (parent_id) WHERE parent_id IS NOT NULL;

-- A key held for a period (unique: { for }, throttle): the job enqueued under it, and until when an
-- enqueue of the same key gets that job back instead of a new one, whatever its status.
CREATE TABLE tickwork_job_keys (
  queue  text   NOT NULL,
  key    text   NOT NULL,
  job_id bigint,
  until  bigint NOT NULL,
  PRIMARY KEY (queue, key)
);

-- Counts by queue and status, moved by triggers in the same transaction as the rows they count.
-- Each backend adds to rows of its own (shard = its pid), so concurrent writers never wait on
-- one counter row, nor lock two in opposite orders; the pruner folds the rows of backends that
-- are gone into shard 0. A count is a sum over a few rows, whatever the table holds.
CREATE TABLE tickwork_job_counts (
  queue  text    NOT NULL,
  status text    NOT NULL,
  shard  integer NOT NULL,
  n      bigint  NOT NULL,
  PRIMARY KEY (queue, status, shard)
);

-- Statement-level, over the statement's transition tables: one upsert per statement whatever its
-- rows, and none at all for an update that moves no row between counts (a lease renewal).
-- Sorted, so a statement locks its counter rows in one order.
CREATE FUNCTION tickwork_count_inserted() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
BEGIN
  INSERT INTO tickwork_job_counts AS c (queue, status, shard, n)
  SELECT queue, status, pg_backend_pid(), count(*) FROM tickwork_new GROUP BY queue, status ORDER BY queue, status
  ON CONFLICT (queue, status, shard) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END
$fn$;
CREATE FUNCTION tickwork_count_updated() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
BEGIN
  INSERT INTO tickwork_job_counts AS c (queue, status, shard, n)
  SELECT queue, status, pg_backend_pid(), sum(d) FROM (
    SELECT queue, status, 1 AS d FROM tickwork_new
    UNION ALL
    SELECT queue, status, -1 AS d FROM tickwork_old
  ) moved
  GROUP BY queue, status HAVING sum(d) <> 0 ORDER BY queue, status
  ON CONFLICT (queue, status, shard) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END
$fn$;
CREATE FUNCTION tickwork_count_deleted() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
BEGIN
  INSERT INTO tickwork_job_counts AS c (queue, status, shard, n)
  SELECT queue, status, pg_backend_pid(), -count(*) FROM tickwork_old GROUP BY queue, status ORDER BY queue, status
  ON CONFLICT (queue, status, shard) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END
$fn$;
CREATE FUNCTION tickwork_count_truncated() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
BEGIN
  DELETE FROM tickwork_job_counts;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER tickwork_jobs_counted_insert AFTER INSERT ON tickwork_jobs REFERENCING NEW TABLE AS tickwork_new
  FOR EACH STATEMENT EXECUTE FUNCTION tickwork_count_inserted();
CREATE TRIGGER tickwork_jobs_counted_update AFTER UPDATE ON tickwork_jobs REFERENCING OLD TABLE AS tickwork_old NEW TABLE AS tickwork_new
  FOR EACH STATEMENT EXECUTE FUNCTION tickwork_count_updated();
CREATE TRIGGER tickwork_jobs_counted_delete AFTER DELETE ON tickwork_jobs REFERENCING OLD TABLE AS tickwork_old
  FOR EACH STATEMENT EXECUTE FUNCTION tickwork_count_deleted();
CREATE TRIGGER tickwork_jobs_counted_truncate AFTER TRUNCATE ON tickwork_jobs
  FOR EACH STATEMENT EXECUTE FUNCTION tickwork_count_truncated();

-- ---- flow control ----------------------------------------------------------------------------

-- Rate budgets shared by every process: one row per bucket (a named limiter, a queue's global
-- rateLimit, a group's groupRateLimit). tat is the bucket's theoretical arrival time (GCRA): the
-- instant, in fractional ms, by which every token taken so far has been paid back.
CREATE TABLE tickwork_limits (
  bucket       text             PRIMARY KEY,
  tat          double precision NOT NULL,
  paused_until bigint,
  updated_at   bigint           NOT NULL
);
-- Paused queues (group_key '') and paused groups of a queue: no claim starts their jobs.
CREATE TABLE tickwork_queue_pauses (
  queue     text   NOT NULL,
  group_key text   NOT NULL,
  paused_at bigint NOT NULL,
  PRIMARY KEY (queue, group_key)
);
-- Where the round-robin over a grouped queue's groups goes on: the group the last claim, in any
-- process, ended on. Claims of a queue take turns, so they share one walk instead of bunching.
CREATE TABLE tickwork_group_cursors (
  queue     text PRIMARY KEY,
  group_key text NOT NULL
);
-- A queue's globalConcurrency is shared out as slots: each worker holds a count of them until a time
-- it renews, and runs at most that many of the queue's jobs at once. The counts of live holds never
-- add up to more than the limit; a worker that dies stops renewing, and its slots count until its
-- hold lapses. wanted: what the worker could run; one holding fewer than its fair share of what it
-- wants makes the others give back down to theirs.
CREATE TABLE tickwork_queue_slots (
  queue     text    NOT NULL,
  worker_id text    NOT NULL,
  slots     integer NOT NULL,
  wanted    integer NOT NULL,
  until     bigint  NOT NULL,
  PRIMARY KEY (queue, worker_id)
);

-- Sets p_worker's slots of p_queue: as many of p_want as the live holds of other workers leave
-- under p_cap (0 lets go), held until p_until; lapsed holds of the queue are deleted on the way.
-- One round trip: the queue's lock is taken inside the call and each statement of a function
-- takes a fresh snapshot, so the sum is read after the lock and sees every hold set before it.
-- share: p_cap shared equally among the workers that want slots, when one of them holds less
-- than its share of what it wants (the others give back down to theirs), else p_cap.
-- due: whether a job of the queue is due, asked only when fewer slots than wanted were held.
CREATE FUNCTION tickwork_hold_slots(p_queue text, p_worker text, p_want integer, p_cap integer,
                                    p_now bigint, p_until bigint, OUT held integer, OUT due boolean, OUT share integer)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_others integer;
  v_wanting integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(current_schema() || '/tickwork_queue_slots/' || p_queue, 0));
  DELETE FROM tickwork_queue_slots WHERE queue = p_queue AND until < p_now;
  SELECT coalesce(sum(slots), 0), count(*) INTO v_others, v_wanting
  FROM tickwork_queue_slots WHERE queue = p_queue AND worker_id <> p_worker;
  held := greatest(0, least(p_want, p_cap - v_others));
  IF p_want = 0 THEN
    DELETE FROM tickwork_queue_slots WHERE queue = p_queue AND worker_id = p_worker;
  ELSE
    v_wanting := v_wanting + 1;
    INSERT INTO tickwork_queue_slots (queue, worker_id, slots, wanted, until) VALUES (p_queue, p_worker, held, p_want, p_until)
    ON CONFLICT (queue, worker_id) DO UPDATE SET slots = excluded.slots, wanted = excluded.wanted, until = excluded.until;
  END IF;
  share := p_cap;
  IF v_wanting > 1 AND EXISTS (
    SELECT 1 FROM tickwork_queue_slots
    WHERE queue = p_queue AND slots < least(wanted, (p_cap + v_wanting - 1) / v_wanting)) THEN
    share := greatest(1, p_cap / v_wanting);
  END IF;
  due := held < p_want AND EXISTS (
    SELECT 1 FROM tickwork_jobs WHERE queue = p_queue AND status = 'pending' AND run_at <= p_now);
END
$fn$;

-- A rate bucket's arithmetic (GCRA, as the engine's BucketSpec computes it): the tokens a bucket
-- (its row's tat and paused_until; a missing row is full) has at p_now, and when its next one is.
CREATE FUNCTION tickwork_bucket_tokens(p_tat double precision, p_paused bigint, p_interval double precision, p_burst integer, p_now bigint)
RETURNS integer LANGUAGE sql IMMUTABLE AS $fn$
  SELECT CASE
    WHEN p_tat IS NULL THEN p_burst
    WHEN p_paused IS NOT NULL AND p_now < p_paused THEN 0
    ELSE greatest(0, least(p_burst, floor((p_burst * p_interval - greatest(0, p_tat - p_now)) / p_interval + 1e-9)))::integer
  END
$fn$;

CREATE FUNCTION tickwork_bucket_next(p_tat double precision, p_paused bigint, p_interval double precision, p_burst integer, p_now bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE AS $fn$
  SELECT CASE
    WHEN p_tat IS NULL THEN p_now
    ELSE greatest(CASE WHEN p_paused IS NOT NULL AND p_now < p_paused THEN p_paused ELSE p_now END,
                  ceil(p_tat - (p_burst - 1) * p_interval)::bigint)
  END
$fn$;

-- One claim of a grouped queue, whole: returns {jobs, paused, held, retryAt, cursor}.
-- p_buckets: the buckets every start takes a token of (the queue's rateLimit, named limiters), as
-- [{bucket, intervalMs, burst}]; p_group_rate: each group's own bucket ({intervalMs, burst}, the
-- row 'group:<queue>/<group>'). Both NULL for a queue without rate limits.
-- 0. The queue's buckets are locked (in key order, so claims and limiter takes cannot deadlock) and
--    cut p_want to the tokens they have; with none left the claim ends held by the bucket with the
--    fewest: 'limiter' for a named limiter's ('limiter:<name>'), else 'rateLimit'.
-- Groups with pending jobs are then visited in key order from the queue's shared cursor (or p_after
-- while it has none), wrapping once, until p_want groups are taken or p_want + p_probes visited, in
-- a fixed number of statements:
-- 1. One recursive query walks: each step finds the next group with pending jobs after the last and
--    judges it, in a CASE so that each check runs only when those before it passed: -1 paused; 0 no
--    due job, or another claim holds its lock (that claim starts it); -2 its running jobs fill the
--    cap (p_cap, its groupConcurrency; NULL: none) as the walk's snapshot sees them; -3 its own bucket
--    has no token; 1 taken, its lock (a try) held. The lock is a try, so claims never wait on each
--    other nor on each other's commits, and cannot deadlock.
-- 2. One statement counts the running jobs and reads the bucket of the groups taken. Its snapshot,
--    taken after the locks, sees every start of those groups committed before, which the walk's would
--    not: a group another claim filled (or spent) meanwhile is found so here. A settle or a rescue
--    only ever lowers a count.
-- 3. One statement starts their jobs: each group the same share of p_want (times its weight in
--    p_weights; 1 for a group not named), within its room (cap and tokens), taken round-robin (in
--    each round every group its weight's worth, in claim order), and takes the groups' tokens. Under
--    groupConcurrency 1 a group taken with none of its jobs running takes up to p_depth of them, for
--    a worker that runs them one after another. Only the first p_start of them in that order are
--    started (started_at); the rest are held for the worker, which writes their starts as its slots
--    free. The columns set are the plain claim's.
-- The queue's lock is taken shared: the claim of an ungrouped queue, which takes it exclusive, never
-- runs beside this one. The last group taken (or visited) is where the next claim of any process
-- goes on from; a move of the cursor goes only forward, from where this claim started towards where
-- it ended. The claim's commit still waits for the WAL flush: a start lost in a crash of the server
-- would let a group's next job start beside one still running.
-- held names what kept the claim from taking p_want, though due jobs may be waiting, and retryAt
-- when a token held back is there again (NULL: when a job finishes, or at the next poll).
CREATE FUNCTION tickwork_claim_grouped(p_queue text, p_want integer, p_cap integer, p_weights jsonb, p_after text,
                                       p_now bigint, p_worker text, p_lease_until bigint, p_max_attempts integer, p_probes integer,
                                       p_depth integer DEFAULT 1, p_start integer DEFAULT NULL,
                                       p_buckets jsonb DEFAULT NULL, p_group_rate jsonb DEFAULT NULL)
RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE
  v_paused text[];
  v_start text;
  v_taken text[];
  v_taken_firsts bigint[];
  v_firsts bigint[];
  v_last text;
  v_any_paused boolean;
  v_any_full boolean;
  v_spent text[];
  v_groups text[];
  v_rooms integer[];
  v_rate_bound boolean[];
  v_held text;
  v_share integer;
  v_jobs json := '[]';
  v_count integer := 0;
  v_cursor text;
  v_want_groups integer;
  v_rate_held text;
  v_tokens integer;
  v_retry bigint;
  v_group_retry bigint;
  v_bound_retry bigint;
  v_g_interval double precision := (p_group_rate ->> 'intervalMs')::double precision;
  v_g_burst integer := (p_group_rate ->> 'burst')::integer;
  v_g_prefix text := 'group:' || p_queue || '/';
BEGIN
  PERFORM pg_advisory_xact_lock_shared(hashtextextended(current_schema() || '/tickwork_jobs/' || p_queue, 0));
  v_paused := ARRAY(SELECT z.group_key FROM tickwork_queue_pauses z WHERE z.queue = p_queue);
  IF '' = ANY(v_paused) THEN
    RETURN json_build_object('jobs', v_jobs, 'paused', true, 'held', 'paused', 'retryAt', NULL, 'cursor', p_after);
  END IF;
  IF jsonb_array_length(coalesce(p_buckets, '[]')) > 0 THEN
    -- A missing row is written first, so there is a row to lock.
    INSERT INTO tickwork_limits (bucket, tat, paused_until, updated_at)
    SELECT b.bucket, p_now, NULL, p_now FROM jsonb_to_recordset(p_buckets) AS b(bucket text) ORDER BY b.bucket
    ON CONFLICT DO NOTHING;
    PERFORM 1 FROM tickwork_limits l WHERE l.bucket IN (SELECT b.bucket FROM jsonb_to_recordset(p_buckets) AS b(bucket text))
    ORDER BY l.bucket FOR UPDATE;
    SELECT tickwork_bucket_tokens(l.tat, l.paused_until, (b.spec ->> 'intervalMs')::double precision, (b.spec ->> 'burst')::integer, p_now),
           CASE WHEN l.bucket LIKE 'limiter:%' THEN 'limiter' ELSE 'rateLimit' END
    INTO v_tokens, v_rate_held
    FROM jsonb_array_elements(p_buckets) WITH ORDINALITY AS b(spec, ord)
    JOIN tickwork_limits l ON l.bucket = b.spec ->> 'bucket'
    ORDER BY 1, b.ord LIMIT 1;
    IF v_tokens < p_want THEN
      p_want := v_tokens;
    ELSE
      v_rate_held := NULL;
    END IF;
    IF p_want = 0 THEN
      IF NOT EXISTS (SELECT 1 FROM tickwork_jobs WHERE queue = p_queue AND status = 'pending' AND run_at <= p_now) THEN
        RETURN json_build_object('jobs', v_jobs, 'paused', false, 'held', NULL, 'retryAt', NULL, 'cursor', p_after);
      END IF;
      SELECT max(tickwork_bucket_next(greatest(l.tat, p_now), l.paused_until, b."intervalMs", b.burst, p_now)) INTO v_retry
      FROM jsonb_to_recordset(p_buckets) AS b(bucket text, "intervalMs" double precision, burst integer)
      JOIN tickwork_limits l ON l.bucket = b.bucket;
      RETURN json_build_object('jobs', v_jobs, 'paused', false, 'held', v_rate_held, 'retryAt', v_retry, 'cursor', p_after);
    END IF;
  END IF;
  -- With groupConcurrency 1, a group taken takes up to p_depth jobs.
  v_want_groups := CASE WHEN p_cap = 1 THEN ceil(p_want::numeric / greatest(p_depth, 1))::integer ELSE p_want END;
  v_start := coalesce((SELECT c.group_key FROM tickwork_group_cursors c WHERE c.queue = p_queue), p_after, '');
  -- Each step's probe reads the next group's first pending job in claim order (the group index's
  -- order): when it is due, it is the job the group starts first, and no other probe is needed to
  -- know the group has one due.
  WITH RECURSIVE walk(k, lap, visits, taken, verdict, first) AS (
    SELECT v_start, CASE WHEN v_start = '' THEN 1 ELSE 0 END, 0, 0, 0, NULL::bigint
    UNION ALL
    SELECT nx.k, nx.lap, w.visits + 1, w.taken + CASE WHEN v.verdict = 1 THEN 1 ELSE 0 END, v.verdict,
           CASE WHEN nx.run_at <= p_now THEN nx.id END
    FROM walk w
    CROSS JOIN LATERAL (
      (SELECT t.group_key AS k, t.id, t.run_at, w.lap AS lap FROM tickwork_jobs t
       WHERE t.queue = p_queue AND t.status = 'pending' AND t.group_key IS NOT NULL AND t.group_key > w.k
       ORDER BY t.group_key, t.priority, t.run_at, t.id LIMIT 1)
      UNION ALL
      (SELECT t.group_key, t.id, t.run_at, 1 FROM tickwork_jobs t
       WHERE w.lap = 0 AND t.queue = p_queue AND t.status = 'pending' AND t.group_key IS NOT NULL
       ORDER BY t.group_key, t.priority, t.run_at, t.id LIMIT 1)
      LIMIT 1
    ) AS nx
    -- Subqueries with LIMIT, not EXISTS: on the function's generic plan the planner turned an
    -- EXISTS into a hash of every pending job of the queue, built on every call.
    CROSS JOIN LATERAL (
      SELECT CASE
        WHEN nx.k = ANY(v_paused) THEN -1
        WHEN nx.run_at > p_now AND (SELECT 1 FROM tickwork_jobs t
              WHERE t.queue = p_queue AND t.group_key = nx.k AND t.status = 'pending' AND t.group_key IS NOT NULL AND t.run_at <= p_now
              LIMIT 1) IS NULL THEN 0
        WHEN p_cap IS NOT NULL AND (SELECT count(*) FROM (SELECT 1 FROM tickwork_jobs r
                                    WHERE r.queue = p_queue AND r.group_key = nx.k AND r.status = 'running' AND r.group_key IS NOT NULL
                                      AND r.lease_until >= p_now
                                    LIMIT p_cap) AS running) >= p_cap THEN -2
        WHEN v_g_interval IS NOT NULL AND (SELECT tickwork_bucket_tokens(l.tat, l.paused_until, v_g_interval, v_g_burst, p_now)
                                           FROM tickwork_limits l WHERE l.bucket = v_g_prefix || nx.k) = 0 THEN -3
        WHEN pg_try_advisory_xact_lock(hashtextextended(current_schema() || '/tickwork_group/' || p_queue || '/' || nx.k, 0)) THEN 1
        ELSE 0
      END AS verdict
    ) AS v
    WHERE w.taken < v_want_groups AND w.visits < v_want_groups + p_probes AND NOT (nx.lap = 1 AND v_start <> '' AND nx.k > v_start)
  )
  SELECT coalesce(array_agg(w.k ORDER BY w.visits) FILTER (WHERE w.verdict = 1), '{}'),
         coalesce(array_agg(w.first ORDER BY w.visits) FILTER (WHERE w.verdict = 1), '{}'),
         (array_agg(w.k ORDER BY w.visits DESC))[1],
         coalesce(bool_or(w.verdict = -1), false),
         coalesce(bool_or(w.verdict = -2), false),
         coalesce(array_agg(w.k) FILTER (WHERE w.verdict = -3), '{}')
  INTO v_taken, v_taken_firsts, v_last, v_any_paused, v_any_full, v_spent
  FROM walk w WHERE w.visits > 0;
  -- Each group's room: what its cap leaves (p_want without one), then what its tokens leave.
  SELECT coalesce(array_agg(g.k ORDER BY g.ord) FILTER (WHERE g.room > 0), '{}'),
         coalesce(array_agg(g.room ORDER BY g.ord) FILTER (WHERE g.room > 0), '{}'),
         coalesce(array_agg(g.first ORDER BY g.ord) FILTER (WHERE g.room > 0), '{}'),
         coalesce(array_agg(g.rate_room < g.cap_room ORDER BY g.ord) FILTER (WHERE g.room > 0), '{}'),
         v_any_full OR coalesce(bool_or(g.cap_room <= 0), false),
         v_spent || coalesce(array_agg(g.k) FILTER (WHERE g.cap_room > 0 AND g.rate_room <= 0), '{}')
  INTO v_groups, v_rooms, v_firsts, v_rate_bound, v_any_full, v_spent
  FROM (SELECT c.k, c.ord, c.first, c.cap_room, c.rate_room, least(c.cap_room, c.rate_room) AS room
        FROM (SELECT t.k, t.ord, t.first,
                     CASE WHEN p_cap IS NULL THEN p_want
                          ELSE (p_cap - running.n) * CASE WHEN p_cap = 1 THEN greatest(p_depth, 1) ELSE 1 END END AS cap_room,
                     CASE WHEN v_g_interval IS NULL THEN p_want
                          ELSE (SELECT coalesce(min(tickwork_bucket_tokens(l.tat, l.paused_until, v_g_interval, v_g_burst, p_now)), v_g_burst)
                                FROM tickwork_limits l WHERE l.bucket = v_g_prefix || t.k) END AS rate_room
              FROM unnest(v_taken, v_taken_firsts) WITH ORDINALITY AS t(k, first, ord)
              CROSS JOIN LATERAL (SELECT count(*)::integer AS n FROM tickwork_jobs r
                                  WHERE p_cap IS NOT NULL AND r.queue = p_queue AND r.group_key = t.k AND r.status = 'running'
                                    AND r.group_key IS NOT NULL AND r.lease_until >= p_now) AS running) AS c) AS g;
  v_held := CASE WHEN v_any_full THEN 'groupConcurrency' WHEN cardinality(v_spent) > 0 THEN 'groupRateLimit' WHEN v_any_paused THEN 'paused' END;
  IF cardinality(v_spent) > 0 THEN
    SELECT min(tickwork_bucket_next(l.tat, l.paused_until, v_g_interval, v_g_burst, p_now)) INTO v_group_retry
    FROM tickwork_limits l WHERE l.bucket IN (SELECT v_g_prefix || s.k FROM unnest(v_spent) AS s(k));
  END IF;
  IF cardinality(v_groups) > 0 THEN
    v_share := ceil(p_want::numeric / cardinality(v_groups));
    -- A group whose cap, not its share, bounds what it takes may have due jobs left waiting on the cap.
    IF p_cap IS NOT NULL AND EXISTS (SELECT 1 FROM unnest(v_groups, v_rooms, v_rate_bound) AS g(k, room, by_rate)
                                     WHERE NOT g.by_rate AND g.room < least(v_share * coalesce((p_weights ->> g.k)::integer, 1), p_want)) THEN
      v_held := 'groupConcurrency';
    END IF;
    WITH weighted AS (
      SELECT g.k, g.room, g.ord, coalesce((p_weights ->> g.k)::integer, 1) AS w, g.first
      FROM unnest(v_groups, v_rooms, v_firsts) WITH ORDINALITY AS g(k, room, first, ord)
    ), asked AS (
      SELECT weighted.k, weighted.w, weighted.ord, least(weighted.room, v_share * weighted.w, p_want) AS m, weighted.first FROM weighted
    ), picked AS (
      SELECT x.id, row_number() OVER (ORDER BY (x.r - 1) / asked.w, asked.ord, x.r) AS pos FROM asked CROSS JOIN LATERAL (
        SELECT asked.first AS id, 1::bigint AS r WHERE asked.m = 1 AND asked.first IS NOT NULL
        UNION ALL
        SELECT h.id, row_number() OVER (ORDER BY h.priority, h.run_at, h.id) AS r FROM (
          SELECT t.id, t.priority, t.run_at FROM tickwork_jobs t
          WHERE t.queue = p_queue AND t.group_key = asked.k AND t.status = 'pending' AND t.group_key IS NOT NULL AND t.run_at <= p_now
            AND NOT (asked.m = 1 AND asked.first IS NOT NULL)
          ORDER BY t.priority, t.run_at, t.id LIMIT asked.m
        ) AS h
      ) AS x
      ORDER BY pos
      LIMIT p_want
    ), started AS (
      UPDATE tickwork_jobs j
      SET status = 'running', attempts = j.attempts + 1, worker_id = p_worker, lease_until = p_lease_until,
          started_at = CASE WHEN picked.pos <= coalesce(p_start, p_want) THEN p_now END,
          max_attempts = CASE WHEN j.max_attempts_from_queue THEN coalesce(p_max_attempts, j.max_attempts) ELSE j.max_attempts END
      FROM picked
      WHERE j.id = picked.id AND j.status = 'pending'
      RETURNING j.id, j.queue, j.key, j.group_key, j.status, j.priority, j.run_at, j.attempts, j.max_attempts, j.last_error, j.created_at, j.started_at, j.finished_at, j.payload,
        CASE WHEN j.snoozes = 0 AND j.history IS NULL AND j.parent_id IS NULL AND j.children_total = 0 AND j.trace_context IS NULL THEN NULL
             ELSE json_build_array(j.snoozes, j.history, j.parent_id, j.children_total, j.children_waiting, j.children_failed, j.trace_context) END AS extra
    )
    SELECT coalesce(json_agg(started), '[]'::json), count(*) INTO v_jobs, v_count FROM started;
    IF v_g_interval IS NOT NULL AND v_count > 0 THEN
      -- Each group pays for what it started; one its tokens, not its share, bounded and that spent
      -- them all may have due jobs waiting on its next token.
      WITH took AS (
        SELECT j ->> 'group_key' AS k, count(*)::integer AS n FROM json_array_elements(v_jobs) AS j GROUP BY 1
      ), paid AS (
        INSERT INTO tickwork_limits AS l (bucket, tat, paused_until, updated_at)
        SELECT v_g_prefix || took.k, greatest(coalesce(o.tat, p_now), p_now) + took.n * v_g_interval, NULL, p_now
        FROM took LEFT JOIN tickwork_limits o ON o.bucket = v_g_prefix || took.k
        ON CONFLICT (bucket) DO UPDATE SET tat = excluded.tat, updated_at = excluded.updated_at
        RETURNING l.bucket, l.tat, l.paused_until
      )
      SELECT min(tickwork_bucket_next(paid.tat, paid.paused_until, v_g_interval, v_g_burst, p_now)) INTO v_bound_retry
      FROM paid
      JOIN took ON paid.bucket = v_g_prefix || took.k
      JOIN unnest(v_groups, v_rooms, v_rate_bound) AS g(k, room, by_rate) ON g.k = took.k
      WHERE g.by_rate AND took.n >= g.room AND g.room < least(v_share * coalesce((p_weights ->> g.k)::integer, 1), p_want);
      IF v_bound_retry IS NOT NULL THEN
        v_group_retry := least(v_group_retry, v_bound_retry);
        IF v_held IS NULL OR v_held = 'paused' THEN v_held := 'groupRateLimit'; END IF;
      END IF;
    END IF;
  END IF;
  v_cursor := coalesce(v_taken[cardinality(v_taken)], v_last);
  IF v_cursor IS NOT NULL AND v_cursor IS DISTINCT FROM v_start THEN
    INSERT INTO tickwork_group_cursors AS c (queue, group_key) VALUES (p_queue, v_cursor)
    ON CONFLICT (queue) DO UPDATE SET group_key = excluded.group_key
    WHERE CASE WHEN v_start < v_cursor THEN c.group_key >= v_start AND c.group_key < v_cursor
               ELSE c.group_key >= v_start OR c.group_key < v_cursor END;
  END IF;
  v_retry := CASE WHEN v_held IS NOT NULL THEN v_group_retry END;
  IF jsonb_array_length(coalesce(p_buckets, '[]')) > 0 THEN
    UPDATE tickwork_limits l SET tat = greatest(l.tat, p_now) + v_count * b."intervalMs", updated_at = p_now
    FROM jsonb_to_recordset(p_buckets) AS b(bucket text, "intervalMs" double precision)
    WHERE l.bucket = b.bucket AND v_count > 0;
    -- Fewer due jobs than the tokens allowed: the queue ran out, not the bucket.
    IF v_rate_held IS NOT NULL AND v_count = p_want AND EXISTS (
         SELECT 1 FROM tickwork_jobs WHERE queue = p_queue AND status = 'pending' AND run_at <= p_now) THEN
      SELECT least(v_retry, max(tickwork_bucket_next(l.tat, l.paused_until, b."intervalMs", b.burst, p_now))) INTO v_retry
      FROM jsonb_to_recordset(p_buckets) AS b(bucket text, "intervalMs" double precision, burst integer)
      JOIN tickwork_limits l ON l.bucket = b.bucket;
      v_held := v_rate_held;
    END IF;
  END IF;
  RETURN json_build_object('jobs', v_jobs, 'paused', false, 'held', v_held, 'retryAt', v_retry, 'cursor', coalesce(v_cursor, p_after));
END
$fn$;

-- ---- hand-offs across processes --------------------------------------------------------------

-- An idle worker's free slots, one row each, which an enqueue in any process may take: it
-- deletes the rows it takes, writes its jobs already claimed by their workers and notifies each
-- worker of its jobs' ids, so they start without a claim. A row per slot, so enqueues that commit
-- at the same time take different rows rather than wait on one. Unlogged: nothing here is worth
-- a WAL write or outlives its worker (an offer lasts a couple of seconds unless renewed).
-- An enqueue takes a row only while until is ahead of its clock; its job's lease runs lease_ms
-- from the enqueue, and max_attempts stands in for the queue's default as a claim's would.
CREATE UNLOGGED TABLE tickwork_offers (
  queue        text    NOT NULL,
  worker_id    text    NOT NULL,
  slot         bigint  NOT NULL,
  until        bigint  NOT NULL,
  lease_ms     bigint  NOT NULL,
  max_attempts integer,
  PRIMARY KEY (queue, worker_id, slot)
);

-- ---- periodic tasks --------------------------------------------------------------------------

-- One row per periodic task: the slot last claimed (each slot is claimed once, by a conditional
-- update, so any number of processes may tick), the run lease, and what status() reports.
CREATE TABLE tickwork_tasks (
  name                 text    PRIMARY KEY,
  last_slot            bigint  NOT NULL,
  missed               integer NOT NULL DEFAULT 0,
  running_slot         bigint,
  running_by           text,
  running_until        bigint,
  next_run_after       bigint,
  paused_until         bigint,
  breaker_open         integer NOT NULL DEFAULT 0,
  consecutive_failures integer NOT NULL DEFAULT 0,
  last_run_at          bigint,
  last_scheduled_at    bigint,
  last_duration_ms     bigint,
  last_outcome         text,
  last_result          text,
  last_error           text,
  runs                 bigint  NOT NULL DEFAULT 0,
  failures             bigint  NOT NULL DEFAULT 0,
  overlaps_skipped     bigint  NOT NULL DEFAULT 0,
  created_at           bigint  NOT NULL
);
-- The last runs of each task (bounded by the task's history option).
CREATE TABLE tickwork_task_runs (
  id           bigserial PRIMARY KEY,
  task         text    NOT NULL,
  scheduled_at bigint  NOT NULL,
  started_at   bigint  NOT NULL,
  finished_at  bigint  NOT NULL,
  duration_ms  bigint  NOT NULL,
  outcome      text    NOT NULL,
  manual       integer NOT NULL,
  result       text,
  error        text,
  runner       text    NOT NULL
);
CREATE INDEX tickwork_task_runs_task ON tickwork_task_runs (task, id);
-- Scheduler-wide state: the ops kill switch (pauseUntil).
CREATE TABLE tickwork_scheduler (
  id           integer PRIMARY KEY CHECK (id = 1),
  paused_until bigint
);
INSERT INTO tickwork_scheduler (id, paused_until) VALUES (1, NULL);

-- ---- cache and idempotency -------------------------------------------------------------------

-- Key-value cache: a value and when it was fetched, so a reader can refuse one too old for it.
CREATE TABLE tickwork_cache (
  key        text   PRIMARY KEY,
  value      text   NOT NULL,
  fetched_at bigint NOT NULL
);
-- One row per (scope, key, operation): claimed while the operation runs ('processing'), then
-- 'completed' with its result for replays. claim_id fences completion to the claim's owner.
CREATE TABLE tickwork_idempotency (
  scope        text   NOT NULL,
  key          text   NOT NULL,
  operation    text   NOT NULL,
  status       text   NOT NULL CHECK (status IN ('processing', 'completed')),
  claim_id     text   NOT NULL,
  fingerprint  text,
  result       text,
  created_at   bigint NOT NULL,
  renewed_at   bigint NOT NULL,
  completed_at bigint,
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
  id          text    PRIMARY KEY,
  delivery    text    NOT NULL,
  key         text,
  payload     text    NOT NULL,
  attempts    integer NOT NULL DEFAULT 0,
  run_at      bigint  NOT NULL,
  lease_until bigint  NOT NULL DEFAULT 0,
  last_error  text,
  created_at  bigint  NOT NULL
);
CREATE UNIQUE INDEX tickwork_deliveries_key ON tickwork_deliveries (delivery, key) WHERE key IS NOT NULL;
-- First sends and retries are claimed separately (retries have their own per-tick share).
CREATE INDEX tickwork_deliveries_fresh ON tickwork_deliveries (delivery, run_at, created_at) WHERE attempts = 0;
CREATE INDEX tickwork_deliveries_retry ON tickwork_deliveries (delivery, run_at) WHERE attempts > 0;
-- Dropped deliveries (the retry schedule ran out), kept with their last error for replay.
CREATE TABLE tickwork_delivery_dead (
  id         text    PRIMARY KEY,
  delivery   text    NOT NULL,
  key        text,
  payload    text    NOT NULL,
  attempts   integer NOT NULL,
  last_error text,
  created_at bigint  NOT NULL,
  dropped_at bigint  NOT NULL
);
CREATE INDEX tickwork_delivery_dead_dropped ON tickwork_delivery_dead (delivery, dropped_at, id);
-- One row per fan-out: the last state pushed, its version, and the one next wake-up (a retry or a
-- reconciliation; a retry never replaces a sooner one).
CREATE TABLE tickwork_fanouts (
  name                 text    PRIMARY KEY,
  state                text,
  version              bigint  NOT NULL DEFAULT 0,
  next_at              bigint,
  next_reason          text,
  lease_until          bigint  NOT NULL DEFAULT 0,
  consecutive_failures integer NOT NULL DEFAULT 0,
  last_error           text,
  last_push_at         bigint,
  last_success_at      bigint,
  updated_at           bigint  NOT NULL
);
-- Per target: the state version it has acknowledged, so a retry goes only to those behind.
CREATE TABLE tickwork_fanout_targets (
  fanout     text    NOT NULL,
  target     text    NOT NULL,
  grp        text    NOT NULL,
  version    bigint  NOT NULL DEFAULT 0,
  failures   integer NOT NULL DEFAULT 0,
  last_error text,
  pushed_at  bigint,
  PRIMARY KEY (fanout, target)
);
`;
