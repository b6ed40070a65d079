import type { PgExecutor } from "../../../db/pg-executor.js";
import { QueueAnnouncer } from "./announcer.js";
import { POSTGRES_DIALECT } from "../dialect.js";
import { SharedQueueStore } from "../shared-store.js";
import { LEASE_EXPIRED_ERROR, byClaimOrder, foldCounts, toJob, type JobRow } from "../rows.js";
import { propagate, type FlowEffects } from "../flow-tree.js";
import { retryEachGroup, retryGroups, retryInFlow } from "../flow-retry.js";
import { PostgresSlotOffers } from "./offers.js";
import { HANDOFFS_CHANNEL, JOBS_CHANNEL, JOB_EVENTS_CHANNEL, NOTIFY, handoffPayload, pausePayload, type Handed, type ListenerQuery } from "./notify.js";
import { arrayLiteral } from "./params.js";
import { insertRows, type Answered, type InsertStatement, type Run } from "./insert.js";
import { REPLAN, countInParents, settleOutcomes } from "./settle.js";
import {
  CLAIM_DUE, COUNT_SCHEDULED, HEARTBEAT, INSERT_FLOW_NODES, INSERT_FLOW_NODES_TRACED, KEY_FREE, MARK_STARTED,
  NEXT_WAKE, PRUNE_FINISHED, RESCUE_EXPIRED, RETRY, RETRY_SET,
} from "./sql.js";
import type { InsertResult, QueueStore, RescuedJob, SettleResult, SlotOffers } from "../store.js";
import type { Job, JobStatus } from "../../job.js";

/** A notification's payload is at most 8,000 bytes: ids go in chunks well within it. */
const IDS_PER_NOTIFY = 500;

/**
 * Payload text per statement of a sliced insert (see insertSliced): small enough that a batch of
 * 2 KB payloads goes in several slices, each serialised while the last is written, and large enough
 * that a batch of small payloads goes as one statement (a statement's fixed cost is about 0.1 ms).
 */
const SLICE_CHARS = 128 * 1024;

/** The queue on PostgreSQL: one round trip per batch, `FOR UPDATE SKIP LOCKED` so workers never wait on each other. */
export class PostgresQueueStore extends SharedQueueStore implements QueueStore {
  /** Wakes other processes' workers after an enqueue outside a caller's transaction committed. */
  private readonly announcer = new QueueAnnouncer((queue) => this.sendAnnouncement(queue));
  private listener: ListenerQuery | null = null;
  readonly offers: SlotOffers;

  constructor(private readonly db: PgExecutor) {
    super(db, POSTGRES_DIALECT, RETRY, { queues: (queues) => this.notify(queues), jobs: (ids) => this.notifyJobs(ids) });
    this.offers = new PostgresSlotOffers(db);
  }

  insertMany({ queue, rows, now, tx, claim, passOver }: Parameters<QueueStore["insertMany"]>[0]): Promise<InsertResult[]> {
    // Inside a caller's transaction the notify must be part of it (it fires at their commit).
    if (tx) return this.insertRows(async (sql, params) => (await tx.query(sql, params)).rows as never[], { queue, rows, now, notify: "inline" });
    // A hand-off is running here already: nobody else is to be woken.
    if (claim) return this.insertRows(this.db.query.bind(this.db), { queue, rows, now, claim, notify: "none" });
    // Notified after the commit rather than in the insert: see NOTIFY.
    return this.insertRows(this.db.query.bind(this.db), { queue, rows, now, notify: "after-commit", passOver });
  }

  async insertSliced({ queue, rows, now }: Parameters<NonNullable<QueueStore["insertSliced"]>>[0]): Promise<InsertResult[]> {
    const first = rows.next(SLICE_CHARS);
    // Rows that fit one slice go as one statement, with no transaction around it.
    if (first.length === rows.count) return this.insertMany({ queue, rows: first, now });
    return this.db.overlapped(async (query) => {
      const results: InsertResult[] = [];
      // The first slice's notify fires at the commit, for all of them.
      const sent = [this.insertRows(query, { queue, rows: first, now, notify: "inline" })];
      try {
        for (let slice = rows.next(SLICE_CHARS); slice.length; slice = rows.next(SLICE_CHARS)) {
          // Serialised while the slice before it was being written, and queued on the connection
          // behind it: the driver sends it the moment the server is done with the one before.
          sent.push(this.insertRows(query, { queue, rows: slice, now, notify: "none" }));
          results.push(...(await sent[sent.length - 2]!));
        }
        results.push(...(await sent[sent.length - 1]!));
        return results;
      } catch (error) {
        // Once one failed, those after it fail too (the transaction is aborted): nobody awaits them.
        for (const statement of sent) statement.catch(() => {});
        throw error;
      }
    });
  }

