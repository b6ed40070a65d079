import { atomically, type SqlDb, type SqlStatement, type SqlTx } from "../db/sql-db.js";
import { nextTokenAt, take, tokens, type BucketSpec, type BucketState } from "./bucket.js";
import type { Job } from "./job.js";
import { byClaimOrder, setStarted, toJob, type JobRow } from "./rows.js";
import { jobColumns } from "./payloads.js";
import type { ClaimHold, ClaimLimits, ClaimParams, ClaimResult, FlowDialect, GroupCounts, PauseRow, SlotHold } from "./store.js";

type Body<T> = Generator<SqlStatement, T, unknown>;

/** Most groups one claim looks at per round, beyond what it asks for (see walkGroups). */
const MAX_ROUNDS = 4;

/**
 * Groups a grouped claim on PostgreSQL may visit per group it wants beyond those it takes: groups other
 * claims are starting, full or paused ones, ones whose jobs are not due yet.
 */
const GROUP_PROBES = 4;

/** What `tickwork_claim_grouped` answers: the jobs it started (rows as JSON) and the claim's outcome. */
interface GroupedClaim {
  jobs: JobRow[];
  paused: boolean;
  held: ClaimHold | null;
  cursor: string | null;
}

/**
 * The queue's flow control on either dialect: claims under shared limits, shared rate buckets and
 * pauses. Written once over `SqlDb`: a claim is one transaction, whose statements run synchronously
 * inside SQLite's write lock, and on PostgreSQL after an advisory lock on the queue, taken first so
 * that every later statement reads what the claims before it committed (each statement of a READ
 * COMMITTED transaction takes a fresh snapshot, a single statement does not).
 */
export class FlowSql {
  constructor(
    private readonly db: SqlDb,
    private readonly d: FlowDialect,
  ) {}

  claim(params: ClaimParams & { limits: ClaimLimits }): Promise<ClaimResult> {
    const { limits } = params;
    if (this.d.postgres && limits.grouped && limits.buckets.length === 0 && !limits.groupRate) return this.claimGroupedPg(params);
    return this.db.transaction((tx) => this.claimBody(tx, params));
  }

  /**
   * A grouped claim on PostgreSQL without rate buckets: one call of `tickwork_claim_grouped` (in
   * store/migrations/postgres/) walks the groups and starts their jobs, each group under a lock of its
   * own (not the queue's: claims of other groups walk and start beside it). Claims at the same time start from
   * the same shared cursor; one that finds a group locked by another passes it and walks on, up to
   * GROUP_PROBES groups per group wanted beyond what it asks for. Only their last step, moving the
   * cursor forward, waits for the claim before it to commit.
   */
  private async claimGroupedPg(p: ClaimParams & { limits: ClaimLimits }): Promise<ClaimResult> {
    const { limits } = p;
    const depth = limits.groupConcurrency === 1 ? Math.max(1, p.serialDepth ?? 1) : 1;
    const groups = Math.ceil(p.limit / depth);
    const [row] = await this.db.query<{ claim: GroupedClaim }>(`SELECT tickwork_claim_grouped($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) AS claim`, [
      p.queue, p.limit, limits.groupConcurrency ?? null, limits.groupWeights ? JSON.stringify(limits.groupWeights) : null, p.after ?? null,
      p.now, p.workerId, p.leaseUntil, p.queueMaxAttempts ?? null, GROUP_PROBES * groups, depth, p.start ?? null,
    ]);
    const claim = row!.claim;
    const jobs = claim.jobs.map((job) => toJob(job, false)).sort(byClaimOrder);
    return { jobs, paused: claim.paused, held: claim.held, retryAt: null, cursor: claim.cursor };
  }

