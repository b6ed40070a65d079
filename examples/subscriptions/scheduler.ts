import type { Queue } from "../../src/index.js";
import type { AppDatabase } from "./database.js";
import { DUE_SUBSCRIPTIONS } from "./sql.js";

/** What a payment job carries: enough to charge without reading the subscription first. */
export interface PaymentPayload {
  subscriptionId: string;
  payer: string;
  amountCents: number;
  /** The due date this payment settles, epoch milliseconds. */
  dueAt: number;
}

export interface ScheduleResult {
  /** Active subscriptions due now. */
  due: number;
  /** Jobs created by this run. */
  enqueued: number;
  /** Due subscriptions whose payment job already existed (an earlier run, another process). */
  alreadyQueued: number;
}

/** One job per subscription and due date: the same payment can never be queued twice. */
export function paymentKey(subscriptionId: string, dueAt: number): string {
  return `${subscriptionId}:${new Date(dueAt).toISOString()}`;
}

const PAGE = 500;

/**
 * Seed 004's "scheduler": every active subscription due at `now` becomes a job on the payments
 * queue. The key makes it safe to run as often as you like, from any number of processes: a
 * payment whose job is pending or running is skipped (the seed's `skipDuplicates`), and one that
 * succeeded has already moved its subscription's due date forward.
 *
 * A plain function of (database, queue, time), so a periodic task can run it as it is:
 * `tw.task("schedule-payments", { every: "1m", run: () => scheduleDuePayments({ db, payments, now: tw.clock.now() }) })`.
 */
export async function scheduleDuePayments(params: { db: AppDatabase; payments: Queue<PaymentPayload>; now: number }): Promise<ScheduleResult> {
  const { db, payments, now } = params;
  const result: ScheduleResult = { due: 0, enqueued: 0, alreadyQueued: 0 };
  // Keyset pagination: the subscriptions' due dates move while we page (jobs may run meanwhile),
  // and an offset would then skip rows; (next_due_at, id) after the last row seen does not.
  let after: { dueAt: number; id: string } = { dueAt: Number.MIN_SAFE_INTEGER, id: "" };
  for (;;) {
    const rows = await db.query<{ id: string; payer: string; amount_cents: number | string; next_due_at: number | string }>(DUE_SUBSCRIPTIONS, [
      now,
      after.dueAt,
      after.id,
      PAGE,
    ]);
    if (rows.length === 0) break;
    const items = rows.map((r) => {
      const payload: PaymentPayload = { subscriptionId: r.id, payer: r.payer, amountCents: Number(r.amount_cents), dueAt: Number(r.next_due_at) };
      return { payload, key: paymentKey(payload.subscriptionId, payload.dueAt) };
    });
    const jobs = await payments.enqueueMany(items);
    result.due += jobs.length;
    for (const job of jobs) {
      if (job.duplicate) result.alreadyQueued++;
      else result.enqueued++;
    }
    const last = items.at(-1)!.payload;
    after = { dueAt: last.dueAt, id: last.subscriptionId };
    if (rows.length < PAGE) break;
  }
  return result;
}
