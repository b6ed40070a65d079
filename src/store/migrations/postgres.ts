import type { Migration } from "./migration.js";

/**
 * What step 17's grouped claim answers per job: the plain claim's columns (queue/rows.ts,
 * claimedColumns), copied here so that the step's SQL stays what it shipped with. The row's other
 * columns (its result, progress, lease) mean nothing to a job just started.
 */
const CLAIMED_COLUMNS = `j.id, j.queue, j.key, j.group_key, j.status, j.priority, j.run_at, j.attempts, j.max_attempts, j.last_error, j.created_at, j.started_at, j.finished_at, j.payload,
              CASE WHEN j.snoozes = 0 AND j.history IS NULL AND j.parent_id IS NULL AND j.children_total = 0 AND j.trace_context IS NULL THEN NULL
                   ELSE json_build_array(j.snoozes, j.history, j.parent_id, j.children_total, j.children_waiting, j.children_failed, j.trace_context) END AS extra`;

/**
 * The end of a grouped claim (`tickwork_claim_grouped`, migration steps 14 and 15): the groups taken
 * (v_groups, with their room in v_rooms) share p_want evenly, each its weight's worth per round, and
 * their jobs start round-robin; then the cursor moves forward and the answer is built. One text in
 * both steps, so the two bodies cannot drift apart; step 14's SQL is unchanged by its extraction.
 * With `firsts` (step 15), v_firsts holds each group's first job in claim order when the walk saw it
 * due: a group that takes one job takes that one, without looking up its jobs again. With `json`
 * (step 17) the jobs are answered as json with the plain claim's columns.
 */
const startTakenGroups = (firsts: boolean, json = false, start = false) => `        IF array_length(v_groups, 1) > 0 THEN
          v_share := ceil(p_want::numeric / array_length(v_groups, 1));
          -- A group whose room, not its share, bounds what it takes may have due jobs left waiting on the cap.
          IF p_cap IS NOT NULL AND EXISTS (SELECT 1 FROM unnest(v_groups, v_rooms) AS g(k, room)
                                           WHERE g.room < least(v_share * coalesce((p_weights ->> g.k)::integer, 1), p_want)) THEN
            v_held := 'groupConcurrency';
          END IF;
          WITH weighted AS (
            SELECT g.k, g.room, g.ord, coalesce((p_weights ->> g.k)::integer, 1) AS w${firsts ? ", g.first" : ""}
            FROM unnest(v_groups, v_rooms${firsts ? ", v_firsts" : ""}) WITH ORDINALITY AS g(k, room, ${firsts ? "first, " : ""}ord)
          ), asked AS (
            SELECT weighted.k, weighted.w, weighted.ord, least(weighted.room, v_share * weighted.w, p_want) AS m${firsts ? ", weighted.first" : ""} FROM weighted
          ), picked AS (
            SELECT x.id${start ? ", row_number() OVER (ORDER BY (x.r - 1) / asked.w, asked.ord, x.r) AS pos" : ""} FROM asked CROSS JOIN LATERAL (${firsts ? `
              SELECT asked.first AS id, 1::bigint AS r WHERE asked.m = 1 AND asked.first IS NOT NULL
              UNION ALL` : ""}
              SELECT h.id, row_number() OVER (ORDER BY h.priority, h.run_at, h.id) AS r FROM (
                SELECT t.id, t.priority, t.run_at FROM tickwork_jobs t
                WHERE t.queue = p_queue AND t.group_key = asked.k AND t.status = 'pending' AND t.group_key IS NOT NULL AND t.run_at <= p_now${firsts ? `
                  AND NOT (asked.m = 1 AND asked.first IS NOT NULL)` : ""}
                ORDER BY t.priority, t.run_at, t.id LIMIT asked.m
              ) AS h
            ) AS x
            ORDER BY ${start ? "pos" : "(x.r - 1) / asked.w, asked.ord, x.r"}
            LIMIT p_want
          ), started AS (
            UPDATE tickwork_jobs j
            SET status = 'running', attempts = j.attempts + 1, worker_id = p_worker, lease_until = p_lease_until,
                started_at = ${start ? "CASE WHEN picked.pos <= coalesce(p_start, p_want) THEN p_now END" : "p_now"},
                max_attempts = CASE WHEN j.max_attempts_from_queue THEN coalesce(p_max_attempts, j.max_attempts) ELSE j.max_attempts END
            FROM picked
            WHERE j.id = picked.id AND j.status = 'pending'
            RETURNING ${json ? CLAIMED_COLUMNS : "j.*"}
          )
          SELECT ${json ? "coalesce(json_agg(started), '[]'::json)" : "coalesce(jsonb_agg(to_jsonb(started)), '[]'::jsonb)"} INTO v_jobs FROM started;
        END IF;
`;

