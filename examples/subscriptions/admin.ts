import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { Hono } from "hono";
import { InvalidInputError, JobFailedError, JobWaitTimeoutError, toMs, type Duration, type Queue, type Tickwork } from "../../src/index.js";
import type { AppDatabase } from "./database.js";
import type { PaymentResult } from "./processor.js";
import { paymentKey, type PaymentPayload } from "./scheduler.js";
import { CLAIM_PAYMENT_NOW } from "./sql.js";
import { getSubscription } from "./subscriptions.js";

export interface AdminApiOptions {
  tw: Tickwork;
  db: AppDatabase;
  payments: Queue<PaymentPayload>;
  /** How long "charge now" waits for the charge before answering 504 (the charge goes on). */
  chargeTimeout: Duration;
}

/**
 * The operators' API (put it behind your own admin auth):
 *
 *   POST /admin/subscriptions/:id/charge    charges the subscription's next payment now, due or not,
 *                                           and answers with the charge once it is made:
 *     200 the payment job's result: { status: "charged", chargeId, amountCents, replayed, jobId, ... }
 *     402 the charge failed for good (declined, or out of attempts): { error: "charge_failed", lastError, jobId }
 *     404 no such subscription; 409 it is not ACTIVE, or its payment was made meanwhile
 *     504 no answer within the timeout (a retry is scheduled, say): { error: "charge_pending", jobId };
 *         the job goes on, and GET /admin/payment-jobs/:jobId tells how it ended
 *   GET  /admin/payment-jobs/:jobId         a payment job: { status, attempts, result, lastError }
 *
 * "Charge now" is a job like any other payment, so it gets the queue's retries, its lease and the
 * provider's idempotency key; the route only waits for it (`enqueueAndWait`), from whichever process
 * runs it. A second click while it runs waits for the same job (its dedupe key is the payment's).
 */
export function createAdminApi({ tw, db, payments, chargeTimeout }: AdminApiOptions): Hono {
  const timeout = toMs(chargeTimeout);
  const app = new Hono();

  app.post("/admin/subscriptions/:id/charge", async (c) => {
    const subscription = await getSubscription(db, c.req.param("id"));
    if (!subscription) return c.json({ error: "unknown_subscription" }, 404);
    if (subscription.status !== "ACTIVE") return c.json({ error: "not_active", status: subscription.status, lastError: subscription.lastError }, 409);
    const payload: PaymentPayload = { subscriptionId: subscription.id, payer: subscription.payer, amountCents: subscription.amountCents, dueAt: subscription.nextDueAt };
    const key = paymentKey(payload.subscriptionId, payload.dueAt);
    // Claimed first, so a run that starts meanwhile leaves this payment to this job.
    await db.query(CLAIM_PAYMENT_NOW, [payload.subscriptionId, payload.dueAt, tw.clock.now()]);
    let result: PaymentResult;
    try {
      result = await payments.enqueueAndWait<PaymentResult>(payload, { key, timeout });
    } catch (error) {
      if (error instanceof JobWaitTimeoutError) {
        return c.json({ error: "charge_pending", message: `no answer within ${timeout} ms; the charge goes on`, jobId: error.id }, 504);
      }
      if (error instanceof JobFailedError) {
        return c.json({ error: "charge_failed", jobId: error.job.id, attempts: error.job.attempts, lastError: error.job.lastError }, 402);
      }
      throw error;
    }
    if (result.status === "skipped") return c.json({ error: "not_charged", reason: result.reason, jobId: result.jobId }, 409);
    return c.json(result, 200);
  });

  app.get("/admin/payment-jobs/:id", async (c) => {
    let job;
    try {
      job = await tw.jobs.get(c.req.param("id"));
    } catch (error) {
      if (error instanceof InvalidInputError) return c.json({ error: "invalid_id", message: error.message }, 400);
      throw error;
    }
    if (!job || job.queue !== payments.name) return c.json({ error: "unknown_job" }, 404);
    return c.json({ id: job.id, status: job.status, attempts: job.attempts, maxAttempts: job.maxAttempts, runAt: job.runAt, result: job.result, lastError: job.lastError }, 200);
  });

  return app;
}

export interface Listening {
  /** `http://127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

/** Serves the admin API with @hono/node-server on 127.0.0.1 (port 0: any free port). */
export async function listen(app: Hono, options: { port?: number } = {}): Promise<Listening> {
  const server = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