  /**
   * On PostgreSQL one call of `tickwork_hold_slots` (store/migrations/postgres/), so the queue's lock is held only
   * while the server runs it; on SQLite the same steps in one transaction, under the write lock.
   */
  async holdSlots(p: { queue: string; workerId: string; want: number; cap: number; now: number; until: number }): Promise<SlotHold> {
    if (this.d.postgres) {
      const [row] = await this.db.query<SlotHold>(`SELECT held, due, share FROM tickwork_hold_slots($1, $2, $3, $4, $5, $6)`, [
        p.queue, p.workerId, p.want, p.cap, p.now, p.until,
      ]);
      return { held: row!.held, due: row!.due, share: row!.share };
    }
    const d = this.d;
    return this.db.transaction(function* (tx) {
      yield* tx.query(`DELETE FROM tickwork_queue_slots WHERE queue = $1 AND until < $2`, [p.queue, p.now]);
      const [others] = yield* tx.query<{ n: number | null; wanting: number }>(
        `SELECT sum(slots) AS n, count(*) AS wanting FROM tickwork_queue_slots WHERE queue = $1 AND worker_id <> $2`,
        [p.queue, p.workerId],
      );
      const held = Math.max(0, Math.min(p.want, p.cap - Number(others?.n ?? 0)));
      let wanting = Number(others?.wanting ?? 0);
      if (p.want === 0) yield* tx.query(`DELETE FROM tickwork_queue_slots WHERE queue = $1 AND worker_id = $2`, [p.queue, p.workerId]);
      else {
        wanting++;
        yield* tx.query(
          `INSERT INTO tickwork_queue_slots (queue, worker_id, slots, wanted, until) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (queue, worker_id) DO UPDATE SET slots = excluded.slots, wanted = excluded.wanted, until = excluded.until`,
          [p.queue, p.workerId, held, p.want, p.until],
        );
      }
      let share = p.cap;
      if (wanting > 1) {
        const starved = yield* tx.query(`SELECT 1 AS starved FROM tickwork_queue_slots WHERE queue = $1 AND slots < min(wanted, $2) LIMIT 1`, [p.queue, Math.ceil(p.cap / wanting)]);
        if (starved.length) share = Math.max(1, Math.floor(p.cap / wanting));
      }
      const due = held < p.want && (yield* anyDue(tx, d, p.queue, p.now));
      return { held, due, share };
    });
  }