const moveCursorAndAnswer = (json = false) => `        IF v_cursor IS NOT NULL AND v_cursor IS DISTINCT FROM v_start THEN
          INSERT INTO tickwork_group_cursors AS c (queue, group_key) VALUES (p_queue, v_cursor)
          ON CONFLICT (queue) DO UPDATE SET group_key = excluded.group_key
          WHERE CASE WHEN v_start < v_cursor THEN c.group_key >= v_start AND c.group_key < v_cursor
                     ELSE c.group_key >= v_start OR c.group_key < v_cursor END;
        END IF;
        RETURN ${json ? "json" : "jsonb"}_build_object('jobs', v_jobs, 'paused', false, 'held', v_held, 'cursor', coalesce(v_cursor, p_after));
`;

/**
 * Step 17's room per taken group: its running jobs counted once, in a lateral join. Step 16's scalar
 * subquery was copied into each of the four aggregates that read the room, and the statement was
 * planned again on every call: 0.3 ms of a 1.9 ms claim of 32 jobs, against 0.03 ms this way.
 */
const RUNNING_PER_TAKEN_GROUP = `(SELECT t.k, t.ord, t.first, (p_cap - running.n) * CASE WHEN p_cap = 1 THEN greatest(p_depth, 1) ELSE 1 END AS room
                FROM unnest(v_taken, v_taken_firsts) WITH ORDINALITY AS t(k, first, ord)
                CROSS JOIN LATERAL (SELECT count(*)::integer AS n FROM tickwork_jobs r
                                    WHERE r.queue = p_queue AND r.group_key = t.k AND r.status = 'running' AND r.group_key IS NOT NULL
                                      AND r.lease_until >= p_now) AS running) AS g;`;

/**
 * The grouped claim of migration steps 15, 16 and 17, one text for all. From step 16 it takes
 * p_depth: under groupConcurrency 1, a group taken with none of its jobs running takes up to p_depth
 * of them, for a worker that runs them one after another (a claim then visits a p_depth-th of the
 * groups for the same jobs). From step 17 it answers json, not jsonb, and counts each taken group's
 * running jobs once, in a lateral join. Each step's SQL is the text that step shipped with.
 */
