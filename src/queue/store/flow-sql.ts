import { atomically, type SqlDb, type SqlTx } from "../../db/sql-db.js";
import { isLimiterBucket, nextTokenAt, take, tokens, type BucketSpec, type BucketState } from "../flow-control/bucket.js";
import type { Job } from "../job.js";
import { byClaimOrder, setStarted, toJob, type JobRow } from "./rows.js";
import type { ClaimHold, ClaimLimits, ClaimParams, ClaimResult, GroupCounts, PauseRow, SlotHold } from "./store.js";
import type { QueueDialect } from "./dialect.js";
import { groupBucket, lockBuckets, readBuckets, writeBuckets, type Body } from "./flow-buckets.js";
import { walkGroups } from "./flow-groups.js";

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
  retryAt: number | string | null;
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
    private readonly d: QueueDialect,
  ) {}

  claim(params: ClaimParams & { limits: ClaimLimits }): Promise<ClaimResult> {
    const { limits } = params;
    if (this.d.runsClaimFunctions && limits.grouped) return this.claimGroupedInDatabase(params);
    return this.db.transaction((tx) => this.claimBody(tx, params));
  }

  /**
   * A grouped claim on PostgreSQL: one call of `tickwork_claim_grouped` (in store/migrations/postgres/)
   * takes the queue's rate buckets, walks the groups and starts their jobs, each group under a lock of
   * its own (not the queue's: claims of other groups walk and start beside it) and within its own
   * bucket. Claims at the same time start from the same shared cursor; one that finds a group locked
   * by another passes it and walks on, up to GROUP_PROBES groups per group wanted beyond what it asks
   * for. Only their last step, moving the cursor forward, waits for the claim before it to commit;
   * under rate buckets, claims of the queue take its buckets one after another.
   */
  private async claimGroupedInDatabase(p: ClaimParams & { limits: ClaimLimits }): Promise<ClaimResult> {
    const { limits } = p;
    const depth = limits.groupConcurrency === 1 ? Math.max(1, p.serialDepth ?? 1) : 1;
    const groups = Math.ceil(p.limit / depth);
    const [row] = await this.db.query<{ claim: GroupedClaim }>(
      `SELECT tickwork_claim_grouped($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) AS claim`,
      [
        p.queue, p.limit, limits.groupConcurrency ?? null, limits.groupWeights ? JSON.stringify(limits.groupWeights) : null, p.after ?? null,
        p.now, p.workerId, p.leaseUntil, p.queueMaxAttempts ?? null, GROUP_PROBES * groups, depth, p.start ?? null,
        limits.buckets.length ? JSON.stringify(limits.buckets) : null, limits.groupRate ? JSON.stringify(limits.groupRate) : null,
      ],
    );
    const claim = row!.claim;
    const jobs = claim.jobs.map((job) => toJob(job, false)).sort(byClaimOrder);
    return { jobs, paused: claim.paused, held: claim.held, retryAt: claim.retryAt === null ? null : Number(claim.retryAt), cursor: claim.cursor };
  }

  /**
   * On PostgreSQL one call of `tickwork_hold_slots` (store/migrations/postgres/), so the queue's lock is held only
   * while the server runs it; on SQLite the same steps in one transaction, under the write lock.
   */
  async holdSlots(p: { queue: string; workerId: string; want: number; cap: number; now: number; until: number }): Promise<SlotHold> {
    if (this.d.runsClaimFunctions) {
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
    const list = queues ? this.d.inList(1, queues, "text") : null;
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
    const lock = d.lockQueue(queue);
    if (lock) yield* tx.query(lock.sql, lock.params);
    const result = (held: ClaimHold | null, retryAt: number | null = null, paused = false): ClaimResult => ({ jobs: [], paused, held, retryAt, cursor: p.after ?? null });

    const counting = limits.groupConcurrency !== undefined;
    const { pausedGroups, running, cursor: sharedCursor } = yield* readQueueState(tx, queue, now, { counting, grouped: limits.grouped });
    if (pausedGroups.has("")) return result("paused", null, true);

    let want = p.limit;
    const shared = yield* lockBuckets(tx, d, limits.buckets.map((b) => b.bucket), now);
    // When every bucket has a token again after taking `n` now.
    const bucketsRefill = (n: number) => Math.max(...limits.buckets.map((spec) => nextTokenAt(spec, take(spec, shared.get(spec.bucket), now, n), now)));
    // The bucket with the fewest tokens names the hold: the queue's own rateLimit, or a limiter's.
    let bucketHold: ClaimHold | null = null;
    for (const spec of limits.buckets) {
      const left = tokens(spec, shared.get(spec.bucket), now);
      if (left < want) {
        want = left;
        bucketHold = isLimiterBucket(spec.bucket) ? "limiter" : "rateLimit";
      }
    }
    let held: ClaimHold | null = bucketHold;
    if (want === 0) return (yield* anyDue(tx, d, queue, now)) ? result(held, bucketHold ? bucketsRefill(0) : null) : result(null);
    let retryAt: number | null = null;

    let ids: string[] | null = null;
    let groupHeld: ClaimHold | null = null;
    let cursor = p.after ?? null;
    if (limits.grouped) {
      // Only SQLite walks here (PostgreSQL's grouped claim is one call, above). The walk goes on where
      // the last claim of any process ended (`after` only until one has).
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
    if (bucketHold && (jobs.length < want || !(yield* anyDue(tx, d, queue, now)))) {
      held = groupHeld;
      retryAt = groupHeld ? retryAt : null;
    } else if (bucketHold) {
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
 * jobs in claim order, chosen in the same statement (the dialect's `dueRunAt` and `idsChosenBy`).
 */
function* startJobs(tx: SqlTx, d: QueueDialect, p: ClaimParams & { ids: string[] | null; want: number }): Body<Job[]> {
  const picked = p.ids === null ? null : d.pickedIds(1, p.ids);
  const due = `SELECT id FROM tickwork_jobs WHERE queue = $6 AND status = 'pending' AND ${d.dueRunAt} <= $4 ORDER BY priority, run_at, id LIMIT $1`;
  const rows = yield* tx.query<JobRow>(
    `UPDATE tickwork_jobs SET status = 'running', attempts = attempts + 1, worker_id = $2, lease_until = $3, started_at = $4,
       max_attempts = CASE WHEN max_attempts_from_queue THEN coalesce($5, max_attempts) ELSE max_attempts END
     ${picked ? picked.from : ""}
     WHERE ${picked ? picked.where : d.idsChosenBy(due)} AND status = 'pending'
     RETURNING ${d.returnedJob}`,
    [picked ? picked.value : p.want, p.workerId, p.leaseUntil, p.now, p.queueMaxAttempts ?? null, ...(picked ? [] : [p.queue])],
  );
  const jobs = rows.map((row) => toJob(row, d.payloadIsText)).sort(byClaimOrder);
  // Past the first `start` (in the walk's order for picked ids, else claim order) the jobs are held
  // for the worker, not started, until it marks them; in the claim's transaction, so never both.
  const start = p.start ?? jobs.length;
  if (jobs.length <= start) return jobs;
  const claimed = new Set(jobs.map((j) => j.id));
  const order = p.ids === null ? jobs.map((j) => j.id) : p.ids.filter((id) => claimed.has(id));
  const held = new Set(order.slice(start));
  const list = d.inList(1, [...held], "bigint");
  yield* tx.query(`UPDATE tickwork_jobs SET started_at = NULL WHERE id ${list.sql}`, [list.value]);
  for (const job of jobs) if (held.has(job.id)) setStarted(job, null);
  return jobs;
}

/** Whether a job of `queue` is due and pending: what a cap that cut a claim short may be holding back. */
function* anyDue(tx: SqlTx, d: QueueDialect, queue: string, now: number): Body<boolean> {
  const rows = yield* tx.query(`SELECT 1 AS due FROM tickwork_jobs WHERE queue = $1 AND status = 'pending' AND ${d.dueRunAt} <= $2 LIMIT 1`, [queue, now]);
  return rows.length > 0;
}
