import type { PgExecutor } from "../../../db/pg-executor.js";
import { runBody, sqlTx } from "../../../db/sql-db.js";
import { endedChild, propagate, type EndedChild, type FlowEffects } from "../flow-tree.js";
import type { JobStatus } from "../../job.js";
import { arrayLiteral } from "./params.js";
import { SETTLE_MANY, SETTLE_SUCCEEDED } from "./sql.js";
import type { JobOutcome } from "../store.js";

/**
 * The statements that reach a batch of rows by id are planned on every call (`replan`), and hand the
 * planner their ids as an array it cannot see into (an InitPlan), so it prices the lookup as a few
 * probes of the primary key whatever the batch's size. Both guards come from the side-by-side
 * benchmark, each a plan that read the whole table on every call:
 * - prepared once, such a statement ran on the generic plan PostgreSQL built on a table still small
 *   (a sequential scan is cheapest there) for the rest of a 60 s run while the table grew to 120,000
 *   rows: claims and settles of 200 ms, and the queue fell behind a producer of 2,000 jobs/s;
 * - handed 500 ids it can see, on a table of 20,000 to 100,000 rows not yet analyzed, the planner
 *   priced 500 random reads above a scan of the table.
 * Joined to a CTE or a FROM list instead, the planner hash-joins the batch with a scan of the whole
 * table once it holds a few thousand rows.
 */
export const REPLAN = { replan: true };

/** The flow statements bind a handful of values each. */
const MAX_FLOW_PARAMS = 65_535;

/** A settled job, as the settle statements return it: its new status, and whether someone awaits it. */
export type Settled = { id: string; waited: boolean; status: JobStatus };

/** Counts ended flow children in their parents (see propagate) on the caller's transaction; nothing to do costs nothing. */
export function countInParents(query: PgExecutor["query"], ended: EndedChild[], now: number): Promise<FlowEffects> {
  if (ended.length === 0) return Promise.resolve({ woke: [], failedWaited: [] });
  return runBody(propagate(sqlTx(MAX_FLOW_PARAMS), ended, now, true), (statement) => query(statement.sql, statement.params));
}

/**
 * Writes a worker's outcomes (see QueueStore.settleMany): the jobs the fence let through, and, when
 * some outcomes end flow children, the parents they made due (`woke`) and the awaited parents they
 * failed, counted in the same transaction so a crash never leaves a child ended and its parent waiting
 * for it. A batch of successes alone, the common one, goes as SETTLE_SUCCEEDED.
 */
export async function settleOutcomes(
  db: PgExecutor,
  workerId: string,
  outcomes: readonly JobOutcome[],
  now: number,
): Promise<{ applied: Settled[]; woke?: string[]; failedWaited: string[] }> {
  const ended = outcomes.map(endedChild).filter((c) => c !== null);
  if (ended.length) {
    const params = mixedParams(workerId, outcomes, now);
    const { applied, effects } = await db.overlapped(async (query) => {
      const applied = await query<Settled>(SETTLE_MANY, params, REPLAN);
      const done = new Set(applied.map((r) => r.id));
      return { applied, effects: await countInParents(query, ended.filter((e) => done.has(e.child)), now) };
    });
    return { applied, woke: effects.woke, failedWaited: effects.failedWaited };
  }
  if (!outcomes.every((o) => o.kind === "succeeded")) return { applied: await db.query<Settled>(SETTLE_MANY, mixedParams(workerId, outcomes, now), REPLAN), failedWaited: [] };
  const ids = outcomes.map((o) => o.id);
  const applied = await db.query<Settled>(
    SETTLE_SUCCEEDED,
    [
      arrayLiteral(ids),
      arrayLiteral(outcomes.map((o) => o.attempt)),
      now,
      arrayLiteral(ids.map(() => "running")),
      // Results are JSON text, quoted by the driver; a batch of jobs that returned nothing sends none.
      outcomes.some((o) => o.result !== undefined) ? outcomes.map((o) => o.result ?? null) : [],
      startsOf(outcomes),
      workerId,
    ],
    REPLAN,
  );
  return { applied, failedWaited: [] };
}

function mixedParams(workerId: string, outcomes: readonly JobOutcome[], now: number): unknown[] {
  const ids: string[] = [];
  const attempts: number[] = [];
  const kinds: string[] = [];
  const runAts: (number | null)[] = [];
  const errors: (string | null)[] = [];
  const results: (string | null)[] = [];
  for (const o of outcomes) {
    ids.push(o.id);
    attempts.push(o.attempt);
    kinds.push(o.kind === "failed" && o.retryAt !== null ? "retried" : o.kind);
    runAts.push(o.kind === "failed" ? o.retryAt : o.kind === "snoozed" ? o.runAt : null);
    errors.push(o.kind === "failed" ? o.error : null);
    results.push(o.kind === "succeeded" ? (o.result ?? null) : null);
  }
  const held = ids.map(() => "running");
  return [ids, attempts, kinds, runAts, errors, results, now, held, workerId, startsOf(outcomes)];
}

/** When each outcome's job started, for those held unstarted; an empty array when none was (unnest pads with nulls). */
function startsOf(outcomes: readonly JobOutcome[]): (number | null)[] {
  return outcomes.some((o) => o.kind !== "released" && o.startedAt !== undefined) ? outcomes.map((o) => (o.kind !== "released" ? (o.startedAt ?? null) : null)) : [];
}