const claimGroupedFn = (step: 15 | 16 | 17 | 19) => {
  const depth = step >= 16;
  const json = step >= 17;
  const start = step >= 19;
  const answer = json ? "json" : "jsonb";
  return `      ${depth ? "CREATE" : "CREATE OR REPLACE"} FUNCTION tickwork_claim_grouped(p_queue text, p_want integer, p_cap integer, p_weights jsonb, p_after text,
                                                        p_now bigint, p_worker text, p_lease_until bigint, p_max_attempts integer, p_probes integer${depth ? ", p_depth integer DEFAULT 1" : ""}${start ? ", p_start integer DEFAULT NULL" : ""})
      RETURNS ${answer} LANGUAGE plpgsql AS $fn$
      DECLARE
        v_paused text[];
        v_start text;
        v_taken text[];
        v_taken_firsts bigint[];
        v_firsts bigint[];
        v_last text;
        v_any_paused boolean;
        v_any_full boolean;
        v_groups text[];
        v_rooms integer[];
        v_held text;
        v_share integer;
        v_jobs ${answer} := '[]';
        v_cursor text;${depth ? `
        -- With groupConcurrency 1, a group taken takes up to p_depth jobs (see migration 16).
        v_want_groups integer := CASE WHEN p_cap = 1 THEN ceil(p_want::numeric / greatest(p_depth, 1))::integer ELSE p_want END;` : ""}
      BEGIN
        PERFORM pg_advisory_xact_lock_shared(hashtextextended(current_schema() || '/tickwork_jobs/' || p_queue, 0));
        v_paused := ARRAY(SELECT z.group_key FROM tickwork_queue_pauses z WHERE z.queue = p_queue);
        IF '' = ANY(v_paused) THEN
          RETURN ${answer}_build_object('jobs', v_jobs, 'paused', true, 'held', 'paused', 'cursor', p_after);
        END IF;
        v_start := coalesce((SELECT c.group_key FROM tickwork_group_cursors c WHERE c.queue = p_queue), p_after, '');
        -- The step's probe reads the next group's first pending job in claim order (the group index's
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
              WHEN p_cap IS NULL THEN 1
              WHEN (SELECT count(*) FROM (SELECT 1 FROM tickwork_jobs r
                                          WHERE r.queue = p_queue AND r.group_key = nx.k AND r.status = 'running' AND r.group_key IS NOT NULL
                                            AND r.lease_until >= p_now
                                          LIMIT p_cap) AS running) >= p_cap THEN -2
              WHEN pg_try_advisory_xact_lock(hashtextextended(current_schema() || '/tickwork_group/' || p_queue || '/' || nx.k, 0)) THEN 1
              ELSE 0
            END AS verdict
          ) AS v
          WHERE w.taken < ${depth ? "v_want_groups" : "p_want"} AND w.visits < ${depth ? "v_want_groups" : "p_want"} + p_probes AND NOT (nx.lap = 1 AND v_start <> '' AND nx.k > v_start)
        )
        SELECT coalesce(array_agg(w.k ORDER BY w.visits) FILTER (WHERE w.verdict = 1), '{}'),
               coalesce(array_agg(w.first ORDER BY w.visits) FILTER (WHERE w.verdict = 1), '{}'),
               (array_agg(w.k ORDER BY w.visits DESC))[1],
               coalesce(bool_or(w.verdict = -1), false),
               coalesce(bool_or(w.verdict = -2), false)
        INTO v_taken, v_taken_firsts, v_last, v_any_paused, v_any_full
        FROM walk w WHERE w.visits > 0;
        IF p_cap IS NULL THEN
          v_groups := v_taken;
          v_firsts := v_taken_firsts;
          v_rooms := array_fill(p_want, ARRAY[coalesce(array_length(v_taken, 1), 0)]);
        ELSE
          SELECT coalesce(array_agg(g.k ORDER BY g.ord) FILTER (WHERE g.room > 0), '{}'),
                 coalesce(array_agg(g.room ORDER BY g.ord) FILTER (WHERE g.room > 0), '{}'),
                 coalesce(array_agg(g.first ORDER BY g.ord) FILTER (WHERE g.room > 0), '{}'),
                 v_any_full OR coalesce(bool_or(g.room <= 0), false)
          INTO v_groups, v_rooms, v_firsts, v_any_full
${json ? `          FROM ${RUNNING_PER_TAKEN_GROUP}
` : `          FROM (SELECT t.k, t.ord, t.first, ${depth ? "(" : ""}p_cap - (SELECT count(*)::integer FROM tickwork_jobs r
                                                    WHERE r.queue = p_queue AND r.group_key = t.k AND r.status = 'running' AND r.group_key IS NOT NULL
                                                      AND r.lease_until >= p_now)${depth ? ") * CASE WHEN p_cap = 1 THEN greatest(p_depth, 1) ELSE 1 END" : ""} AS room
                FROM unnest(v_taken, v_taken_firsts) WITH ORDINALITY AS t(k, first, ord)) AS g;
`}        END IF;
        v_held := CASE WHEN v_any_full THEN 'groupConcurrency' WHEN v_any_paused THEN 'paused' END;
${startTakenGroups(true, json, start)}        v_cursor := coalesce(v_taken[array_length(v_taken, 1)], v_last);
${moveCursorAndAnswer(json)}      END
      $fn$;
`;
};

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
  {
    version: 2,
    name: "tasks and cache",
    sql: `
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
        task         text   NOT NULL,
        scheduled_at bigint NOT NULL,
        started_at   bigint NOT NULL,
        finished_at  bigint NOT NULL,
        duration_ms  bigint NOT NULL,
        outcome      text   NOT NULL,
        manual       integer NOT NULL,
        result       text,
        error        text,
        runner       text   NOT NULL
      );
      CREATE INDEX tickwork_task_runs_task ON tickwork_task_runs (task, id);
      -- Scheduler-wide state: the ops kill switch (pauseUntil).
      CREATE TABLE tickwork_scheduler (
        id           integer PRIMARY KEY CHECK (id = 1),
        paused_until bigint
      );
      INSERT INTO tickwork_scheduler (id, paused_until) VALUES (1, NULL);
      -- Key-value cache: a value and when it was fetched, so a reader can refuse one too old for it.
      CREATE TABLE tickwork_cache (
        key        text  PRIMARY KEY,
        value      text  NOT NULL,
        fetched_at bigint NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: "idempotency keys",
    sql: `
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
    `,
  },
  {
    version: 4,
    name: "deliveries and fan-outs",
    sql: `
      -- Delivery outbox: every emitted item until it is delivered or dropped. id is the delivery's
      -- stable identity (the webhook-id receivers dedupe on); a key is held by one item at a time,
      -- so a key with a delivery or a retry outstanding is not emitted again.
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
      -- One row per fan-out: the last state pushed, its version, and the one next wake-up (a retry
      -- or a reconciliation; a retry never replaces a sooner one).
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
    `,
  },
  {
    version: 5,
    name: "jobs: two indexes fewer",
    sql: `
      -- The (queue, run_at) index held every pending row a second time and gave the planner a way to
      -- claim that sorts the whole due backlog: without fresh statistics (a burst into an idle queue,
      -- before autovacuum analyzes) it took it, and each claim of 500 from 100,000 due jobs cost 80 ms
      -- instead of 10. The claim index alone serves claims; the next wake-up reads it per priority.
      DROP INDEX IF EXISTS tickwork_jobs_due;
      -- Heartbeats name the jobs they renew (primary key), so the index of running jobs by worker,
      -- one more B-tree write per claim, has no reader left.
      DROP INDEX IF EXISTS tickwork_jobs_worker;
    `,
  },
  {
    version: 6,
    name: "jobs: maxAttempts from the worker's declaration",
    sql: `
      -- A job that did not set its own maxAttempts follows the queue's retry.maxAttempts as the worker
      -- that claims it declares it (the claim writes it to max_attempts). Existing rows, and rows
      -- written by older versions, keep the max_attempts they were written with, as before.
      ALTER TABLE tickwork_jobs ADD COLUMN max_attempts_from_queue boolean NOT NULL DEFAULT false;
    `,
  },
  {
    version: 7,
    name: "flow control: groups, shared rate limits, pauses",
    sql: `
      -- A job's group (a tenant, an account): claims of a grouped queue walk the groups with pending
      -- jobs round-robin and hold each to its groupConcurrency and groupRateLimit. Ungrouped jobs never
      -- enter the index, so queues without groups pay nothing for it.
      ALTER TABLE tickwork_jobs ADD COLUMN group_key text;
      CREATE INDEX tickwork_jobs_group ON tickwork_jobs (queue, group_key, priority, run_at, id) WHERE status = 'pending' AND group_key IS NOT NULL;
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
      -- The claim of an ungrouped queue under globalConcurrency, in one round trip: the lock on the
      -- queue is held from inside the statement to its commit, not across a client's round trips, and
      -- each statement of a function takes a fresh snapshot, so the count comes after the lock and sees
      -- every claim that held it before. A row with id -1 is not a job: its queue column says what held
      -- the claim back ('paused', or 'globalConcurrency' when due jobs were left behind the cap).
      CREATE FUNCTION tickwork_claim_capped(p_queue text, p_now bigint, p_limit integer, p_cap integer,
                                            p_worker text, p_lease_until bigint, p_max_attempts integer)
      RETURNS SETOF tickwork_jobs LANGUAGE plpgsql AS $fn$
      DECLARE
        v_running integer;
        v_want integer;
        v_got integer := 0;
        v_marker tickwork_jobs;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended(current_schema() || '/tickwork_jobs/' || p_queue, 0));
        v_marker.id := -1;
        IF EXISTS (SELECT 1 FROM tickwork_queue_pauses WHERE queue = p_queue AND group_key = '') THEN
          v_marker.queue := 'paused';
          RETURN NEXT v_marker;
          RETURN;
        END IF;
        SELECT count(*) INTO v_running FROM tickwork_jobs WHERE status = 'running' AND lease_until >= p_now AND queue = p_queue;
        v_want := least(p_limit, p_cap - v_running);
        IF v_want > 0 THEN
          RETURN QUERY
            UPDATE tickwork_jobs j
            SET status = 'running', attempts = j.attempts + 1, worker_id = p_worker, lease_until = p_lease_until, started_at = p_now,
                max_attempts = CASE WHEN j.max_attempts_from_queue THEN coalesce(p_max_attempts, j.max_attempts) ELSE j.max_attempts END
            WHERE j.id = ANY(ARRAY(
              SELECT id FROM tickwork_jobs
              WHERE queue = p_queue AND status = 'pending' AND run_at <= p_now
              ORDER BY priority, run_at, id LIMIT v_want
              FOR UPDATE SKIP LOCKED))
            RETURNING j.*;
          GET DIAGNOSTICS v_got = ROW_COUNT;
        END IF;
        IF v_want < p_limit AND v_got >= v_want
           AND EXISTS (SELECT 1 FROM tickwork_jobs WHERE queue = p_queue AND status = 'pending' AND run_at <= p_now) THEN
          v_marker.queue := 'globalConcurrency';
          RETURN NEXT v_marker;
        END IF;
        RETURN;
      END
      $fn$;
    `,
  },
  {
    version: 8,
    name: "payloads compressed with lz4",
    // A payload over about 2 KB is compressed when stored; lz4 costs a fraction of the default pglz
    // (bulk enqueue of 2 KB payloads went about 1.25x faster here) for a similar size. Only new
    // values use it, so nothing is rewritten. A server built without lz4, or older than
    // PostgreSQL 14, refuses the statement and keeps pglz: that is the only error swallowed.
    sql: `
      DO $lz4$
      BEGIN
        EXECUTE 'ALTER TABLE tickwork_jobs ALTER COLUMN payload SET COMPRESSION lz4';
      EXCEPTION WHEN feature_not_supported OR syntax_error THEN
        NULL;
      END
      $lz4$;
    `,
  },
  {
    version: 9,
    name: "flow control: globalConcurrency as slots held by workers",
    // The claim that counted running jobs under the cap (tickwork_claim_capped) could only start jobs
    // into free slots: a worker could not prefetch, since a prefetched job held a slot every process
    // counted. Slots held per worker leave the claim plain, prefetch included.
    sql: `
      -- A queue's globalConcurrency is shared out as slots: each worker holds a count of them until a
      -- time it renews, and runs at most that many of the queue's jobs at once. The counts of live
      -- holds never add up to more than the limit; a worker that dies stops renewing, and its slots
      -- count until its hold lapses. wanted: what the worker could run; one holding fewer than its
      -- fair share of what it wants makes the others give back down to theirs.
      CREATE TABLE tickwork_queue_slots (
        queue     text    NOT NULL,
        worker_id text    NOT NULL,
        slots     integer NOT NULL,
        wanted    integer NOT NULL,
        until     bigint  NOT NULL,
        PRIMARY KEY (queue, worker_id)
      );
      DROP FUNCTION IF EXISTS tickwork_claim_capped(text, bigint, integer, integer, text, bigint, integer);
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
    `,
  },
  {
    version: 10,
    name: "jobs that report back: results, progress, snoozes, attempt history, waiters, flows, keys held for a period, trace context",
    sql: `
      -- As SQLite's step 9. Added without a default rewrite (a constant default is stored in the
      -- catalog), so the step is instant on a table of any size.
      ALTER TABLE tickwork_jobs ADD COLUMN result json;
      ALTER TABLE tickwork_jobs ADD COLUMN progress json;
      ALTER TABLE tickwork_jobs ADD COLUMN snoozes integer NOT NULL DEFAULT 0;
      ALTER TABLE tickwork_jobs ADD COLUMN history jsonb;
      ALTER TABLE tickwork_jobs ADD COLUMN waited boolean NOT NULL DEFAULT false;
      ALTER TABLE tickwork_jobs ADD COLUMN parent_id bigint;
      ALTER TABLE tickwork_jobs ADD COLUMN children_total integer NOT NULL DEFAULT 0;
      ALTER TABLE tickwork_jobs ADD COLUMN children_waiting integer NOT NULL DEFAULT 0;
      ALTER TABLE tickwork_jobs ADD COLUMN children_failed integer NOT NULL DEFAULT 0;
      ALTER TABLE tickwork_jobs ADD COLUMN child_failure text;
      CREATE INDEX tickwork_jobs_parent ON tickwork_jobs (parent_id) WHERE parent_id IS NOT NULL;
      ALTER TABLE tickwork_jobs ADD COLUMN trace_context text;
      CREATE TABLE tickwork_job_keys (
        queue  text   NOT NULL,
        key    text   NOT NULL,
        job_id bigint,
        until  bigint NOT NULL,
        PRIMARY KEY (queue, key)
      );
    `,
  },
  {
    version: 11,
    name: "job counts kept by the writes themselves, so counting never reads the jobs table",
    sql: `
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
      -- No write may fall between the count below and the triggers that take over from it.
      LOCK TABLE tickwork_jobs IN SHARE ROW EXCLUSIVE MODE;
      INSERT INTO tickwork_job_counts (queue, status, shard, n) SELECT queue, status, 0, count(*) FROM tickwork_jobs GROUP BY queue, status;

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
    `,
  },
  {
    version: 12,
    name: "flow control: a grouped claim starts its picks under locks of its groups, in one call",
    // A grouped claim held the queue's lock across every round trip of its walk and through its
    // commit's WAL flush, so the claims of all processes took turns at a few hundred a second. The
    // walk now reads without a lock, and the start locks only the groups it starts.
    sql: `
      -- Starts jobs of the groups a grouped claim chose (p_groups, with how many of each in p_counts):
      -- each group's first due pending jobs in claim order, as many as asked and as its room allows
      -- (its running jobs with leases not lapsed, under p_cap; NULL: no cap), none of a paused group
      -- or queue. Under a cap each group is locked first, with a try: a group another claim is
      -- starting is left to it, so claims never wait on each other's groups, nor on their commits, and
      -- cannot deadlock. Each statement of a function takes a fresh snapshot, so the counts below are
      -- read after the locks and see every start of those groups committed before; a settle or a
      -- rescue only ever lowers a count. The queue's lock is taken shared: the claim that walks under
      -- the queue's exclusive lock (queues with rate limits) never runs beside this one.
      -- What other claims took first is made up from the groups after the last one chosen, one job
      -- each, looking at p_more groups at most: the walk goes on here instead of in another round trip.
      -- p_cursor, or the last group made up from, is where the next claim of any process walks on
      -- from; it is moved unless another claim is moving it. The columns set are the plain claim's
      -- (queue/postgres.ts), kept alike.
      CREATE FUNCTION tickwork_start_grouped(p_queue text, p_groups text[], p_counts integer[], p_cap integer, p_cursor text,
                                             p_now bigint, p_worker text, p_lease_until bigint, p_max_attempts integer, p_more integer)
      RETURNS SETOF tickwork_jobs LANGUAGE plpgsql AS $fn$
      DECLARE
        v_groups text[] := '{}';
        v_counts integer[] := '{}';
        v_short integer;
        v_started integer;
        v_from text := p_groups[array_length(p_groups, 1)];
        v_cursor text := p_cursor;
        v_k text;
      BEGIN
        PERFORM pg_advisory_xact_lock_shared(hashtextextended(current_schema() || '/tickwork_jobs/' || p_queue, 0));
        IF EXISTS (SELECT 1 FROM tickwork_queue_pauses WHERE queue = p_queue AND group_key = '') THEN
          RETURN;
        END IF;
        FOR i IN 1 .. coalesce(array_length(p_groups, 1), 0) LOOP
          IF p_cap IS NULL OR pg_try_advisory_xact_lock(hashtextextended(current_schema() || '/tickwork_group/' || p_queue || '/' || p_groups[i], 0)) THEN
            v_groups := v_groups || p_groups[i];
            v_counts := v_counts || p_counts[i];
          END IF;
        END LOOP;
        RETURN QUERY
          WITH asked AS (
            SELECT g.k, g.m FROM unnest(v_groups, v_counts) AS g(k, m)
            WHERE NOT EXISTS (SELECT 1 FROM tickwork_queue_pauses z WHERE z.queue = p_queue AND z.group_key = g.k)
          ), running AS (
            SELECT r.group_key, count(*) AS n FROM tickwork_jobs r
            WHERE p_cap IS NOT NULL AND r.queue = p_queue AND r.status = 'running' AND r.lease_until >= p_now AND r.group_key = ANY(v_groups)
            GROUP BY r.group_key
          ), picked AS (
            SELECT x.id FROM asked LEFT JOIN running ON running.group_key = asked.k
            CROSS JOIN LATERAL (
              SELECT t.id FROM tickwork_jobs t
              WHERE t.queue = p_queue AND t.group_key = asked.k AND t.status = 'pending' AND t.run_at <= p_now
              ORDER BY t.priority, t.run_at, t.id
              LIMIT CASE WHEN p_cap IS NULL THEN asked.m ELSE greatest(0, least(asked.m, p_cap - coalesce(running.n, 0))) END
            ) AS x
          )
          UPDATE tickwork_jobs j
          SET status = 'running', attempts = j.attempts + 1, worker_id = p_worker, lease_until = p_lease_until, started_at = p_now,
              max_attempts = CASE WHEN j.max_attempts_from_queue THEN coalesce(p_max_attempts, j.max_attempts) ELSE j.max_attempts END
          FROM picked
          WHERE j.id = picked.id AND j.status = 'pending'
          RETURNING j.*;
        GET DIAGNOSTICS v_started = ROW_COUNT;
        v_short := (SELECT coalesce(sum(c), 0) FROM unnest(p_counts) AS c) - v_started;
        FOR probe IN 1 .. p_more LOOP
          EXIT WHEN v_short <= 0 OR v_from IS NULL;
          SELECT t.group_key INTO v_k FROM tickwork_jobs t
          WHERE t.queue = p_queue AND t.status = 'pending' AND t.group_key IS NOT NULL AND t.group_key > v_from
          ORDER BY t.group_key LIMIT 1;
          EXIT WHEN v_k IS NULL;
          v_from := v_k;
          CONTINUE WHEN v_k = ANY(p_groups)
            OR EXISTS (SELECT 1 FROM tickwork_queue_pauses z WHERE z.queue = p_queue AND z.group_key = v_k)
            OR (p_cap IS NOT NULL AND NOT pg_try_advisory_xact_lock(hashtextextended(current_schema() || '/tickwork_group/' || p_queue || '/' || v_k, 0)));
          RETURN QUERY
            UPDATE tickwork_jobs j
            SET status = 'running', attempts = j.attempts + 1, worker_id = p_worker, lease_until = p_lease_until, started_at = p_now,
                max_attempts = CASE WHEN j.max_attempts_from_queue THEN coalesce(p_max_attempts, j.max_attempts) ELSE j.max_attempts END
            WHERE j.id = (
              SELECT t.id FROM tickwork_jobs t
              WHERE t.queue = p_queue AND t.group_key = v_k AND t.status = 'pending' AND t.run_at <= p_now
                AND (p_cap IS NULL OR (SELECT count(*) FROM tickwork_jobs r
                                       WHERE r.queue = p_queue AND r.group_key = v_k AND r.status = 'running' AND r.lease_until >= p_now) < p_cap)
              ORDER BY t.priority, t.run_at, t.id LIMIT 1)
            RETURNING j.*;
          GET DIAGNOSTICS v_started = ROW_COUNT;
          IF v_started > 0 THEN
            v_short := v_short - v_started;
            v_cursor := v_k;
          END IF;
        END LOOP;
        IF v_cursor IS NOT NULL THEN
          UPDATE tickwork_group_cursors SET group_key = v_cursor
          WHERE queue = p_queue AND queue IN (SELECT c.queue FROM tickwork_group_cursors c WHERE c.queue = p_queue FOR UPDATE SKIP LOCKED);
          IF NOT FOUND AND NOT EXISTS (SELECT 1 FROM tickwork_group_cursors WHERE queue = p_queue) THEN
            INSERT INTO tickwork_group_cursors (queue, group_key) VALUES (p_queue, v_cursor) ON CONFLICT (queue) DO NOTHING;
          END IF;
        END IF;
      END
      $fn$;
    `,
  },
  {
    version: 13,
    name: "jobs: long payloads moved out of the job's row whole",
    // A row over about 2 KB is toasted: its long values compressed, and moved out of the row only
    // while the row is still longer than this target (2 KB by default). A compressed 2 KB payload
    // stayed in the row, and every claim and outcome, each a new version of the row, copied it: 2 KB
    // payloads ran about 1.15x faster with the target at its minimum. Rows under about 2 KB are
    // never toasted, so small payloads are stored as before.
    sql: `ALTER TABLE tickwork_jobs SET (toast_tuple_target = 128);`,
  },
  {
    version: 14,
    name: "flow control: a grouped claim walks its groups and starts their jobs in one call",
    // The walk read the queue's state, its groups and their first jobs in three or four round trips
    // before the start: each a statement the server planned and answered, and on 2 cores grouped
    // claims ran at a fifth of the plain queue's rate. tickwork_start_grouped stays for processes of
    // the previous version during a rolling upgrade.
    sql: `
      -- One claim of a grouped queue without rate buckets, whole: returns {jobs, paused, held, cursor}.
      -- Groups with pending jobs are visited in key order from the queue's shared cursor (or p_after
      -- while it has none), wrapping once, until p_want groups are chosen or p_want + p_probes were
      -- visited. A group is passed over when it is paused (held: paused), has no due job, or, under a
      -- cap (p_cap, its groupConcurrency; NULL: none), when another claim holds its lock (that claim
      -- starts it) or its running jobs with leases not lapsed fill the cap (held: groupConcurrency).
      -- The lock is a try, so claims never wait on each other nor on each other's commits, and cannot
      -- deadlock; each statement of a function takes a fresh snapshot, so a count read after the lock
      -- sees every start of that group committed before, and a settle or rescue only lowers it. The
      -- queue's lock is taken shared: the claim that walks under its exclusive lock (queues with rate
      -- limits) never runs beside this one.
      -- Each chosen group gets the same share of p_want (its weight in p_weights times that; 1 for a
      -- group not named), within its room, and jobs are taken round-robin: in each round every group
      -- its weight's worth (its first, then its second, ... in claim order), p_want at most. The columns set are the
      -- plain claim's (queue/postgres.ts), kept alike. The last group chosen (or visited) is where the
      -- next claim of any process goes on from. Claims at the same time wait for each other's move of
      -- the cursor (its last statement), and a move goes only forward, from where this claim started
      -- towards where it ended: a claim that left the cursor behind groups another claim had started
      -- (skipping the move, or moving it back) had the claims after it start those groups again while
      -- others waited.
      CREATE FUNCTION tickwork_claim_grouped(p_queue text, p_want integer, p_cap integer, p_weights jsonb, p_after text,
                                             p_now bigint, p_worker text, p_lease_until bigint, p_max_attempts integer, p_probes integer)
      RETURNS jsonb LANGUAGE plpgsql AS $fn$
      DECLARE
        v_start text;
        v_from text;
        v_wrapped boolean;
        v_k text;
        v_room integer;
        v_groups text[] := '{}';
        v_rooms integer[] := '{}';
        v_visits integer := 0;
        v_held text;
        v_share integer;
        v_jobs jsonb := '[]';
        v_cursor text;
      BEGIN
        PERFORM pg_advisory_xact_lock_shared(hashtextextended(current_schema() || '/tickwork_jobs/' || p_queue, 0));
        IF EXISTS (SELECT 1 FROM tickwork_queue_pauses WHERE queue = p_queue AND group_key = '') THEN
          RETURN jsonb_build_object('jobs', v_jobs, 'paused', true, 'held', 'paused', 'cursor', p_after);
        END IF;
        v_start := coalesce((SELECT c.group_key FROM tickwork_group_cursors c WHERE c.queue = p_queue), p_after, '');
        v_from := v_start;
        v_wrapped := v_start = '';
        WHILE coalesce(array_length(v_groups, 1), 0) < p_want AND v_visits < p_want + p_probes LOOP
          v_k := (SELECT t.group_key FROM tickwork_jobs t
                  WHERE t.queue = p_queue AND t.status = 'pending' AND t.group_key IS NOT NULL AND t.group_key > v_from
                  ORDER BY t.group_key LIMIT 1);
          -- Past the last group: once more from the first, up to the one this claim started after.
          IF v_k IS NULL OR (v_wrapped AND v_start <> '' AND v_k > v_start) THEN
            EXIT WHEN v_wrapped;
            v_wrapped := true;
            v_from := '';
            CONTINUE;
          END IF;
          v_from := v_k;
          v_visits := v_visits + 1;
          IF EXISTS (SELECT 1 FROM tickwork_queue_pauses z WHERE z.queue = p_queue AND z.group_key = v_k) THEN
            v_held := coalesce(v_held, 'paused');
            CONTINUE;
          END IF;
          CONTINUE WHEN NOT EXISTS (SELECT 1 FROM tickwork_jobs t
                                    WHERE t.queue = p_queue AND t.group_key = v_k AND t.status = 'pending' AND t.group_key IS NOT NULL AND t.run_at <= p_now);
          IF p_cap IS NULL THEN
            v_room := p_want;
          ELSE
            CONTINUE WHEN NOT pg_try_advisory_xact_lock(hashtextextended(current_schema() || '/tickwork_group/' || p_queue || '/' || v_k, 0));
            v_room := p_cap - (SELECT count(*) FROM tickwork_jobs r
                               WHERE r.queue = p_queue AND r.group_key = v_k AND r.status = 'running' AND r.lease_until >= p_now);
            IF v_room <= 0 THEN
              v_held := 'groupConcurrency';
              CONTINUE;
            END IF;
          END IF;
          v_groups := v_groups || v_k;
          v_rooms := v_rooms || v_room;
        END LOOP;
