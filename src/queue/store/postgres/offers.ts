import type { PgExecutor } from "../../../db/pg-executor.js";
import { claimedColumns, toJob, type JobRow } from "../rows.js";
import type { Job } from "../../job.js";
import type { SlotOffers } from "../store.js";

/**
 * Offers slots $3 of a worker until $4: each slot never offered, or taken and heard of, is offered
 * (again). With $7 (the worker was busy, and its count of what it offers may have drifted) every
 * other slot of the worker is withdrawn, and slots of workers long gone ($8: lapsed before it) deleted.
 */
const OFFER = `
  WITH others AS (
    UPDATE tickwork_offers SET until = 0 WHERE $7 AND queue = $1 AND worker_id = $2 AND NOT slot = ANY($3::bigint[]) AND until > 0
  ), gone AS (
    DELETE FROM tickwork_offers WHERE $7 AND queue = $1 AND worker_id <> $2 AND until < $8
  )
  INSERT INTO tickwork_offers (queue, worker_id, slot, until, lease_ms, max_attempts)
  SELECT $1, $2, s, $4, $5, $6 FROM unnest($3::bigint[]) AS s
  ON CONFLICT (queue, worker_id, slot) DO UPDATE SET until = excluded.until`;

/**
 * The ids of the jobs handed to worker $2 of queue $1 and not started yet: written running at their
 * enqueue, not started (its prefetched claims answer too; the worker passes over the jobs it holds).
 */
const HANDED_IDS = `
  SELECT id::text AS id FROM tickwork_jobs
  WHERE worker_id = $2 AND status = 'running' AND queue = $1 AND started_at IS NULL`;

/**
 * Renews slots $3 of a worker to $4, passing over those taken meanwhile (until 0), and answers the
 * jobs handed to it: a hand-off whose notification was lost (the listening connection dropped) is
 * found here.
 */
const RENEW = `
  WITH renewed AS (UPDATE tickwork_offers SET until = $4 WHERE queue = $1 AND worker_id = $2 AND slot = ANY($3::bigint[]) AND until > 0)
  ${HANDED_IDS}`;

/** A slot's row outlives its worker by this much at most: the next worker of the queue to open an offer deletes it. */
const STALE_MS = 10 * 60_000;

/** Withdraws every slot of a worker and answers the jobs handed to it, in one statement: once it is back, no more can be. */
const WITHDRAW = `
  WITH withdrawn AS (DELETE FROM tickwork_offers WHERE queue = $1 AND worker_id = $2)
  ${HANDED_IDS}`;

/** Jobs handed to a worker, by id: only those still running under its id (not ended, not rescued). */
const HANDED = `
  SELECT ${claimedColumns("postgres")} FROM tickwork_jobs
  WHERE id = ANY(ARRAY(SELECT unnest($1::bigint[]))) AND worker_id = $2 AND status = 'running'`;

/** Idle workers' offers of their free slots to other processes' enqueues, on PostgreSQL (see insertOffered). */
export class PostgresSlotOffers implements SlotOffers {
  constructor(private readonly db: PgExecutor) {}

  async offer({ queue, workerId, slots, until, leaseMs, maxAttempts, instead }: Parameters<SlotOffers["offer"]>[0]): Promise<void> {
    await this.db.query(OFFER, [queue, workerId, `{${slots.join(",")}}`, until, leaseMs, maxAttempts, instead, until - STALE_MS]);
  }

  async renew({ queue, workerId, slots, until }: Parameters<SlotOffers["renew"]>[0]): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(RENEW, [queue, workerId, `{${slots.join(",")}}`, until]);
    return rows.map((r) => r.id);
  }

  async withdraw({ queue, workerId }: Parameters<SlotOffers["withdraw"]>[0]): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(WITHDRAW, [queue, workerId]);
    return rows.map((r) => r.id);
  }

  async handed({ ids, workerId }: Parameters<SlotOffers["handed"]>[0]): Promise<Job[]> {
    if (ids.length === 0) return [];
    // Planned each time, as the other reads of a batch by id (see REPLAN in settle.ts).
    const rows = await this.db.query<JobRow>(HANDED, [`{${ids.join(",")}}`, workerId], { replan: true });
    return rows.map((row) => toJob(row, false));
  }
}