  /** One insert statement (see insertRows); `after-commit` inserts announce their rows once committed. */
  private insertRows(run: Run, options: Omit<InsertStatement, "run" | "announce">): Promise<InsertResult[]> {
    return insertRows({ ...options, run, announce: (handed, answered) => this.announce(options.queue, options.now, handed, answered) });
  }

  /**
   * Once an insert committed: each worker handed some of its rows is sent them (see handoffPayload),
   * and the workers of every process are woken for the rest (see QueueAnnouncer). A hand-off's
   * notification, like the announcement, goes without waiting for the WAL flush; lost, its jobs wait
   * for their worker's next renewal of its offer, which finds them.
   */
  private announce(queue: string, now: number, handed: Handed[], answered: Answered[]): void {
    const byWorker = new Map<string, { jobs: Handed[]; slots: string[] }>();
    const of = (workerId: string) => byWorker.get(workerId) ?? byWorker.set(workerId, { jobs: [], slots: [] }).get(workerId)!;
    for (const job of handed) of(job.workerId).jobs.push(job);
    for (const row of answered) if (row.id === null && row.handedTo) of(row.handedTo).slots.push(row.slot!);
    for (const [workerId, { jobs, slots }] of byWorker) {
      this.db.query(NOTIFY, [HANDOFFS_CHANNEL, handoffPayload(queue, workerId, now, jobs, slots)]).catch(() => {});
    }
    if (answered.some((row) => row.id !== null && !row.handedTo)) this.announcer.announce(queue);
  }

  async claimDue({ queue, limit, now, leaseUntil, workerId, queueMaxAttempts, start = limit }: Parameters<QueueStore["claimDue"]>[0]): Promise<Job[]> {
    const rows = await this.db.query<JobRow>(CLAIM_DUE, [queue, now, limit, workerId, leaseUntil, queueMaxAttempts ?? null, start], REPLAN);
    return rows.map((row) => toJob(row, false)).sort(byClaimOrder);
  }

  override async setPaused(params: Parameters<QueueStore["setPaused"]>[0]) {
    const changed = await this.flow.setPaused(params);
    // Every process's idle workers look again: a resumed queue's jobs wait for no poll. A pause is
    // heard by every process's worker, which hands back the jobs it prefetched and starts none until
    // a resume (see QueueWorker.pausedHere), instead of running its prefetched batch out first.
    if (changed && !params.paused) await this.notify([params.queue]);
    if (changed && params.paused) await this.db.query(NOTIFY, [JOBS_CHANNEL, pausePayload(params.queue, params.group)]);
    return changed;
  }

  async settleMany({ workerId, outcomes, now }: Parameters<QueueStore["settleMany"]>[0]): Promise<SettleResult> {
    const { applied, woke, failedWaited } = await settleOutcomes(this.db, workerId, outcomes, now);
    if (woke) await this.notify(woke);
    await this.notifyJobs([...applied.filter((r) => r.waited && (r.status === "succeeded" || r.status === "failed")).map((r) => r.id), ...failedWaited]);
    const done = new Set(applied.map((r) => r.id));
    return { refused: outcomes.map((o) => o.id).filter((id) => !done.has(id)), ...(woke ? { woke } : {}) };
  }

  /** Signals the waiters of some awaited jobs, in every process (see subscribeJobs). */
  private async notifyJobs(ids: string[]): Promise<void> {
    for (let at = 0; at < ids.length; at += IDS_PER_NOTIFY) {
      await this.db.query(NOTIFY, [JOB_EVENTS_CHANNEL, ids.slice(at, at + IDS_PER_NOTIFY).join(",")]);
    }
  }

  async heartbeat({ workerId, ids, leaseUntil }: Parameters<QueueStore["heartbeat"]>[0]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query<{ id: string }>(HEARTBEAT, [workerId, leaseUntil, arrayLiteral(ids)], REPLAN);
    return rows.map((r) => r.id);
  }

  async markStarted({ workerId, jobs }: Parameters<QueueStore["markStarted"]>[0]): Promise<string[]> {
    if (jobs.length === 0) return [];
    const ids = arrayLiteral(jobs.map((j) => j.id));
    const rows = await this.db.query<{ id: string }>(MARK_STARTED, [ids, arrayLiteral(jobs.map((j) => j.attempt)), arrayLiteral(jobs.map((j) => j.at)), workerId, "running"], REPLAN);
    return rows.map((r) => r.id);
  }