${startTakenGroups(false)}        v_cursor := coalesce(v_groups[array_length(v_groups, 1)], CASE WHEN v_visits > 0 THEN v_from END);
${moveCursorAndAnswer()}      END
      $fn$;
    `,
  },
  {
    version: 15,
    name: "flow control: a grouped claim runs a fixed number of statements, whatever the groups it visits",
    // The walk of migration 14 ran five statements of the function per group it visited (next group,
    // pause, due job, lock, running count), each run on its own, and read a group's running jobs
    // through the lease index (every running job of every queue): on 2 cores a grouped claim cost the
    // server about 2.5 times the plain claim's CPU per job.
    sql: `
      -- Only jobs of groups enter it, so queues without groups pay nothing for it.
      CREATE INDEX tickwork_jobs_group_running ON tickwork_jobs (queue, group_key) WHERE status = 'running' AND group_key IS NOT NULL;

      -- As migration 14's, with the same arguments and answer, in a fixed number of statements:
      -- 1. One recursive query walks: each step finds the next group with pending jobs after the last
      --    (from the first once, past the last group, up to where the claim started) and judges it,
      --    in a CASE so that each check runs only when those before it passed: -1 paused; 0 no due
      --    job, or another claim holds its lock (that claim starts it); -2 its running jobs fill the
      --    cap as the walk's snapshot sees them; 1 taken, its lock (a try) held. The walk stops when
      --    p_want groups are taken or p_want + p_probes visited.
      -- 2. One statement counts the running jobs of the groups taken. Its snapshot, taken after the
      --    locks, sees every start of those groups committed before, which the walk's (taken when the
      --    walk began) would not: a group another claim filled meanwhile is found full here.
      -- 3. One statement starts their jobs, round-robin as before.
      -- The claim's commit still waits for the WAL flush, with the cursor's row lock held: committed
      -- without the wait, the rate of 4 processes on 1,000 groups moved by as much as the plain
      -- queue's beside it (noise), and a start lost in a crash of the server would let a group's next
      -- job start beside one still running.
