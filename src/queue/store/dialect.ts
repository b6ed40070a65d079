import type { SqlStatement } from "../../db/sql-db.js";
import { inlinePayload, jobColumns, payloadWrite } from "./payloads.js";

/**
 * What differs between the queue's statements on PostgreSQL and on SQLite. The statements written
 * once over `SqlDb` (flow control, keyed enqueues, the admin operations) ask this object for the
 * pieces that differ, never which database they run on.
 */
export interface QueueDialect {
  /** SQLite keeps payloads, results and progress as JSON text; PostgreSQL's json columns arrive parsed. */
  readonly payloadIsText: boolean;
  /** Every column of a whole job row in a SELECT from `table` (an alias, or `tickwork_jobs`), its payload wherever it is kept. */
  jobColumns(table?: string): string;
  /** Every column of a whole job row in a RETURNING clause. */
  readonly returnedJob: string;
  /** What a job row's payload column holds for `payload` (JSON text). */
  rowPayload(payload: string): string;
  /** A long payload is kept out of its job's row, in `tickwork_job_payloads` (see payloads.ts). */
  readonly keepsLongPayloadsApart: boolean;
  /** The statement that keeps a long payload beside the row just written (`id`), if the dialect keeps it out of the row. */
  payloadWrite(id: number | string, payload: string): SqlStatement | undefined;
  /** A job id as the dialect binds it. */
  id(id: string): string | number;
  /** A JSON value as a statement's parameter `$n` writes it to a json column. */
  json(param: string): string;
  /** The earlier of two times. */
  least(a: string, b: string): string;
  /**
   * `run_at` in a claim's filter. On SQLite `+run_at` keeps run_at out of the index search, so a claim
   * walks its index in claim order and stops at LIMIT instead of searching run_at across priorities
   * and sorting every due job.
   */
  readonly dueRunAt: string;
  /** A list parameter `$param`: PostgreSQL binds an array; SQLite one JSON text (a Durable Object binds at most 100 values). */
  inList(param: number, values: readonly (string | number)[], type: "text" | "bigint"): { sql: string; value: unknown };
  /**
   * The rows whose ids a subquery chooses. On PostgreSQL `= ANY(ARRAY(...))` keeps the lookup on the
   * primary key (the planner may otherwise walk the claim index beside status = 'pending').
   */
  idsChosenBy(subquery: string): string;
  /**
   * The ids in `$param` as an UPDATE's FROM and WHERE. PostgreSQL joins them (beside status =
   * 'pending' the planner may walk the queue's whole claim index for `= ANY($1)`: 4.5 ms for 8 ids
   * among 20,000 pending rows, against 0.04 ms joined).
   */
  pickedIds(param: number, ids: readonly string[]): { from: string; where: string; value: unknown };
  /**
   * The statement a claim under shared limits starts with, so that every later statement of it reads
   * what the claims before it committed; null where the transaction's write lock does that already.
   */
  lockQueue(queue: string): SqlStatement | null;
  /**
   * Rows a transaction reads in order to write them are locked as they are read (FOR UPDATE, in a
   * fixed order so two transactions never deadlock). SQLite's write lock holds the whole file instead.
   */
  readonly locksRows: boolean;
  /** A statement binds arrays, so a batch of rows is one statement; otherwise a statement per row or a JSON text. */
  readonly bindsArrays: boolean;
  /**
   * The grouped claim and the holding of a queue's slots run as functions inside the database, so
   * the queue's lock is held only while the server runs them; otherwise as statements in one
   * transaction, under the write lock.
   */
  readonly runsClaimFunctions: boolean;
}

export const POSTGRES_DIALECT: QueueDialect = {
  payloadIsText: false,
  jobColumns: (table = "tickwork_jobs") => jobColumns(true, { table }),
  returnedJob: "tickwork_jobs.*",
  rowPayload: (payload) => payload,
  keepsLongPayloadsApart: false,
  payloadWrite: () => undefined,
  id: (id) => id,
  json: (param) => `${param}::json`,
  least: (a, b) => `LEAST(${a}, ${b})`,
  dueRunAt: "run_at",
  inList: (param, values, type) => ({ sql: `= ANY($${param}::${type}[])`, value: values }),
  idsChosenBy: (subquery) => `id = ANY(ARRAY(${subquery}))`,
  pickedIds: (param, ids) => ({ from: `FROM unnest($${param}::bigint[]) AS picked(id)`, where: "tickwork_jobs.id = picked.id", value: ids }),
  // Advisory locks are the database's, not a schema's: each key starts with the schema, so tickworks in
  // other schemas of the database (with queues of the same names) never wait on it.
  lockQueue: (queue) => ({ sql: `SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || '/' || $1, 0))`, params: [`tickwork_jobs/${queue}`] }),
  locksRows: true,
  bindsArrays: true,
  runsClaimFunctions: true,
};

/** A list parameter on SQLite: one JSON text, read by json_each. */
function sqliteList(param: number, values: readonly (string | number)[], type: "text" | "bigint"): { sql: string; value: unknown } {
  return { sql: `IN (SELECT value FROM json_each($${param}))`, value: JSON.stringify(type === "bigint" ? values.map(Number) : values) };
}

export const SQLITE_DIALECT: QueueDialect = {
  payloadIsText: true,
  jobColumns: (table = "tickwork_jobs") => jobColumns(false, { table }),
  returnedJob: jobColumns(false, { returning: true }),
  rowPayload: inlinePayload,
  keepsLongPayloadsApart: true,
  payloadWrite,
  id: Number,
  json: (param) => param,
  least: (a, b) => `min(${a}, ${b})`,
  dueRunAt: "+run_at",
  inList: sqliteList,
  idsChosenBy: (subquery) => `id IN (${subquery})`,
  pickedIds: (param, ids) => {
    const list = sqliteList(param, ids, "bigint");
    return { from: "", where: `id ${list.sql}`, value: list.value };
  },
  lockQueue: () => null,
  locksRows: false,
  bindsArrays: false,
  runsClaimFunctions: false,
};
