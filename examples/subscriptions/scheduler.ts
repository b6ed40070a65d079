import { toMs, type BatchJobs, type Tickwork } from "../../src/index.js";
import type { AppDatabase } from "./database.js";
import { DUE_SUBSCRIPTIONS, claimPayments } from "./sql.js";

/** The queue whose jobs charge one payment each. */
export const PAYMENTS_QUEUE = "payments";
/** The queue of each run's summary job, which runs once every charge of its run finished. */
export const RUNS_QUEUE = "payment-runs";

/** What a payment job carries: enough to charge without reading the subscription first. */
export interface PaymentPayload {
  subscriptionId: string;
  payer: string;
  amountCents: number;
  /** The due date this payment settles, epoch milliseconds. */
  dueAt: number;
}

/** What a run's summary job carries. */
export interface RunPayload {
  startedAt: number;
}

export interface ScheduleResult {
  /** Active subscriptions due now. */
  due: number;
  /** Payments this run queued. */
  enqueued: number;
  /** Due payments already queued by an earlier run, another process or "charge now". */
  alreadyQueued: number;
}

/** A run's counts, and the batch it wrote (null when it queued nothing). */
export type ScheduledRun = ScheduleResult & { batch: BatchJobs | null };

/** One identity per subscription and due date: the provider's idempotency key for that payment. */
export function paymentKey(subscriptionId: string, dueAt: number): string {
  return `${subscriptionId}:${new Date(dueAt).toISOString()}`;
}

const PAGE = 500;
/**
 * A run charges at most this many payments: one batch holds at most 99,999 jobs, and one summary
 * reads every child's result. Payments past it stay due, and the next run takes them.
 */
export const RUN_LIMIT = 50_000;
/**
 * A claim this old, for a subscription still due, is taken again: its run died between the claim
 * and the batch (or an operator cancelled its job). Longer than a payment's retries (1+2+4+8+16
 * minutes); a job still alive past it cannot charge twice, as the provider's key is the payment's.
 */
export const CLAIM_STALE = toMs("2h");

/**
 * Seed 004's "scheduler": the active subscriptions due at `now` become one batch of payment jobs,
 * with one summary job (`RUNS_QUEUE`) that runs once every charge finished, failed ones included,
 * and records the run's totals. Jobs of a batch take no dedupe key, so each payment is claimed in
 * the example's own table first (`payment_claims`): running it twice, or from two processes at
 * once, queues each payment once (the seed's `skipDuplicates`). A payment that succeeded has moved
 * its subscription's due date on, so it is not due again.
 */
export async function scheduleDuePayments(params: { db: AppDatabase; tw: Tickwork; now: number }): Promise<ScheduledRun> {
  const { db, tw, now } = params;
  const result: ScheduleResult = { due: 0, enqueued: 0, alreadyQueued: 0 };
  const claimed: PaymentPayload[] = [];
  // Keyset pagination: the subscriptions' due dates move while we page (jobs may run meanwhile),
  // and an offset would then skip rows; (next_due_at, id) after the last row seen does not.
  let after: { dueAt: number; id: string } = { dueAt: Number.MIN_SAFE_INTEGER, id: "" };
  while (claimed.length < RUN_LIMIT) {
    const limit = Math.min(PAGE, RUN_LIMIT - claimed.length);
    const rows = await db.query<{ id: string; payer: string; amount_cents: number | string; next_due_at: number | string }>(DUE_SUBSCRIPTIONS, [
      now,
      after.dueAt,
      after.id,
      limit,
    ]);
    if (rows.length === 0) break;
    const page = rows.map((r): PaymentPayload => ({ subscriptionId: r.id, payer: r.payer, amountCents: Number(r.amount_cents), dueAt: Number(r.next_due_at) }));
    const taken = await db.query<{ subscription_id: string; due_at: number | string }>(claimPayments(page.length), [
      now,
      now - CLAIM_STALE,
      ...page.flatMap((p) => [p.subscriptionId, p.dueAt]),
    ]);
    const mine = new Set(taken.map((t) => paymentKey(t.subscription_id, Number(t.due_at))));
    const ours = page.filter((p) => mine.has(paymentKey(p.subscriptionId, p.dueAt)));
    claimed.push(...ours);
    result.due += page.length;
    result.enqueued += ours.length;
    result.alreadyQueued += page.length - ours.length;
    const last = page.at(-1)!;
    after = { dueAt: last.dueAt, id: last.subscriptionId };
    if (rows.length < limit) break;
  }
  if (claimed.length === 0) return { ...result, batch: null };
  // One transaction writes every payment job and the summary job, or none of them. A crash before
  // it leaves claims without jobs, which the first run after CLAIM_STALE takes again.
  const payload: RunPayload = { startedAt: now };
  const batch = await tw.batch(claimed, { queue: PAYMENTS_QUEUE, onComplete: { queue: RUNS_QUEUE, payload } });
  return { ...result, batch };
}
