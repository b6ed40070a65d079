import { PermanentJobError, RetryAfterError, type JobContext, type JobHandler, type Job } from "../../src/index.js";
import type { AppDatabase } from "./database.js";
import { paymentKey, type PaymentPayload } from "./scheduler.js";
import { ADVANCE_DUE_DATE, INSERT_PAYMENT, MARK_PAST_DUE } from "./sql.js";
import { getSubscription, nextDueDate } from "./subscriptions.js";

/** What the processor did with one attempt, for whoever wants to print or count it. */
export type PaymentEvent =
  | { type: "charged"; jobId: string; subscriptionId: string; attempt: number; chargeId: string; amountCents: number; replayed: boolean; nextDueAt: number }
  | { type: "skipped"; jobId: string; subscriptionId: string; reason: string }
  | { type: "attempt_failed"; jobId: string; subscriptionId: string; attempt: number; maxAttempts: number; reason: string; permanent: boolean }
  | { type: "past_due"; jobId: string; subscriptionId: string; reason: string };

export interface PaymentProcessorDeps {
  db: AppDatabase;
  /** Base URL of the payment provider, e.g. the fake server's `http://127.0.0.1:PORT`. */
  paymentsUrl: string;
  /** The engine's clock, so a fake clock dates payments in tests. */
  now: () => number;
  onEvent?: (event: PaymentEvent) => void;
}

/**
 * What a payment job returns (its `job.result`): what a caller awaiting it (the admin's "charge
 * now") answers with, and what a run's summary job adds up.
 */
export type PaymentResult =
  | { status: "charged"; jobId: string; subscriptionId: string; dueAt: number; chargeId: string; amountCents: number; replayed: boolean }
  | { status: "skipped"; jobId: string; subscriptionId: string; dueAt: number; reason: string };

interface ChargeResponse {
  id: string;
  amountCents: number;
  replayed: boolean;
}

/**
 * Seed 004's "processor", as the `payments` queue's handler: one attempt at one payment. The seed's
 * retry bookkeeping (retryCount, nextRetryAt, PENDING/SUCCESS/FAILED) is tickwork's job now; the
 * handler only says how the attempt went:
 * - returns a PaymentResult: paid (the payment is recorded and the subscription's due date moved
 *   on), or skipped (nothing left to charge);
 * - throws `RetryAfterError`: the provider said when to come back (429 with `Retry-After`);
 * - throws `PermanentJobError`: retrying cannot help (402 card declined, other 4xx);
 * - throws anything else: retried on the queue's backoff until `maxAttempts`.
 *
 * The provider's idempotency key is the payment's: subscription and due date (`paymentKey`). A job
 * that runs again after its charge went through (the answer was lost, or the process died before
 * recording it) gets the original charge back instead of charging twice, and so does a second job
 * for the same payment (the admin's "charge now" while the night's run still holds one): jobs of a
 * batch carry no dedupe key, so the job id could not be the payment's identity.
 */
export function paymentHandler(deps: PaymentProcessorDeps): JobHandler<PaymentPayload> {
  const { db, paymentsUrl } = deps;
  const emit = deps.onEvent ?? (() => {});

  return async (job, ctx): Promise<PaymentResult> => {
    const p = job.payload;
    const subscription = await getSubscription(db, p.subscriptionId);
    // Cancelled or marked past due after this job was queued, or this due date is already paid (a
    // re-run after the payment was recorded but before the job was marked done): nothing to charge.
    const skip =
      !subscription ? "the subscription no longer exists"
      : subscription.status !== "ACTIVE" ? `the subscription is ${subscription.status}`
      : subscription.nextDueAt !== p.dueAt ? "this due date is already paid"
      : null;
    if (skip || !subscription) {
      emit({ type: "skipped", jobId: job.id, subscriptionId: p.subscriptionId, reason: skip ?? "" });
      return { status: "skipped", jobId: job.id, subscriptionId: p.subscriptionId, dueAt: p.dueAt, reason: skip ?? "" };
    }

    let response: Response;
    try {
      response = await fetch(`${paymentsUrl}/charges`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": paymentKey(p.subscriptionId, p.dueAt) },
        body: JSON.stringify({ subscriptionId: p.subscriptionId, payer: p.payer, amountCents: p.amountCents, dueAt: p.dueAt }),
        signal: ctx.signal,
      });
    } catch (error) {
      // Aborted by tickwork (shutdown, cancel, lost lease): not the payment's failure.
      if (ctx.signal.aborted) throw error;
      // The charge may or may not have been made; the retry's idempotency key settles which.
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const detail = cause ? `${cause.message ?? "failed"}${cause.code ? ` (${cause.code})` : ""}` : (error as Error).message;
      throw await failed(job, ctx, new Error(`no answer from the payment server: ${detail}`));
    }

    if (response.ok) {
      const charge = (await response.json()) as ChargeResponse;
      const nextDueAt = nextDueDate(p.dueAt, subscription.interval);
      await db.transaction([
        { sql: INSERT_PAYMENT, params: [charge.id, p.subscriptionId, p.dueAt, charge.amountCents, job.id, ctx.attempt, deps.now()] },
        { sql: ADVANCE_DUE_DATE, params: [p.subscriptionId, p.dueAt, nextDueAt] },
      ]);
      emit({ type: "charged", jobId: job.id, subscriptionId: p.subscriptionId, attempt: ctx.attempt, chargeId: charge.id, amountCents: charge.amountCents, replayed: charge.replayed, nextDueAt });
      return { status: "charged", jobId: job.id, subscriptionId: p.subscriptionId, dueAt: p.dueAt, chargeId: charge.id, amountCents: charge.amountCents, replayed: charge.replayed };
    }

    const reason = `${response.status} ${await errorCode(response)}`;
    if (response.status === 429) {
      const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
      const error = retryAfter === null ? new Error(`payment server answered ${reason}`) : new RetryAfterError(`payment server answered ${reason}, Retry-After: ${response.headers.get("retry-after")}`, retryAfter);
      throw await failed(job, ctx, error);
    }
    // Other client errors will not change on a retry; timeouts (408) and conflicts (409) may.
    if (response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 409) {
      throw await failed(job, ctx, new PermanentJobError(`payment refused: ${reason}`));
    }
    throw await failed(job, ctx, new Error(`payment server answered ${reason}`));
  };

  /** Reports a failed attempt; when it is the job's last, marks the subscription past due first. */
  async function failed(job: Job<PaymentPayload>, ctx: JobContext, error: Error): Promise<Error> {
    const p = job.payload;
    const permanent = error instanceof PermanentJobError;
    emit({ type: "attempt_failed", jobId: job.id, subscriptionId: p.subscriptionId, attempt: ctx.attempt, maxAttempts: job.maxAttempts, reason: error.message, permanent });
    if (permanent || ctx.attempt >= job.maxAttempts) {
      const reason = permanent ? error.message : `gave up after ${ctx.attempt} attempts: ${error.message}`;
      await db.query(MARK_PAST_DUE, [p.subscriptionId, p.dueAt, reason]);
      emit({ type: "past_due", jobId: job.id, subscriptionId: p.subscriptionId, reason });
    }
    return error;
  }
}

async function errorCode(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body.error === "string") return body.error;
  } catch {
    // not JSON: fall through to the status text
  }
  return response.statusText || "error";
}

/** `Retry-After` is delay-seconds or an HTTP date (RFC 9110 §10.2.3); anything else is ignored. */
export function parseRetryAfter(value: string | null): number | Date | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : new Date(at);
}
