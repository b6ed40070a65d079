import type { AppDatabase } from "./database.js";
import { CANCEL_SUBSCRIPTION, COUNT_DUE, COUNT_SUBSCRIPTIONS, GET_SUBSCRIPTION, INSERT_SUBSCRIPTION, LIST_PAYMENTS, LIST_SUBSCRIPTIONS } from "./sql.js";

export type BillingInterval = "daily" | "weekly" | "monthly" | "yearly";
export type SubscriptionStatus = "ACTIVE" | "CANCELLED" | "PAST_DUE";

export interface Subscription {
  id: string;
  payer: string;
  amountCents: number;
  status: SubscriptionStatus;
  interval: BillingInterval;
  /** Epoch milliseconds. */
  nextDueAt: number;
  lastError: string | null;
}

export interface Payment {
  chargeId: string;
  subscriptionId: string;
  dueAt: number;
  amountCents: number;
  jobId: string;
  attempt: number;
  paidAt: number;
}

/**
 * The due date after `dueAt`, in UTC. Months and years keep the day of the month where it exists
 * and take the month's last day where it does not (31 January, then 28 or 29 February).
 */
export function nextDueDate(dueAt: number, interval: BillingInterval): number {
  const d = new Date(dueAt);
  switch (interval) {
    case "daily":
      return dueAt + 86_400_000;
    case "weekly":
      return dueAt + 7 * 86_400_000;
    case "monthly":
      return addMonths(d, 1);
    case "yearly":
      return addMonths(d, 12);
  }
}

function addMonths(d: Date, months: number): number {
  const target = new Date(d.getTime());
  target.setUTCDate(1);
  target.setUTCMonth(target.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d.getUTCDate(), lastDay));
  return target.getTime();
}

export type NewSubscription = Omit<Subscription, "status" | "lastError"> & { status?: SubscriptionStatus };

export async function insertSubscriptions(db: AppDatabase, subscriptions: readonly NewSubscription[]): Promise<void> {
  await db.transaction(
    subscriptions.map((s) => ({ sql: INSERT_SUBSCRIPTION, params: [s.id, s.payer, s.amountCents, s.status ?? "ACTIVE", s.interval, s.nextDueAt] })),
  );
}

/** A payment job already queued for it finds it cancelled and charges nothing. */
export async function cancelSubscription(db: AppDatabase, id: string): Promise<void> {
  await db.query(CANCEL_SUBSCRIPTION, [id]);
}

interface SubscriptionRow {
  id: string;
  payer: string;
  amount_cents: number | string;
  status: SubscriptionStatus;
  billing_interval: BillingInterval;
  next_due_at: number | string;
  last_error: string | null;
}

// PostgreSQL returns BIGINT as a string (it may not fit a JS number); these values always do.
const toSubscription = (r: SubscriptionRow): Subscription => ({
  id: r.id,
  payer: r.payer,
  amountCents: Number(r.amount_cents),
  status: r.status,
  interval: r.billing_interval,
  nextDueAt: Number(r.next_due_at),
  lastError: r.last_error,
});

export async function getSubscription(db: AppDatabase, id: string): Promise<Subscription | null> {
  const [row] = await db.query<SubscriptionRow>(GET_SUBSCRIPTION, [id]);
  return row ? toSubscription(row) : null;
}

export async function listSubscriptions(db: AppDatabase): Promise<Subscription[]> {
  return (await db.query<SubscriptionRow>(LIST_SUBSCRIPTIONS)).map(toSubscription);
}

export async function countSubscriptions(db: AppDatabase): Promise<number> {
  const [row] = await db.query<{ n: number | string }>(COUNT_SUBSCRIPTIONS);
  return Number(row?.n ?? 0);
}

/** Active subscriptions due at or before `at`. */
export async function countDue(db: AppDatabase, at: number): Promise<number> {
  const [row] = await db.query<{ n: number | string }>(COUNT_DUE, [at]);
  return Number(row?.n ?? 0);
}

export async function listPayments(db: AppDatabase): Promise<Payment[]> {
  const rows = await db.query<{ charge_id: string; subscription_id: string; due_at: number | string; amount_cents: number | string; job_id: string; attempt: number | string; paid_at: number | string }>(LIST_PAYMENTS);
  return rows.map((r) => ({
    chargeId: r.charge_id,
    subscriptionId: r.subscription_id,
    dueAt: Number(r.due_at),
    amountCents: Number(r.amount_cents),
    jobId: r.job_id,
    attempt: Number(r.attempt),
    paidAt: Number(r.paid_at),
  }));
}
