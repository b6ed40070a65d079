import type { NewJobRow, InsertClaim, InsertResult } from "../store.js";
import type { Job } from "../../job.js";
import { newJob, toJob, type JobRow } from "../rows.js";
import type { Handed } from "./notify.js";
import { packPayloads } from "./params.js";
import { FIND_KEY_HOLDERS, INSERTS } from "./sql.js";

/** A row an insert answers: a job (with the worker it was handed to, if any), or a slot it took (id null). */
export type Answered = { id: string | null; key: string | null; handedTo?: string | null; leaseUntil?: string | null; maxAttempts?: number; slot?: string | null };

/** Runs a statement on the pool or on a transaction's connection. */
export type Run = <T>(sql: string, params: unknown[]) => Promise<T[]>;

/** Rounds of an insert whose key's holder keeps ending before it is read: a race lost this often is no race. */
const MAX_INSERT_TRIES = 5;

export interface InsertStatement {
  run: Run;
  queue: string;
  rows: NewJobRow[];
  now: number;
  /** The rows are handed to this worker, running under its lease (an in-process hand-off). */
  claim?: InsertClaim;
  /**
   * How the queue's workers hear of the rows: a NOTIFY in the statement (it fires when a caller's
   * transaction commits), none, or `announce` once the statement committed.
   */
  notify: "inline" | "none" | "after-commit";
  /** Offers of this worker are passed over (see INSERTS.offered). */
  passOver?: string;
  tries?: number;
  /** An `after-commit` insert's rows handed to other processes' workers, and every row it answered. */
  announce: (handed: Handed[], answered: Answered[]) => void;
}

/**
 * One insert statement. `notify`: in the statement (it fires when it commits, for a caller's
 * transaction), none, or once it committed (see QueueAnnouncer).
 */
export async function insertRows(insert: InsertStatement): Promise<InsertResult[]> {
  const { run, queue, rows, now, claim, notify, passOver = "", tries = 1, announce } = insert;
  const payloads = packPayloads(rows);
  // Due rows of no group may go to other processes' idle workers (see insertOffered); a row of a
  // group stays pending, for the claims that know which groups are paused or full.
  const offered = !claim && notify === "after-commit" && rows.every((r) => r.runAt <= now && !r.group);
  const traced = rows.some((r) => r.traceContext !== undefined);
  const statements = traced ? INSERTS.traced : INSERTS.untraced;
  const statement = claim ? statements.claimed : offered ? statements.offered : notify === "inline" ? statements.notify : statements.quiet;
  const params = statement.bind({
    queue,
    payloads: payloads.bytes,
    now,
    offsets: payloads.offsets,
    lengths: payloads.lengths,
    keys: rows.map((r) => r.key),
    priorities: rows.map((r) => r.priority),
    runAts: rows.map((r) => r.runAt),
    maxAttempts: rows.map((r) => r.maxAttempts),
    fromQueue: rows.map((r) => r.maxAttemptsFromQueue ?? false),
    groups: rows.some((r) => r.group) ? rows.map((r) => r.group ?? null) : [],
    waited: rows.some((r) => r.waited) ? rows.map((r) => r.waited ?? false) : [],
    workerId: claim?.workerId,
    leaseUntil: claim?.leaseUntil,
    rows: rows.length,
    passOver,
    traces: traced ? rows.map((r) => r.traceContext ?? null) : undefined,
  });
  const answered = await run<Answered>(statement.sql, params);
  const inserted = offered ? answered.filter((r): r is Answered & { id: string } => r.id !== null) : (answered as (Answered & { id: string })[]);
  const handed: Handed[] = [];
  // RETURNING yields inserted rows in insertion order (the ORDER BY ord above). A keyed row that
  // is missing lost to a live job, or to an earlier row of this same batch.
  const results: (InsertResult | undefined)[] = new Array(rows.length);
  const byKey = new Map<string, string>();
  let next = 0;
  const missing: string[] = [];
  rows.forEach((row, i) => {
    const candidate = inserted[next];
    if (candidate && candidate.key === row.key && (row.key === null || !byKey.has(row.key))) {
      next++;
      if (row.key !== null) byKey.set(row.key, candidate.id);
      if (candidate.handedTo) {
        const handedTo = { workerId: candidate.handedTo, leaseUntil: Number(candidate.leaseUntil), maxAttempts: candidate.maxAttempts! };
        results[i] = { id: candidate.id, duplicate: false, handedTo };
        handed.push({ id: candidate.id, row, ...handedTo });
      } else {
        results[i] = { id: candidate.id, duplicate: false };
      }
    } else if (row.key !== null && !byKey.has(row.key)) {
      missing.push(row.key);
    }
  });
  if (notify === "after-commit" && answered.length) announce(handed, answered);
  const holders = new Map<string, Job>();
  if (missing.length) {
    const live = await run<JobRow>(FIND_KEY_HOLDERS, [queue, missing]);
    for (const row of live) holders.set(row.key!, toJob(row, false));
  }
  // A row whose key was held at the insert by a job that ended before the read of the holders: the
  // key is free now, so the row is inserted again (or finds the next holder). Each round needs a
  // holder to end between two statements a few milliseconds apart.
  const orphans = rows.flatMap((row, i) => (results[i] || holders.has(row.key!) || byKey.has(row.key!) ? [] : [i]));
  if (orphans.length) {
    if (tries >= MAX_INSERT_TRIES) throw new Error(`tickwork: insert of key ${rows[orphans[0]!]!.key} conflicted ${tries} times with jobs that ended before they could be read`);
    const again = await insertRows({ ...insert, rows: orphans.map((i) => rows[i]!), tries: tries + 1 });
    orphans.forEach((i, n) => (results[i] = again[n]));
  }
  return rows.map((row, i) => {
    if (results[i]) return results[i];
    const holder = holders.get(row.key!);
    if (holder) return { id: holder.id, duplicate: true, existing: holder };
    const sameBatch = byKey.get(row.key!)!;
    const first = rows[firstIndexOfKey(rows, row.key!)]!;
    return { id: sameBatch, duplicate: true, existing: newJob(sameBatch, queue, first, now, false, JSON.parse(first.payload)) };
  });
}

function firstIndexOfKey(rows: NewJobRow[], key: string): number {
  return rows.findIndex((r) => r.key === key);
}

