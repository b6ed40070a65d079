import type { SqlTx } from "../../db/sql-db.js";
import { nextTokenAt, take, tokens, type BucketState } from "../flow-control/bucket.js";
import { groupBucket, readBuckets, type Body } from "./flow-buckets.js";
import type { QueueDialect } from "./dialect.js";
import type { ClaimHold, ClaimLimits, ClaimParams } from "./store.js";

/** Most groups one claim looks at per round, beyond what it asks for (see walkGroups). */
const MAX_ROUNDS = 4;

export interface Walk {
  ids: string[];
  taken: Map<string, number>;
  cursor: string | null;
  held: ClaimHold | null;
  retryAt: number | null;
  groupStates: Map<string, BucketState>;
}

/**
 * SQLite's grouped claim (PostgreSQL's is one call of `tickwork_claim_grouped`, the same walk in SQL).
 * Picks up to `want` due jobs of a grouped queue, fairly: the groups with pending jobs are walked in
 * key order from the one after the last claim's (round-robin across claims, wrapping at the end), a
 * group gets its weight's share per round (1 by default) while it has due jobs and room under its
 * groupConcurrency and groupRateLimit, and within a group jobs go by priority, then due time. One
 * tenant's burst of 100,000 jobs takes one slot per round like any other tenant's single job.
 *
 * Cost: each group visited is one index probe (a loose scan of the group index), so a claim costs
 * what it takes plus the groups it skips (paused, full or out of tokens), not the number of groups.
 */
export function* walkGroups(
  tx: SqlTx,
  d: QueueDialect,
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
    const heads = yield* groupHeads(tx, queue, now, limitsByGroup);
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
function nextGroupsSql(d: QueueDialect, blocked: string[]): { sql: string; blocked: unknown } {
  const list = d.inList(4, blocked, "text");
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

/** Up to `limit` due jobs of each group, in claim order within the group: one probe of the group index each. */
function* groupHeads(tx: SqlTx, queue: string, now: number, groups: [string, number][]): Body<{ id: string; group: string }[]> {
  const wanted = groups.filter(([, n]) => n > 0);
  if (wanted.length === 0) return [];
  const heads: { id: string; group: string }[] = [];
  for (const [group, limit] of wanted) {
    // `+run_at` keeps the walk in the group index's order (see the plain claim in queue/store/sqlite.ts).
    const rows = yield* tx.query<{ id: number }>(
      `SELECT id FROM tickwork_jobs WHERE queue = $1 AND group_key = $2 AND status = 'pending' AND group_key IS NOT NULL AND +run_at <= $3
       ORDER BY priority, run_at, id LIMIT $4`,
      [queue, group, now, limit],
    );
    for (const r of rows) heads.push({ id: String(r.id), group });
  }
  return heads;
}