  async rescueExpired({ queues, now, limit }: { queues: string[]; now: number; limit: number }): Promise<RescuedJob[]> {
    if (queues.length === 0) return [];
    // One transaction, so a child failed for good by its lapsed lease is counted by its parent or not failed at all.
    const { rescued, effects } = await this.db.overlapped(async (query) => {
      const rescued = await query<RescuedJob & { waited: boolean; parent: string | null }>(RESCUE_EXPIRED, [now, queues, limit, LEASE_EXPIRED_ERROR], REPLAN);
      const ended = rescued.filter((j) => j.status === "failed" && j.parent !== null).map((j) => ({ parent: j.parent!, child: j.id, failed: true, error: LEASE_EXPIRED_ERROR }));
      return { rescued, effects: await countInParents(query, ended, now) };
    });
    await this.notify([...rescued.filter((j) => j.status === "pending").map((j) => j.queue), ...effects.woke]);
    await this.notifyJobs([...rescued.filter((j) => j.waited && j.status === "failed").map((j) => j.id), ...effects.failedWaited]);
    return rescued.map(({ waited: _, parent: __, ...job }) => job);
  }

  /**
   * Sends this process's announcements on its own listening connection (null: on the pool again).
   * A session hears its own notifications with its own backend pid, so the listener can drop them:
   * the enqueue already woke this process's worker, and a second wake-up would only send it a claim
   * that finds nothing (or is in flight when the next enqueue could have handed it a job).
   */
  announceOn(listener: ListenerQuery | null): void {
    this.listener = listener;
  }

  private async sendAnnouncement(queue: string): Promise<void> {
    const listener = this.listener;
    // A listener dropping as it sends: the pool's connection carries it instead.
    if (listener) await listener(NOTIFY, [JOBS_CHANNEL, queue]).catch(() => this.notify([queue]));
    else await this.notify([queue]);
  }

  /**
   * Wakes idle workers in every process for jobs that became pending: after an enqueue (see
   * QueueAnnouncer), a rescue, a retry or a parent whose children ended.
   */
  private async notify(queues: string[]): Promise<void> {
    for (const queue of new Set(queues)) await this.db.query(NOTIFY, [JOBS_CHANNEL, queue]);
  }

  async nextWakeAt({ queues, leases = true }: { queues: string[]; leases?: boolean }): Promise<number | null> {
    if (queues.length === 0) return null;
    const [row] = await this.db.query<{ at: string | null }>(NEXT_WAKE, [queues, leases]);
    return row?.at == null ? null : Number(row.at);
  }

  async countByStatus({ queues }: { queues?: string[] }) {
    const rows = await this.db.query<{ queue: string; status: JobStatus; n: string }>(
      // Kept by the writes' triggers, a row per backend that wrote: a few rows, however many jobs there are.
      `SELECT queue, status, sum(n) AS n FROM tickwork_job_counts ${queues ? "WHERE queue = ANY($1)" : ""} GROUP BY queue, status`,
      queues ? [queues] : [],
    );
    return foldCounts(rows);
  }

  async retryFailed({ queue, now }: { queue: string; now: number }): Promise<number> {
    // Jobs outside any flow in one statement; a flow's, a parent's children at a time, each in its own
    // transaction: one refused (see retryInFlow) leaves the others retried.
    const [plain] = await this.db.query<{ n: number }>(
      `WITH r AS (UPDATE tickwork_jobs j SET ${RETRY_SET}
         WHERE j.queue = $1 AND j.status = 'failed' AND j.parent_id IS NULL AND j.children_total = 0 AND ${KEY_FREE} RETURNING 1)
       SELECT count(*)::int AS n FROM r`,
      [queue, now],
    );
    const inFlows = await this.db.query<{ id: string; parent_id: string | null }>(
      `SELECT id::text AS id, parent_id::text AS parent_id FROM tickwork_jobs WHERE queue = $1 AND status = 'failed' AND (parent_id IS NOT NULL OR children_total > 0)`,
      [queue],
    );
    const retried = (plain?.n ?? 0) + (await retryEachGroup(retryGroups(inFlows), async (ids) => (await this.db.transaction((tx) => retryInFlow(tx, RETRY, ids, now))).length));
    if (retried) await this.notify([queue]);
    return retried;
  }