${claimGroupedFn(15)}    `,
  },
  {
    version: 16,
    name: "flow control: a grouped claim hands a worker several jobs of a serial group",
    // Under groupConcurrency 1 a claim took one job per group, so a claim of fast jobs carried about
    // a dozen jobs for a walk over a dozen groups, a count and a start, and the claims of every
    // process took turns on the cursor's row: on 2 cores grouped claims ran at 0.4x the plain
    // queue's rate. A worker that runs a group's jobs one after another in its own slot keeps the
    // guarantee (no two jobs of a group at once) with several of them in hand. p_depth has a default
    // so that processes of the previous version, calling with 10 arguments, reach the same function.
    sql: `
      DROP FUNCTION tickwork_claim_grouped(text, integer, integer, jsonb, text, bigint, text, bigint, integer, integer);
${claimGroupedFn(16)}    `,
  },
  {
    version: 17,
    name: "flow control: a grouped claim answers json and counts each group's running jobs once",
    // Measured on one connection, 150 claims of 32 jobs from 1,000 groups (a job's run ended before
    // the next claim): 1.9 ms a claim before, 1.15 ms after. Half the saving is the answer: to_jsonb
    // parsed each row's json payload into jsonb, and the text sent was printed back from it;
    // json_agg copies the payload's text. The rest is the room's count, planned once now (see
    // RUNNING_PER_TAKEN_GROUP). The return type changes, so the function is dropped and created
    // again; processes of the previous version read json as they read jsonb.
    sql: `
      DROP FUNCTION tickwork_claim_grouped(text, integer, integer, jsonb, text, bigint, text, bigint, integer, integer, integer);
${claimGroupedFn(17)}    `,
  },
  {
    version: 18,
    name: "hand-offs across processes: idle workers offer their free slots to other processes' enqueues",
    sql: `
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
    `,
  },
  {
    version: 19,
    name: "attempts: a grouped claim starts only what its worker runs at once",
    // A worker claims ahead of its free slots (prefetch); a job it holds but has not started must get
    // its attempt back if the worker dies, so the claim marks started (started_at) only the first
    // p_start jobs in its order, and the worker marks the rest as it starts them. p_start has a default
    // (every job started) so that processes of the previous version, calling with 11 arguments, reach
    // the same function.
    sql: `
      DROP FUNCTION tickwork_claim_grouped(text, integer, integer, jsonb, text, bigint, text, bigint, integer, integer, integer);
${claimGroupedFn(19)}    `,
  },
];
