import type { SqlStatement, SqlTx } from "../../db/sql-db.js";
import { JobStateError } from "../errors.js";
import { WAITING_RUN_AT, lockParents } from "./flow-tree.js";

type Body<T> = Generator<SqlStatement, T, unknown>;

/**
 * How a store gives failed or cancelled jobs a fresh set of attempts: a statement taking $1 (the
 * ids, as `ids` encodes them) and $2 (now), returning each job it moved back to pending with its
 * place in a flow. `lock` says whether rows must be locked before they are counted (PostgreSQL,
 * where transactions run side by side; SQLite has one writer at a time).
 */
export interface RetryStatement {
  sql: string;
  ids(ids: readonly string[]): unknown;
  lock: boolean;
}

/** A job a retry moved back to pending, as the retry statement returns it. */
export interface RetriedRow {
  id: number | string;
  queue: string;
  parent_id: number | string | null;
  children_total: number;
  child_failure: string | null;
}

interface ChildCounts {
  live: number | string | null;
  failed: number | string | null;
  first_failed: number | string | null;
}

interface ParentRow {
  id: number | string;
  status: string;
  started_at: number | string | null;
  child_failure: string | null;
  parent_id: number | string | null;
}

/** A parent's children as they are now: unfinished, failed or cancelled, and the first of those. */
const COUNT_CHILDREN = `
  SELECT sum(CASE WHEN status IN ('pending', 'running') THEN 1 ELSE 0 END) AS live,
         sum(CASE WHEN status IN ('failed', 'cancelled') THEN 1 ELSE 0 END) AS failed,
         min(CASE WHEN status IN ('failed', 'cancelled') THEN id END) AS first_failed
  FROM tickwork_jobs WHERE parent_id = $1`;

/** A parent waiting again: its counts as its children are now, due when the last of them ends. */
const REOPEN = `
  UPDATE tickwork_jobs SET status = 'pending', finished_at = NULL, children_waiting = CAST($2 AS INTEGER), children_failed = CAST($3 AS INTEGER),
    run_at = CASE WHEN CAST($2 AS INTEGER) > 0 THEN CAST($4 AS BIGINT) ELSE CAST($5 AS BIGINT) END
  WHERE id = $1`;

const READ_PARENT = `SELECT id, status, started_at, child_failure, parent_id FROM tickwork_jobs WHERE id = $1`;

/**
 * Retries jobs that sit in a flow, keeping the rule that a parent runs once, after every child
 * ended, having counted each child once:
 * - a retried child reopens its parent's wait (the parent's counts are taken again from its
 *   children), and up the tree a parent a child's failure had failed before it ran;
 * - a parent that already ran, or was cancelled, is left as it is: the child runs on its own;
 * - a child of a running parent is refused, since the parent is reading its children's outcomes;
 * - a retried parent waits for its unfinished children, or runs at once with their final
 *   outcomes; one that fails when a child fails is refused while one of its children has failed
 *   (retry that child, and the parent runs after its children).
 * Throws JobStateError on a refusal, after which the caller's transaction must roll back.
 * Returns the ids the statement moved back to pending (none where a live job holds a key).
 */
export function* retryInFlow(tx: SqlTx, retry: RetryStatement, ids: readonly string[], now: number): Body<string[]> {
  const rows = yield* tx.query<RetriedRow>(retry.sql, [retry.ids(ids), now]);
  for (const row of rows.filter((r) => r.children_total > 0)) {
    const id = String(row.id);
    const { live, failed, firstFailed } = yield* countChildren(tx, id);
    if (failed > 0 && row.child_failure === "fail") {
      throw new JobStateError(`job ${id} cannot be retried while its child job ${firstFailed} has failed: retry that child, and job ${id} runs after its children`);
    }
    yield* tx.query(REOPEN, [Number(id), live, failed, WAITING_RUN_AT, now]);
  }
  const parents = [...new Set(rows.filter((r) => r.parent_id != null).map((r) => String(r.parent_id)))];
  for (const parent of parents) yield* reopenWait(tx, retry.lock, parent, String(rows.find((r) => String(r.parent_id) === parent)!.id), now);
  return rows.map((r) => String(r.id));
}

/** A parent's children as they are now: unfinished, and failed or cancelled (the first of those named). */
function* countChildren(tx: SqlTx, parent: string): Body<{ live: number; failed: number; firstFailed: string | null }> {
  const [counts] = yield* tx.query<ChildCounts>(COUNT_CHILDREN, [Number(parent)]);
  return {
    live: Number(counts?.live ?? 0),
    failed: Number(counts?.failed ?? 0),
    firstFailed: counts?.first_failed == null ? null : String(counts.first_failed),
  };
}

/** A child of `parent` (`child`, for the message) went back to pending: the parent waits for it again. */
function* reopenWait(tx: SqlTx, lock: boolean, parent: string, child: string, now: number): Body<void> {
  let current: string | null = parent;
  let from = child;
  while (current !== null) {
    if (lock) yield* lockParents(tx, [current]);
    const [row]: ParentRow[] = yield* tx.query<ParentRow>(READ_PARENT, [Number(current)]);
    if (!row) return;
    if (row.status === "running") throw new JobStateError(`job ${from} cannot be retried while its parent job ${current} is running: the parent reads its children's outcomes`);
    const neverRan = row.started_at == null;
    const waiting = row.status === "pending";
    const failedByChild = row.status === "failed" && neverRan;
    if (!waiting && !failedByChild) return;
    const { live, failed } = yield* countChildren(tx, current);
    // A parent that fails with a failed child stays failed while another child has failed.
    if (failedByChild && failed > 0 && row.child_failure === "fail") return;
    yield* tx.query(REOPEN, [Number(current), live, failed, WAITING_RUN_AT, now]);
    // Only a parent that had ended was counted by its own parent: one that was waiting still is.
    if (waiting || row.parent_id == null) return;
    from = current;
    current = String(row.parent_id);
  }
}

/**
 * Failed jobs of a flow as a bulk retry takes them: the children of one parent together (their
 * parent counted again once, however many), a parent without a parent on its own.
 */
export function retryGroups(rows: readonly { id: number | string; parent_id: number | string | null }[]): string[][] {
  const groups = new Map<string, string[]>();
  for (const row of rows) {
    const group = row.parent_id == null ? `self:${row.id}` : String(row.parent_id);
    let ids = groups.get(group);
    if (!ids) groups.set(group, (ids = []));
    ids.push(String(row.id));
  }
  return [...groups.values()];
}

/**
 * Runs `retry` (one transaction, which a refusal rolls back) over each group of retryGroups, and
 * returns how many jobs it moved back to pending. A group refused as a whole is tried a job at a
 * time, so one refused job (a parent whose own child has failed) does not hold back its siblings.
 */
export async function retryEachGroup(groups: readonly string[][], retry: (ids: readonly string[]) => Promise<number>): Promise<number> {
  let retried = 0;
  const attempt = async (ids: readonly string[]): Promise<boolean> => {
    try {
      retried += await retry(ids);
      return true;
    } catch (error) {
      if (!(error instanceof JobStateError)) throw error;
      return false;
    }
  };
  for (const ids of groups) {
    if (!(await attempt(ids)) && ids.length > 1) for (const id of ids) await attempt([id]);
  }
  return retried;
}