  /** Whether the whole queue is paused (a plain claim that found nothing asks). */
  async isPaused(queue: string): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 AS paused FROM tickwork_queue_pauses WHERE queue = $1 AND group_key = ''`, [queue]);
    return rows.length > 0;
  }

  takeTokens({ spec, n, now }: { spec: BucketSpec; n: number; now: number }): Promise<{ granted: boolean; retryAt: number }> {
    const d = this.d;
    return this.db.transaction(function* (tx) {
      const state = (yield* lockBuckets(tx, d, [spec.bucket], now)).get(spec.bucket);
      if (tokens(spec, state, now) < n) {
        // Ask again when all n are there: each token comes back intervalMs after the one before.
        return { granted: false, retryAt: nextTokenAt(spec, state, now) + (n - 1) * spec.intervalMs };
      }
      yield* writeBuckets(tx, d, [[spec.bucket, take(spec, state, now, n)]], now);
      return { granted: true, retryAt: now };
    });
  }

  async pauseBucket({ bucket, until, now }: { bucket: string; until: number; now: number }): Promise<void> {
    // One parameter fills a double precision and a bigint column: PostgreSQL refuses to deduce two
    // types for it, so it is cast once (CAST reads the same on SQLite).
    await this.db.query(
      `INSERT INTO tickwork_limits (bucket, tat, paused_until, updated_at) VALUES ($1, CAST($2 AS bigint), $3, CAST($2 AS bigint))
       ON CONFLICT (bucket) DO UPDATE SET updated_at = excluded.updated_at,
         paused_until = CASE WHEN tickwork_limits.paused_until IS NULL OR tickwork_limits.paused_until < excluded.paused_until
                             THEN excluded.paused_until ELSE tickwork_limits.paused_until END`,
      [bucket, now, Math.round(until)],
    );
  }

  async resumeBucket({ bucket }: { bucket: string }): Promise<void> {
    await this.db.query(`UPDATE tickwork_limits SET paused_until = NULL WHERE bucket = $1`, [bucket]);
  }

  async pruneBuckets({ before, limit }: { before: number; limit: number }): Promise<number> {
    const rows = await this.db.query(
      `DELETE FROM tickwork_limits WHERE bucket IN (
         SELECT bucket FROM tickwork_limits WHERE tat < $1 AND (paused_until IS NULL OR paused_until < $3) LIMIT $2
       ) RETURNING bucket`,
      // The same instant twice: one parameter compared with a double and a bigint column has no one type on PostgreSQL.
      [before, limit, before],
    );
    return rows.length;
  }

  async bucketStates({ buckets }: { buckets: string[] }): Promise<Record<string, BucketState>> {
    const d = this.d;
    return Object.fromEntries(await atomically(this.db, 1, (tx) => readBuckets(tx, d, buckets)));
  }

  async setPaused({ queue, group, paused, now }: { queue: string; group: string | null; paused: boolean; now: number }): Promise<boolean> {
    const rows = paused
      ? await this.db.query(`INSERT INTO tickwork_queue_pauses (queue, group_key, paused_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING queue`, [queue, group ?? "", now])
      : await this.db.query(`DELETE FROM tickwork_queue_pauses WHERE queue = $1 AND group_key = $2 RETURNING queue`, [queue, group ?? ""]);
    return rows.length > 0;
  }

  async pauses({ queues }: { queues?: string[] }): Promise<PauseRow[]> {
    const list = queues ? inList(this.d, 1, queues, "text") : null;
    const rows = await this.db.query<{ queue: string; group_key: string; paused_at: number | string }>(
      `SELECT queue, group_key, paused_at FROM tickwork_queue_pauses ${list ? `WHERE queue ${list.sql}` : ""} ORDER BY queue, group_key`,
      list ? [list.value] : [],
    );
    return rows.map((r) => ({ queue: r.queue, group: r.group_key === "" ? null : r.group_key, pausedAt: Number(r.paused_at) }));
  }

  async groupCounts({ queue, now, limit }: { queue: string; now: number; limit: number }): Promise<GroupCounts[]> {
    const rows = await this.db.query<{ group_key: string; pending: number | string; running: number | string }>(
      `SELECT group_key, sum(CASE WHEN status = 'pending' THEN 1 ELSE 0 END) AS pending, sum(CASE WHEN status = 'running' THEN 1 ELSE 0 END) AS running
       FROM tickwork_jobs
       WHERE queue = $1 AND group_key IS NOT NULL AND (status = 'pending' OR (status = 'running' AND lease_until >= $2))
       GROUP BY group_key ORDER BY count(*) DESC, group_key LIMIT $3`,
      [queue, now, limit],
    );
    return rows.map((r) => ({ group: r.group_key, pending: Number(r.pending), running: Number(r.running) }));
  }

  private *claimBody(tx: SqlTx, p: ClaimParams & { limits: ClaimLimits }): Body<ClaimResult> {
    const { queue, now, limits } = p;
    const d = this.d;
    // Advisory locks are the database's, not a schema's: each key starts with the schema, so tickworks in
    // other schemas of the database (with queues of the same names) never wait on it.
    if (d.postgres) yield* tx.query(`SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || '/' || $1, 0))`, [`tickwork_jobs/${queue}`]);
    const result = (held: ClaimHold | null, retryAt: number | null = null, paused = false): ClaimResult => ({ jobs: [], paused, held, retryAt, cursor: p.after ?? null });

    const counting = limits.groupConcurrency !== undefined;
    const { pausedGroups, running, cursor: sharedCursor } = yield* readQueueState(tx, queue, now, { counting, grouped: limits.grouped });
    if (pausedGroups.has("")) return result("paused", null, true);

    let want = p.limit;
    let held: ClaimHold | null = null;

    const shared = yield* lockBuckets(tx, d, limits.buckets.map((b) => b.bucket), now);
    // When every bucket has a token again after taking `n` now.
    const bucketsRefill = (n: number) => Math.max(...limits.buckets.map((spec) => nextTokenAt(spec, take(spec, shared.get(spec.bucket), now, n), now)));
    for (const spec of limits.buckets) {
      const left = tokens(spec, shared.get(spec.bucket), now);
      if (left < want) {
        want = left;
        held = "rateLimit";
      }
    }
    if (want === 0) return (yield* anyDue(tx, d, queue, now)) ? result(held, held === "rateLimit" ? bucketsRefill(0) : null) : result(null);
    let retryAt: number | null = null;

    let ids: string[] | null = null;
    let groupHeld: ClaimHold | null = null;
    let cursor = p.after ?? null;
    if (limits.grouped) {
      // The walk goes on where the last claim of any process ended (`after` only until one has).
      const walk = yield* walkGroups(tx, d, { ...p, after: sharedCursor ?? p.after ?? null, want, running, pausedGroups });
      ids = walk.ids;
      cursor = walk.cursor;
      if (cursor !== null && cursor !== sharedCursor) {
        yield* tx.query(
          `INSERT INTO tickwork_group_cursors (queue, group_key) VALUES ($1, $2) ON CONFLICT (queue) DO UPDATE SET group_key = excluded.group_key`,
          [queue, cursor],
        );
      }
      if (walk.held && ids.length < want) {
        groupHeld = walk.held;
        held ??= walk.held;
        if (walk.retryAt !== null) retryAt = walk.retryAt;
      }
      if (limits.groupRate && walk.taken.size) {
        const rate = limits.groupRate;
        yield* writeBuckets(
          tx,
          d,
          [...walk.taken].map(([group, n]) => {
            const spec = { bucket: groupBucket(queue, group), ...rate };
            return [spec.bucket, take(spec, walk.groupStates.get(group), now, n)];
          }),
          now,
        );
      }
    }
    // Nothing to take: only what held groups back can be waiting (the queue's own caps held nothing).
    if (ids !== null && ids.length === 0) return { jobs: [], paused: false, held: groupHeld, retryAt: groupHeld ? retryAt : null, cursor };

    const jobs = yield* startJobs(tx, d, { ...p, ids, want });
    if (limits.buckets.length) {
      yield* writeBuckets(tx, d, limits.buckets.map((spec) => [spec.bucket, take(spec, shared.get(spec.bucket), now, jobs.length)]), now);
    }
    // Fewer due jobs than the tokens allowed: the queue ran out, not the bucket. Saying "held" would
    // have the worker claim again at the next token with nothing due.
    if (held === "rateLimit" && (jobs.length < want || !(yield* anyDue(tx, d, queue, now)))) {
      held = groupHeld;
      retryAt = groupHeld ? retryAt : null;
    } else if (held === "rateLimit") {
      retryAt = Math.min(retryAt ?? Infinity, bucketsRefill(jobs.length));
    }
    return { jobs, paused: false, held, retryAt, cursor };
  }
}

/**
 * The queue's pauses and, when a concurrency limit needs them, its running jobs per group, in one
 * statement. Running jobs whose lease has lapsed no longer count: their worker is gone or frozen, and
 * the rescue is about to hand them back.
 */
function* readQueueState(
  tx: SqlTx,
  queue: string,
  now: number,
  { counting, grouped }: { counting: boolean; grouped: boolean },
): Body<{ pausedGroups: Set<string>; running: Map<string, number>; cursor: string | null }> {
  // kind: 1 a pause, 0 running jobs of a group, 2 the shared round-robin cursor.
  const rows = yield* tx.query<{ kind: number | string; group_key: string | null; n: number | string }>(
    `SELECT 1 AS kind, group_key, 0 AS n FROM tickwork_queue_pauses WHERE queue = $1
     ${grouped ? "UNION ALL SELECT 2 AS kind, group_key, 0 AS n FROM tickwork_group_cursors WHERE queue = $1" : ""}
     ${counting ? "UNION ALL SELECT 0 AS kind, group_key, count(*) AS n FROM tickwork_jobs WHERE status = 'running' AND lease_until >= $2 AND queue = $1 GROUP BY group_key" : ""}`,
    counting ? [queue, now] : [queue],
  );
  const pausedGroups = new Set<string>();
  const running = new Map<string, number>();
  let cursor: string | null = null;
  for (const row of rows) {
    const kind = Number(row.kind);
    if (kind === 1) pausedGroups.add(row.group_key!);
    else if (kind === 2) cursor = row.group_key;
    else if (row.group_key !== null) running.set(row.group_key, Number(row.n));
  }
  return { pausedGroups, running, cursor };
}

/**
 * Moves the picked `ids` to running, or, for an ungrouped queue (`ids` null), the first `want` due
 * jobs in claim order, chosen in the same statement (`+run_at`: see the plain claim in
 * queue/sqlite.ts; on PostgreSQL `= ANY(ARRAY(...))` keeps the lookup on the primary key, see REPLAN
 * in queue/postgres.ts).
 */
function* startJobs(tx: SqlTx, d: FlowDialect, p: ClaimParams & { ids: string[] | null; want: number }): Body<Job[]> {
  const idList = p.ids === null ? null : inList(d, 1, p.ids, "bigint");
  const due = `SELECT id FROM tickwork_jobs WHERE queue = $6 AND status = 'pending' AND ${d.postgres ? "run_at" : "+run_at"} <= $4 ORDER BY priority, run_at, id LIMIT $1`;
  // Picked ids on PostgreSQL are joined, not `= ANY($1)`: beside status = 'pending' the planner may
  // walk the queue's whole claim index instead of the primary key (4.5 ms for 8 ids among 20,000
  // pending rows, against 0.04 ms).
  const joined = idList !== null && d.postgres;
  const which = joined ? `tickwork_jobs.id = picked.id` : idList ? `id ${idList.sql}` : d.postgres ? `id = ANY(ARRAY(${due}))` : `id IN (${due})`;
  const rows = yield* tx.query<JobRow>(
    `UPDATE tickwork_jobs SET status = 'running', attempts = attempts + 1, worker_id = $2, lease_until = $3, started_at = $4,
       max_attempts = CASE WHEN max_attempts_from_queue THEN coalesce($5, max_attempts) ELSE max_attempts END
     ${joined ? "FROM unnest($1::bigint[]) AS picked(id)" : ""}
     WHERE ${which} AND status = 'pending'
     RETURNING ${d.postgres ? (joined ? "tickwork_jobs.*" : "*") : jobColumns(false, { returning: true })}`,
    [idList ? idList.value : p.want, p.workerId, p.leaseUntil, p.now, p.queueMaxAttempts ?? null, ...(idList ? [] : [p.queue])],
  );
  const jobs = rows.map((row) => toJob(row, d.payloadIsText)).sort(byClaimOrder);
  // Past the first `start` (in the walk's order for picked ids, else claim order) the jobs are held
  // for the worker, not started, until it marks them; in the claim's transaction, so never both.
  const start = p.start ?? jobs.length;
  if (jobs.length <= start) return jobs;
  const claimed = new Set(jobs.map((j) => j.id));
  const order = p.ids === null ? jobs.map((j) => j.id) : p.ids.filter((id) => claimed.has(id));
  const held = new Set(order.slice(start));
  const list = inList(d, 1, [...held], "bigint");
  yield* tx.query(`UPDATE tickwork_jobs SET started_at = NULL WHERE id ${list.sql}`, [list.value]);
  for (const job of jobs) if (held.has(job.id)) setStarted(job, null);
  return jobs;
}

/** Whether a job of `queue` is due and pending: what a cap that cut a claim short may be holding back. */
function* anyDue(tx: SqlTx, d: FlowDialect, queue: string, now: number): Body<boolean> {
  const rows = yield* tx.query(`SELECT 1 AS due FROM tickwork_jobs WHERE queue = $1 AND status = 'pending' AND ${d.postgres ? "run_at" : "+run_at"} <= $2 LIMIT 1`, [queue, now]);
  return rows.length > 0;
}

export function groupBucket(queue: string, group: string): string {
  return `group:${queue}/${group}`;
}

interface LimitRow {
  bucket: string;
  tat: number | string;
  paused_until: number | string | null;
}

function toState(row: LimitRow): BucketState {
  return { tat: Number(row.tat), pausedUntil: row.paused_until === null ? null : Number(row.paused_until) };
}

/**
 * A list parameter: an array PostgreSQL takes whole; on SQLite one JSON text (a Durable Object binds
 * at most 100 values, and a list of groups or ids may be longer).
 */
function inList(d: FlowDialect, param: number, values: readonly (string | number)[], type: "text" | "bigint"): { sql: string; value: unknown } {
  return d.postgres
    ? { sql: `= ANY($${param}::${type}[])`, value: values }
    : { sql: `IN (SELECT value FROM json_each($${param}))`, value: JSON.stringify(type === "bigint" ? values.map(Number) : values) };
}

/**
 * Reads buckets shared with other queues and with limiters' own takes, locked until the transaction
 * ends. On PostgreSQL a missing row is written first so there is a row to lock; SQLite's write lock
 * already holds everything.
 */
function* lockBuckets(tx: SqlTx, d: FlowDialect, buckets: string[], now: number): Body<Map<string, BucketState>> {
  if (buckets.length === 0) return new Map();
  // Sorted, so two transactions locking the same buckets take them in the same order (no deadlock).
  const sorted = [...new Set(buckets)].sort();
  if (d.postgres) {
    yield* tx.query(`INSERT INTO tickwork_limits (bucket, tat, paused_until, updated_at) SELECT b, $2::bigint, NULL, $2::bigint FROM unnest($1::text[]) AS b ON CONFLICT DO NOTHING`, [sorted, now]);
  }
  return yield* readBuckets(tx, d, sorted, d.postgres ? " ORDER BY bucket FOR UPDATE" : "");
}

/** The stored state of some buckets (`lock`: a clause that locks the rows read). */
function* readBuckets(tx: SqlTx, d: FlowDialect, buckets: string[], lock = ""): Body<Map<string, BucketState>> {
  const states = new Map<string, BucketState>();
  if (buckets.length === 0) return states;
  const list = inList(d, 1, buckets, "text");
  const rows = yield* tx.query<LimitRow>(`SELECT bucket, tat, paused_until FROM tickwork_limits WHERE bucket ${list.sql}${lock}`, [list.value]);
  for (const row of rows) states.set(row.bucket, toState(row));
  return states;
}

function* writeBuckets(tx: SqlTx, d: FlowDialect, entries: [string, BucketState][], now: number): Body<void> {
  if (entries.length === 0) return;
  if (d.postgres) {
    yield* tx.query(
      `INSERT INTO tickwork_limits (bucket, tat, paused_until, updated_at) SELECT b, t, NULL, $3 FROM unnest($1::text[], $2::float8[]) AS e(b, t)
       ON CONFLICT (bucket) DO UPDATE SET tat = excluded.tat, updated_at = excluded.updated_at`,
      [entries.map(([b]) => b), entries.map(([, s]) => s.tat), now],
    );
    return;
  }
  for (const [bucket, state] of entries) {
    yield* tx.query(
      `INSERT INTO tickwork_limits (bucket, tat, paused_until, updated_at) VALUES ($1, $2, NULL, $3)
       ON CONFLICT (bucket) DO UPDATE SET tat = excluded.tat, updated_at = excluded.updated_at`,
      [bucket, state.tat, now],
    );
  }
}

interface Walk {
  ids: string[];
  taken: Map<string, number>;
  cursor: string | null;
  held: ClaimHold | null;
  retryAt: number | null;
  groupStates: Map<string, BucketState>;
}

/**
 * Picks up to `want` due jobs of a grouped queue, fairly: the groups with pending jobs are walked in
 * key order from the one after the last claim's (round-robin across claims, wrapping at the end), a
 * group gets its weight's share per round (1 by default) while it has due jobs and room under its
 * groupConcurrency and groupRateLimit, and within a group jobs go by priority, then due time. One
 * tenant's burst of 100,000 jobs takes one slot per round like any other tenant's single job.
 *
 * Cost: each group visited is one index probe (a loose scan of the group index), so a claim costs
 * what it takes plus the groups it skips (paused, full or out of tokens), not the number of groups.
 */
function* walkGroups(
  tx: SqlTx,
  d: FlowDialect,
  p: ClaimParams & { limits: ClaimLimits; want: number; running: Map<string, number>; pausedGroups: Set<string> },
): Body<Walk> {
  const { queue, now, limits, want, running, pausedGroups } = p;
  const walk: Walk = { ids: [], taken: new Map(), cursor: p.after ?? null, held: null, retryAt: null, groupStates: new Map() };
  const start = p.after ?? "";
  let from = start;
  let wrapped = start === "";
  const full = (group: string) => limits.groupConcurrency !== undefined && (running.get(group) ?? 0) >= limits.groupConcurrency;
  // Groups known to be held (paused, or full) are stepped over by the probe without counting: a walk
  // asks for as many open groups as it wants jobs, whatever number it passes on the way.
  const blocked = [...new Set([...pausedGroups, ...[...running.keys()].filter(full)])];
  const nextGroups = nextGroupsSql(d, blocked);
  const openCount = (keys: string[]) => keys.filter((k) => !blocked.includes(k)).length;
  for (let round = 0; round < MAX_ROUNDS && walk.ids.length < want; round++) {
    const ask = want - walk.ids.length;
    let keys = (yield* tx.query<{ k: string }>(nextGroups.sql, [queue, from, ask, nextGroups.blocked])).map((r) => r.k);
    // Past the last group: go on from the first, up to where this claim started.
    if (openCount(keys) < ask && !wrapped) {
      wrapped = true;
      const more = (yield* tx.query<{ k: string }>(nextGroups.sql, [queue, "", ask - openCount(keys), nextGroups.blocked])).map((r) => r.k).filter((k) => k <= start && !keys.includes(k));
      keys = [...keys, ...more];
    }
    if (keys.length === 0) break;
    from = keys[keys.length - 1]!;
    const open = keys.filter((k) => {
      // A paused group's pending jobs are still in the store's due times: unless the claim says they
      // are held, a worker that ran everything else would look again at once, and again (a spin).
      if (pausedGroups.has(k)) {
        holdBy(walk, "paused");
        return false;
      }
      if (full(k)) {
        holdBy(walk, "groupConcurrency");
        return false;
      }
      return !walk.taken.has(k);
    });
    let states = new Map<string, BucketState>();
    const caps = new Map<string, number>();
    if (limits.groupRate) {
      const rate = limits.groupRate;
      states = yield* readBuckets(tx, d, open.map((k) => groupBucket(queue, k)));
      for (const k of open) {
        const spec = { bucket: groupBucket(queue, k), ...rate };
        const state = states.get(spec.bucket);
        if (state) walk.groupStates.set(k, state);
        const left = tokens(spec, state, now);
        caps.set(k, left);
        if (left === 0) {
          holdBy(walk, "groupRateLimit");
          const at = nextTokenAt(spec, state, now);
          walk.retryAt = Math.min(walk.retryAt ?? Infinity, at);
        }
      }
    }
    const withRoom = open.filter((k) => (caps.get(k) ?? 1) > 0);
    if (withRoom.length === 0) continue;
    // More open groups than jobs still wanted: one each for the first of them, and the next round (or
    // the next claim) goes on after the last one looked at, so no group is read for nothing.
    const remaining = want - walk.ids.length;
    const eligible = withRoom.length > remaining ? withRoom.slice(0, remaining) : withRoom;
    if (eligible.length < withRoom.length) from = eligible[eligible.length - 1]!;
    // Each group's share of this round: its weight, within its room; more than one round's worth is
    // fetched only when few groups share what the claim asks for.
    const perRound = Math.max(1, Math.ceil(remaining / eligible.length));
    // A group whose limit, not its backlog, bounds what it may take now: if it fills that share, it
    // may have more due jobs waiting on the limit.
    const boundBy = new Map<string, ClaimHold>();
    const limitOf = (k: string) => {
      const weight = limits.groupWeights?.[k] ?? 1;
      let cap = Math.min(perRound * weight, want);
      if (limits.groupConcurrency !== undefined && limits.groupConcurrency - (running.get(k) ?? 0) < cap) {
        cap = limits.groupConcurrency - (running.get(k) ?? 0);
        boundBy.set(k, "groupConcurrency");
      }
      if (caps.has(k) && caps.get(k)! < cap) {
        cap = caps.get(k)!;
        boundBy.set(k, "groupRateLimit");
      }
      return Math.max(0, cap);
    };
    const limitsByGroup = eligible.map((k): [string, number] => [k, limitOf(k)]);
    const heads = yield* groupHeads(tx, d, queue, now, limitsByGroup);
    // Round-robin over what was found: every group's first job, then every group's second, ...
    const byGroup = new Map<string, string[]>();
    for (const h of heads) {
      let list = byGroup.get(h.group);
      if (!list) byGroup.set(h.group, (list = []));
      list.push(h.id);
    }
    for (const [k, limit] of limitsByGroup) {
      const bound = boundBy.get(k);
      if (bound && (byGroup.get(k)?.length ?? 0) >= limit) {
        holdBy(walk, bound);
        if (bound === "groupRateLimit" && limits.groupRate) {
          const spec = { bucket: groupBucket(queue, k), ...limits.groupRate };
          walk.retryAt = Math.min(walk.retryAt ?? Infinity, nextTokenAt(spec, take(spec, states.get(spec.bucket), now, limit), now));
        }
      }
    }
    for (let depth = 0; walk.ids.length < want; depth++) {
      let any = false;
      for (const k of eligible) {
        const weight = limits.groupWeights?.[k] ?? 1;
        for (let w = 0; w < weight && walk.ids.length < want; w++) {
          const id = byGroup.get(k)?.[depth * weight + w];
          if (id === undefined) continue;
          any = true;
          walk.ids.push(id);
          walk.taken.set(k, (walk.taken.get(k) ?? 0) + 1);
          if (depth === 0) walk.cursor = k;
        }
      }
      if (!any) break;
    }
  }
  return walk;
}

/**
 * Records what held a group back. A pause is named only when nothing else held one: a worker held by
 * a group's concurrency looks again as soon as its own jobs finish, one held by a pause after a poll.
 */
function holdBy(walk: Walk, hold: ClaimHold): void {
  if (walk.held === null || (walk.held === "paused" && hold !== "paused")) walk.held = hold;
}

/**
 * The groups of queue `$1` with pending jobs after group `$2`, in key order, up to the `$3`rd that is
 * not in `blocked` (`$4`): one index probe each. A row's n counts the open groups before it, so the
 * probe goes on past blocked groups without counting them.
 */
function nextGroupsSql(d: FlowDialect, blocked: string[]): { sql: string; blocked: unknown } {
  const list = inList(d, 4, blocked, "text");
  const sql = `
  WITH RECURSIVE g(k, n) AS (
    SELECT (SELECT group_key FROM tickwork_jobs WHERE queue = $1 AND status = 'pending' AND group_key IS NOT NULL AND group_key > $2 ORDER BY group_key LIMIT 1), 0
    UNION ALL
    SELECT (SELECT t.group_key FROM tickwork_jobs t WHERE t.queue = $1 AND t.status = 'pending' AND t.group_key IS NOT NULL AND t.group_key > g.k ORDER BY t.group_key LIMIT 1),
           g.n + CASE WHEN g.k ${list.sql} THEN 0 ELSE 1 END
    FROM g WHERE g.k IS NOT NULL AND g.n + CASE WHEN g.k ${list.sql} THEN 0 ELSE 1 END < $3
  )
  SELECT k FROM g WHERE k IS NOT NULL`;
  return { sql, blocked: list.value };
}

/** Up to `limit` due jobs of each group, in claim order within the group. */
function* groupHeads(tx: SqlTx, d: FlowDialect, queue: string, now: number, groups: [string, number][]): Body<{ id: string; group: string }[]> {
  const wanted = groups.filter(([, n]) => n > 0);
  if (wanted.length === 0) return [];
  if (d.postgres) {
    const rows = yield* tx.query<{ id: string; group_key: string }>(
      `SELECT x.id::text AS id, g.k AS group_key
       FROM unnest($2::text[], $3::int[]) WITH ORDINALITY AS g(k, m, ord)
       CROSS JOIN LATERAL (
         SELECT id, priority, run_at FROM tickwork_jobs t
         WHERE t.queue = $1 AND t.group_key = g.k AND t.status = 'pending' AND t.run_at <= $4
         ORDER BY t.priority, t.run_at, t.id LIMIT g.m
       ) AS x
       ORDER BY g.ord, x.priority, x.run_at, x.id`,
      [queue, wanted.map(([k]) => k), wanted.map(([, n]) => n), now],
    );
    return rows.map((r) => ({ id: r.id, group: r.group_key }));
  }
  const heads: { id: string; group: string }[] = [];
  for (const [group, limit] of wanted) {
    // `+run_at` keeps the walk in the group index's order (see the plain claim in queue/sqlite.ts).
    const rows = yield* tx.query<{ id: number }>(
      `SELECT id FROM tickwork_jobs WHERE queue = $1 AND group_key = $2 AND status = 'pending' AND group_key IS NOT NULL AND +run_at <= $3
       ORDER BY priority, run_at, id LIMIT $4`,
      [queue, group, now, limit],
    );
    for (const r of rows) heads.push({ id: String(r.id), group });
  }
  return heads;
}
