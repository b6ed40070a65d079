import type { SqlStatement, SqlTx } from "../../db/sql-db.js";
import type { JobOutcome } from "./store.js";

/** A flow child that ended (succeeded, or failed for good or was cancelled): its parent counts it. */
export interface EndedChild {
  parent: string;
  child: string;
  failed: boolean;
  error: string | null;
}

/** The ended children of one parent, counted together: one update of the parent per batch. */
export interface ParentCount {
  parent: string;
  ended: number;
  failed: number;
  /** The first failure, as the parent's error when it fails with it. */
  error: string | null;
}

export function byParent(ended: readonly EndedChild[]): ParentCount[] {
  const counts = new Map<string, ParentCount>();
  for (const e of ended) {
    let c = counts.get(e.parent);
    if (!c) counts.set(e.parent, (c = { parent: e.parent, ended: 0, failed: 0, error: null }));
    c.ended++;
    if (e.failed) {
      c.failed++;
      c.error ??= `child job ${e.child} failed: ${e.error ?? "no error recorded"}`;
    }
  }
  // In id order, whatever order the outcomes came in: two settles that count children of the same
  // parents then lock those parents in the same order, and never wait on each other in a circle.
  return [...counts.values()].sort((a, b) => byId(a.parent, b.parent));
}

/** Two ids (decimal text, up to 19 digits) compared as the numbers they are. */
function byId(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * One parent counting some ended children: $1 ended, $2 failed, $3 now, $4 the error, $5 the parent's
 * id. A failure fails a parent whose policy is 'fail'; otherwise the last child makes it due now.
 * Only a waiting parent counts (one that already failed, or was cancelled, is left as it is).
 */
const COUNT_ENDED_CHILDREN = `
  UPDATE tickwork_jobs SET
    children_waiting = children_waiting - $1,
    children_failed  = children_failed + $2,
    status      = CASE WHEN $2 > 0 AND child_failure = 'fail' THEN 'failed' ELSE status END,
    finished_at = CASE WHEN $2 > 0 AND child_failure = 'fail' THEN $3 ELSE finished_at END,
    last_error  = CASE WHEN $2 > 0 AND child_failure = 'fail' THEN $4 ELSE last_error END,
    run_at      = CASE WHEN ($2 = 0 OR child_failure <> 'fail') AND children_waiting = $1 THEN $3 ELSE run_at END
  WHERE id = $5 AND status = 'pending' AND children_waiting > 0
  RETURNING id, queue, status, parent_id, waited, last_error, children_waiting`;

/** A parent as countEndedChildren returns it. */
export interface CountedParent {
  id: number | string;
  queue: string;
  status: string;
  parent_id: number | string | null;
  waited: boolean | number;
  last_error: string | null;
  children_waiting: number;
}

/** What counting ended children led to: parents made due (their queues), failed and awaited (their ids). */
export interface FlowEffects {
  woke: string[];
  failedWaited: string[];
}

/**
 * Locks some parents' rows, whatever their status, in id order (PostgreSQL). A count of ended
 * children that found its parent failed and passed it by would otherwise miss a retry reopening that
 * parent at the same moment: the retry reads the child as unfinished (its end not yet committed) and
 * the parent would wait for it for ever. Locked first, one of the two waits for the other.
 */
export function* lockParents(tx: SqlTx, parents: readonly string[]): Generator<SqlStatement, void, unknown> {
  yield* tx.query(`SELECT id FROM tickwork_jobs WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`, [parents]);
}

/**
 * Counts ended children in their parents, and a parent failed by a child in its own parent, up the
 * tree, inside the caller's transaction. `lock`: lock each level's parents first (see lockParents).
 */
export function* propagate(tx: SqlTx, ended: readonly EndedChild[], now: number, lock = false): Generator<SqlStatement, FlowEffects, unknown> {
  const effects: FlowEffects = { woke: [], failedWaited: [] };
  let level = ended;
  while (level.length) {
    const next: EndedChild[] = [];
    const counts = byParent(level);
    if (lock) yield* lockParents(tx, counts.map((c) => c.parent));
    for (const count of counts) {
      const [row] = yield* tx.query<CountedParent>(COUNT_ENDED_CHILDREN, [count.ended, count.failed, now, count.error, Number(count.parent)]);
      if (!row) continue;
      if (row.status === "failed") {
        if (row.waited) effects.failedWaited.push(String(row.id));
        if (row.parent_id != null) next.push({ parent: String(row.parent_id), child: String(row.id), failed: true, error: row.last_error });
      } else if (row.children_waiting === 0) {
        effects.woke.push(row.queue);
      }
    }
    level = next;
  }
  return effects;
}

/** The end of time, as a waiting parent's run_at: no claim reaches it before its children end. */
export { MAX_TIME_MS as WAITING_RUN_AT } from "../../core/bounds.js";

/** The flow child an outcome ends, if it is one and the outcome is an end (success, or failure for good). */
export function endedChild(outcome: JobOutcome): EndedChild | null {
  if (outcome.kind === "succeeded" && outcome.parent !== undefined) return { parent: outcome.parent, child: outcome.id, failed: false, error: null };
  if (outcome.kind === "failed" && outcome.retryAt === null && outcome.parent !== undefined) return { parent: outcome.parent, child: outcome.id, failed: true, error: outcome.error };
  return null;
}