  async cancelPending({ queue, now }: { queue: string; now: number }): Promise<{ cancelled: number; waited: string[] }> {
    const { cancelled, waited, effects } = await this.db.transaction(function* (tx) {
      // One statement; only the jobs someone awaits or a parent counts come back, never the whole backlog.
      const [row] = yield* tx.query<{ cancelled: number; waited: string[]; children: string[]; parents: string[] }>(
        `WITH c AS (
           UPDATE tickwork_jobs SET status = 'cancelled', finished_at = $2, worker_id = NULL, lease_until = NULL
           WHERE queue = $1 AND status = 'pending' RETURNING id, parent_id, waited)
         SELECT count(*)::int AS cancelled,
                coalesce(array_agg(id::text) FILTER (WHERE waited), '{}') AS waited,
                coalesce(array_agg(id::text) FILTER (WHERE parent_id IS NOT NULL), '{}') AS children,
                coalesce(array_agg(parent_id::text) FILTER (WHERE parent_id IS NOT NULL), '{}') AS parents
         FROM c`,
        [queue, now],
      );
      const ended = row!.children.map((child, i) => ({ parent: row!.parents[i]!, child, failed: true, error: "cancelled" }));
      const effects: FlowEffects = ended.length ? yield* propagate(tx, ended, now, true) : { woke: [], failedWaited: [] };
      return { cancelled: row!.cancelled, waited: row!.waited, effects };
    });
    await this.notify(effects.woke);
    const told = [...waited, ...effects.failedWaited];
    await this.notifyJobs(told);
    return { cancelled, waited: told };
  }

  async insertFlow({ nodes, now }: Parameters<QueueStore["insertFlow"]>[0]): Promise<string[]> {
    const ids = await this.db.transaction(function* (tx) {
      const ids: string[] = new Array(nodes.length);
      // Nodes come parents first, each parent's children side by side: one statement per parent.
      for (let at = 0; at < nodes.length; ) {
        const parent = nodes[at]!.parent;
        let end = at + 1;
        while (end < nodes.length && nodes[end]!.parent === parent && parent >= 0) end++;
        const slice = nodes.slice(at, end);
        const traced = slice.some((n) => n.traceContext !== undefined);
        const rows = yield* tx.query<{ id: string }>(traced ? INSERT_FLOW_NODES_TRACED : INSERT_FLOW_NODES, [
          now, parent < 0 ? null : ids[parent],
          slice.map((n) => n.queue), slice.map((n) => n.payload), slice.map((n) => n.key), slice.map((n) => n.priority), slice.map((n) => n.runAt),
          slice.map((n) => n.maxAttempts), slice.map((n) => n.maxAttemptsFromQueue ?? false), slice.map((n) => n.group ?? null), slice.map((n) => n.waited ?? false),
          slice.map((n) => n.children), slice.map((n) => n.childFailure), ...(traced ? [slice.map((n) => n.traceContext ?? null)] : []),
        ]);
        rows.forEach((row, i) => (ids[at + i] = row.id));
        at = end;
      }
      return ids;
    });
    await this.notify(nodes.filter((n) => n.children === 0 && n.runAt <= now).map((n) => n.queue));
    return ids;
  }

  async countScheduled({ queues, now }: { queues: string[]; now: number }): Promise<Record<string, number>> {
    if (queues.length === 0) return {};
    const rows = await this.db.query<{ queue: string; n: string }>(COUNT_SCHEDULED, [queues, now]);
    return Object.fromEntries(rows.filter((r) => Number(r.n) > 0).map((r) => [r.queue, Number(r.n)]));
  }

  async compactCounts(): Promise<number> {
    // A backend that is gone never adds to its counters again: they are folded into shard 0. The
    // DELETE locks each row it folds, so two processes compacting at once fold every row once.
    const [{ n: folded }] = (await this.db.query<{ n: string }>(
      `WITH gone AS (
         DELETE FROM tickwork_job_counts WHERE shard <> 0 AND shard NOT IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL)
         RETURNING queue, status, n
       ), folded AS (
         INSERT INTO tickwork_job_counts AS c (queue, status, shard, n)
         SELECT queue, status, 0, sum(n) FROM gone GROUP BY queue, status ORDER BY queue, status
         ON CONFLICT (queue, status, shard) DO UPDATE SET n = c.n + excluded.n
       )
       SELECT count(*) AS n FROM gone`,
    )) as [{ n: string }];
    const emptied = await this.db.query(`DELETE FROM tickwork_job_counts WHERE shard = 0 AND n = 0 RETURNING 1`);
    return Number(folded) + emptied.length;
  }

  async pruneFinished({ status, before, limit }: Parameters<QueueStore["pruneFinished"]>[0]): Promise<number> {
    const rows = await this.db.query<{ id: string }>(PRUNE_FINISHED, [status, before, limit], REPLAN);
    return rows.length;
  }
}
