import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Job, LogEvent } from "../../src/index.js";
import { fakeClock, type FakeClock } from "../../src/testing/index.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../../test/support/stores.js";
import { listen, type Listening } from "./admin.js";
import { createSubscriptionsApp, type SubscriptionsApp } from "./app.js";
import type { DatabaseTarget } from "./database.js";
import { reply, startFakePaymentServer, type FakePaymentServer } from "./fake-payment-server.js";
import type { PaymentEvent, PaymentResult } from "./processor.js";
import { listRuns, type RunTotals } from "./runs.js";
import { paymentKey, type PaymentPayload } from "./scheduler.js";
import { cancelSubscription, getSubscription, insertSubscriptions, listPayments, type NewSubscription } from "./subscriptions.js";

const START = Date.parse("2026-01-15T09:00:00Z");
const MINUTE = 60_000;
/** How long a test waits for a condition that real I/O (HTTP, the database) brings about. */
const DEADLINE = { timeout: 10_000, interval: 20 };

/** A payment job's identity: its subscription and due date (jobs of a batch carry no dedupe key). */
const paymentOf = (job: Job) => {
  const p = job.payload as PaymentPayload;
  return paymentKey(p.subscriptionId, p.dueAt);
};

/** The example on each database it supports: an SQLite file, and PostgreSQL in a schema of its own. */
const databases: { name: string; open(): { target: DatabaseTarget; cleanup(): Promise<void> } }[] = [
  {
    name: "sqlite-file",
    open() {
      const dir = mkdtempSync(join(tmpdir(), "tickwork-subscriptions-"));
      return { target: { kind: "sqlite", path: join(dir, "subscriptions.db") }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: "postgres",
    open() {
      const schema = uniqueSchema();
      return { target: { kind: "postgres", url: DATABASE_URL, schema }, cleanup: () => dropSchema(schema) };
    },
  },
];

const monthly = (id: string, nextDueAt: number, extra: Partial<NewSubscription> = {}): NewSubscription => ({
  id,
  payer: `payer-${id}`,
  amountCents: 1_500,
  interval: "monthly",
  nextDueAt,
  ...extra,
});

describe.each(databases)("subscriptions example on $name", (database) => {
  let clock: FakeClock;
  let server: FakePaymentServer;
  let app: SubscriptionsApp;
  let cleanup: () => Promise<void>;
  let events: LogEvent[];
  let paymentEvents: PaymentEvent[];

  let admin: Listening | undefined;

  beforeEach(async () => {
    admin = undefined;
    const opened = database.open();
    cleanup = opened.cleanup;
    clock = fakeClock(START);
    server = await startFakePaymentServer();
    events = [];
    paymentEvents = [];
    app = await createSubscriptionsApp({
      database: opened.target,
      paymentsUrl: server.url,
      clock,
      logger: (event) => events.push(event),
      logLevel: "debug",
      onPaymentEvent: (event) => paymentEvents.push(event),
    });
  });

  afterEach(async () => {
    await admin?.close();
    await app.stop();
    await server.close();
    await cleanup();
  });

  /** Every test ends with this: one charge per idempotency key, and one per subscription and due date. */
  function expectNothingChargedTwice() {
    for (const [key, count] of server.chargesByKey()) expect(count, `charges with idempotency key ${key}`).toBe(1);
    for (const [payment, count] of server.chargesByPayment()) expect(count, `charges for ${payment}`).toBe(1);
  }

  async function onlyJob(): Promise<Job> {
    const jobs = await app.tw.jobs.list({ queue: "payments" });
    expect(jobs).toHaveLength(1);
    return jobs[0]!;
  }

  /** One tick; returns how many payment attempts it started (a run's summary job may run in it too). */
  async function tickPayments(): Promise<number> {
    const started = () => events.filter((e) => e.event === "job.started" && e.queue === "payments").length;
    const before = started();
    await app.tw.tick();
    return started() - before;
  }

  /** POSTs the admin's "charge now" for a subscription, over real HTTP. */
  async function chargeNow(id: string): Promise<Response> {
    admin ??= await listen(app.admin);
    return fetch(`${admin.url}/admin/subscriptions/${id}/charge`, { method: "POST" });
  }

  /** Waits until the payments queue holds `count` jobs (an HTTP request enqueued its job). */
  async function paymentJobs(count: number): Promise<Job[]> {
    await expect.poll(async () => (await app.tw.jobs.list({ queue: "payments" })).length, DEADLINE).toBe(count);
    return app.tw.jobs.list({ queue: "payments" });
  }

  it("makes exactly one job per due subscription, even when the scheduler runs twice at once and again later", async () => {
    await insertSubscriptions(app.db, [
      monthly("s1", START - 60 * MINUTE),
      monthly("s2", START - 86_400_000, { interval: "weekly" }),
      monthly("s3", START, { interval: "yearly" }),
      monthly("s4", START + 86_400_000),
      monthly("s5", START - 86_400_000, { status: "CANCELLED" }),
    ]);

    const [a, b] = await Promise.all([app.scheduleDuePayments(), app.scheduleDuePayments()]);
    expect(a!.enqueued + b!.enqueued).toBe(3);
    expect(a!.alreadyQueued + b!.alreadyQueued).toBe(3);
    expect(await app.scheduleDuePayments()).toEqual({ due: 3, enqueued: 0, alreadyQueued: 3, batch: null });

    const jobs = await app.tw.jobs.list({ queue: "payments" });
    expect(jobs.map(paymentOf).sort()).toEqual([
      "s1:2026-01-15T08:00:00.000Z",
      "s2:2026-01-14T09:00:00.000Z",
      "s3:2026-01-15T09:00:00.000Z",
    ]);
    expect(jobs.every((j) => j.status === "pending" && j.maxAttempts === 6)).toBe(true);
    // Each run that queued something wrote one batch: its jobs, and one summary job over them.
    const batches = [a!.batch, b!.batch].filter((x) => x !== null);
    expect(batches.flatMap((x) => x.jobs).sort()).toEqual(jobs.map((j) => j.id).sort());
    expect((await app.tw.jobs.list({ queue: "payment-runs" })).map((j) => j.id).sort()).toEqual(batches.map((x) => x.id).sort());
  });

  it("the scheduler is a cron task (0 0 * * *): due subscriptions become jobs at midnight, and a repeated run enqueues nothing twice", async () => {
    await insertSubscriptions(app.db, [monthly("s1", START - 60 * MINUTE), monthly("s2", START + 60 * MINUTE)]);
    const jobs = async () => (await app.tw.jobs.list({ queue: "payments" })).map(paymentOf).sort();
    // 09:00 on the 15th: the task's first slot is midnight, so nothing is enqueued yet (the queue is
    // empty; the tick runs no job because none exists).
    expect(await app.tw.tick()).toMatchObject({ nextWakeAt: Date.parse("2026-01-16T00:00:00Z") });
    expect(await jobs()).toEqual([]);

    await clock.set("2026-01-16T00:00:00Z");
    // The midnight run enqueues both (s2 fell due at 10:00), and this same tick starts the payments.
    await app.tw.tick();
    const [status] = (await app.tw.scheduler.status()).tasks;
    expect(status).toMatchObject({ name: "schedule-payments", lastOutcome: "succeeded", lastResult: { due: 2, enqueued: 2, alreadyQueued: 0 } });
    expect(await jobs()).toEqual(["s1:2026-01-15T08:00:00.000Z", "s2:2026-01-15T10:00:00.000Z"]);

    // An operator re-runs it by hand: the payments already made or queued are not made again.
    const [again] = await app.tw.scheduler.runNow("schedule-payments");
    expect(again).toMatchObject({ outcome: "succeeded", result: { due: 0, enqueued: 0 } });
    expect(await jobs()).toEqual(["s1:2026-01-15T08:00:00.000Z", "s2:2026-01-15T10:00:00.000Z"]);
    expectNothingChargedTwice();
  });

  it("charges each due subscription once, records the payment and moves the due date on by its interval", async () => {
    await insertSubscriptions(app.db, [
      monthly("s1", START - 60 * MINUTE),
      monthly("s2", START - 86_400_000, { interval: "weekly", amountCents: 700 }),
      monthly("s3", START, { interval: "yearly", amountCents: 9_900 }),
      monthly("s4", START + 86_400_000),
    ]);
    await app.scheduleDuePayments();

    expect(await tickPayments()).toBe(3);

    const jobs = await app.tw.jobs.list({ queue: "payments" });
    expect(jobs.map((j) => [j.status, j.attempts])).toEqual([["succeeded", 1], ["succeeded", 1], ["succeeded", 1]]);
    const payments = await listPayments(app.db);
    expect(payments.map((p) => [p.subscriptionId, new Date(p.dueAt).toISOString(), p.amountCents, p.attempt])).toEqual([
      ["s1", "2026-01-15T08:00:00.000Z", 1_500, 1],
      ["s2", "2026-01-14T09:00:00.000Z", 700, 1],
      ["s3", "2026-01-15T09:00:00.000Z", 9_900, 1],
    ]);
    expect(payments.map((p) => p.chargeId).sort()).toEqual(server.charges.map((c) => c.id).sort());
    expect(payments.every((p) => p.paidAt === START)).toBe(true);
    // The payment's identity (subscription and due date) is the idempotency key the provider saw.
    expect(server.charges.map((c) => c.idempotencyKey).sort()).toEqual(jobs.map(paymentOf).sort());

    expect(new Date((await getSubscription(app.db, "s1"))!.nextDueAt).toISOString()).toBe("2026-02-15T08:00:00.000Z");
    expect(new Date((await getSubscription(app.db, "s2"))!.nextDueAt).toISOString()).toBe("2026-01-21T09:00:00.000Z");
    expect(new Date((await getSubscription(app.db, "s3"))!.nextDueAt).toISOString()).toBe("2027-01-15T09:00:00.000Z");

    // Paid subscriptions are not due any more; a week later the weekly one and the one due tomorrow are.
    expect(await app.scheduleDuePayments()).toEqual({ due: 0, enqueued: 0, alreadyQueued: 0, batch: null });
    await clock.advance("7d");
    expect(await app.scheduleDuePayments()).toMatchObject({ due: 2, enqueued: 2, alreadyQueued: 0 });
    expect((await app.tw.jobs.list({ queue: "payments", status: "pending" })).map(paymentOf).sort()).toEqual([
      paymentKey("s2", Date.parse("2026-01-21T09:00:00Z")),
      paymentKey("s4", START + 86_400_000),
    ]);
    expectNothingChargedTwice();
  });

  it("retries a 500 after exactly 1, 2, 4 and 8 minutes (the seed's table, not its XOR formula), then succeeds", async () => {
    await insertSubscriptions(app.db, [monthly("s1", START)]);
    server.script("s1", [reply.serverError, reply.serverError, reply.serverError, reply.serverError, reply.ok]);
    await app.scheduleDuePayments();

    await app.tw.tick();
    let job = await onlyJob();
    expect([job.status, job.attempts, job.runAt]).toEqual(["pending", 1, START + MINUTE]);
    expect(job.lastError).toContain("payment server answered 500 internal_error");

    for (const [i, minutes] of [1, 2, 4, 8].entries()) {
      await clock.advance(minutes * MINUTE - 1);
      expect(await tickPayments(), `one millisecond before retry ${i + 1}`).toBe(0);
      await clock.advance(1);
      expect(await tickPayments(), `retry ${i + 1}`).toBe(1);
    }
    job = await onlyJob();
    expect([job.status, job.attempts, job.finishedAt]).toEqual(["succeeded", 5, START + 15 * MINUTE]);

    const delays = events.filter((e) => e.event === "job.retry_scheduled").map((e) => e.delayMs);
    expect(delays).toEqual([1, 2, 4, 8].map((m) => m * MINUTE));
    // Seed 004 writes the delay as `(BASE_RETRY_DELAY_MS * 2) ^ retryCount`: in JavaScript `^` is XOR,
    // which would wait 120001 ms, 120002 ms, 120003 ms... Its own table (1, 2, 4, 8, 16 minutes) is the intent.
    expect([1, 2, 3, 4].map((n) => (60_000 * 2) ^ n)).toEqual([120_001, 120_002, 120_003, 120_004]);
    expect(delays).not.toEqual([1, 2, 3, 4].map((n) => (60_000 * 2) ^ n));

    const [payment] = await listPayments(app.db);
    expect([payment?.attempt, payment?.paidAt]).toEqual([5, START + 15 * MINUTE]);
    expect(server.stats).toMatchObject({ requests: 5, serverErrors: 4, charges: 1 });
    expectNothingChargedTwice();
  });

  it("waits for a 429's Retry-After, in seconds or as an HTTP date, instead of the backoff", async () => {
    await insertSubscriptions(app.db, [monthly("s1", START)]);
    const httpDate = new Date(START + 90_000 + 5 * MINUTE).toUTCString();
    server.script("s1", [reply.rateLimited(90), reply.rateLimited(httpDate), reply.ok]);
    await app.scheduleDuePayments();

    await app.tw.tick();
    let job = await onlyJob();
    expect([job.status, job.runAt]).toEqual(["pending", START + 90_000]);
    expect(job.lastError).toContain("429 rate_limited, Retry-After: 90");

    await clock.advance(89_999);
    expect(await tickPayments()).toBe(0);
    await clock.advance(1);
    expect(await tickPayments()).toBe(1);
    job = await onlyJob();
    expect([job.status, job.attempts, job.runAt]).toEqual(["pending", 2, Date.parse(httpDate)]);

    await clock.set(Date.parse(httpDate) - 1);
    expect(await tickPayments()).toBe(0);
    await clock.advance(1);
    await app.tw.tick();
    job = await onlyJob();
    expect([job.status, job.attempts]).toEqual(["succeeded", 3]);
    expect(server.stats).toMatchObject({ rateLimited: 2, charges: 1 });
    expectNothingChargedTwice();
  });

  it("fails a 402 card_declined at once, with no retry, and marks the subscription PAST_DUE", async () => {
    await insertSubscriptions(app.db, [monthly("s1", START)]);
    server.script("s1", [reply.cardDeclined]);
    await app.scheduleDuePayments();

    await app.tw.tick();
    const job = await onlyJob();
    expect([job.status, job.attempts, job.finishedAt]).toEqual(["failed", 1, START]);
    expect(job.lastError).toContain("PermanentJobError: payment refused: 402 card_declined");
    expect(events.filter((e) => e.event === "job.retry_scheduled")).toEqual([]);
    expect(events.find((e) => e.event === "job.failed")).toMatchObject({ queue: "payments", id: job.id, attempts: 1 });

    const subscription = await getSubscription(app.db, "s1");
    expect(subscription?.status).toBe("PAST_DUE");
    expect(subscription?.lastError).toBe("payment refused: 402 card_declined");
    expect(subscription?.nextDueAt).toBe(START);
    expect(await listPayments(app.db)).toEqual([]);
    expect(server.charges).toEqual([]);

    // A past-due subscription is not scheduled again until someone deals with it.
    await clock.advance("1h");
    expect(await app.scheduleDuePayments()).toEqual({ due: 0, enqueued: 0, alreadyQueued: 0, batch: null });
  });

  it("after 6 failed attempts (1, 2, 4, 8, 16 minutes apart) fails the job with its last error and marks the subscription", async () => {
    await insertSubscriptions(app.db, [monthly("s1", START)]);
    // The last failure differs from the others, to show that the job keeps the last one.
    server.script("s1", [reply.serverError, reply.serverError, reply.serverError, reply.serverError, reply.serverError, reply.rateLimited(30)]);
    await app.scheduleDuePayments();

    const attemptsAt: number[] = [];
    for (;;) {
      if (await tickPayments()) attemptsAt.push(clock.now() - START);
      const job = await onlyJob();
      if (job.status !== "pending") break;
      await clock.set(job.runAt);
    }
    expect(attemptsAt).toEqual([0, 1, 3, 7, 15, 31].map((m) => m * MINUTE));

    const job = await onlyJob();
    expect([job.status, job.attempts, job.maxAttempts, job.finishedAt]).toEqual(["failed", 6, 6, START + 31 * MINUTE]);
    expect(job.lastError).toContain("payment server answered 429 rate_limited, Retry-After: 30");
    const subscription = await getSubscription(app.db, "s1");
    expect(subscription?.status).toBe("PAST_DUE");
    expect(subscription?.lastError).toBe("gave up after 6 attempts: payment server answered 429 rate_limited, Retry-After: 30");
    expect(paymentEvents.filter((e) => e.type === "past_due")).toHaveLength(1);
    expect(await listPayments(app.db)).toEqual([]);
    expect(server.charges).toEqual([]);
  });

  it("charges nothing for a subscription cancelled after its payment job was queued", async () => {
    await insertSubscriptions(app.db, [monthly("s1", START)]);
    await app.scheduleDuePayments();
    await cancelSubscription(app.db, "s1");

    await app.tw.tick();
    expect((await onlyJob()).status).toBe("succeeded");
    expect(paymentEvents).toEqual([{ type: "skipped", jobId: (await onlyJob()).id, subscriptionId: "s1", reason: "the subscription is CANCELLED" }]);
    expect(server.stats.requests).toBe(0);
    expect(await listPayments(app.db)).toEqual([]);
  });

  it("does not charge twice when a charge's answer is lost: the retry gets the original charge back", async () => {
    await insertSubscriptions(app.db, [monthly("s1", START), monthly("s2", START)]);
    server.script("s1", [reply.lostResponse]);
    await app.scheduleDuePayments();

    await app.tw.tick();
    const lost = (await app.tw.jobs.list({ queue: "payments" })).find((j) => paymentOf(j) === paymentKey("s1", START))!;
    expect([lost.status, lost.runAt]).toEqual(["pending", START + MINUTE]);
    expect(lost.lastError).toContain("no answer from the payment server");
    expect(server.charges.map((c) => c.subscriptionId).sort()).toEqual(["s1", "s2"]);

    await clock.advance("1m");
    await app.tw.tick();
    expect((await app.tw.jobs.get(lost.id))?.status).toBe("succeeded");
    expect(server.stats).toMatchObject({ charges: 2, replayed: 1, lostResponses: 1 });
    expect(paymentEvents).toContainEqual(expect.objectContaining({ type: "charged", subscriptionId: "s1", attempt: 2, replayed: true }));

    const payments = await listPayments(app.db);
    expect(payments.map((p) => [p.subscriptionId, p.chargeId])).toEqual(server.charges.map((c) => [c.subscriptionId, c.id]).sort());
    expectNothingChargedTwice();
  });

  it("a run is one batch: once every charge of it finished, its summary job records the totals (succeeded, failed, amount) once", async () => {
    await insertSubscriptions(app.db, [
      monthly("s1", START - 60 * MINUTE),
      monthly("s2", START - 86_400_000, { interval: "weekly", amountCents: 700 }),
      monthly("s3", START, { amountCents: 9_900 }),
      monthly("s4", START + 86_400_000),
      monthly("s5", START - 86_400_000, { status: "CANCELLED" }),
    ]);
    server.script("s2", [reply.serverError]);
    server.script("s3", [reply.cardDeclined]);

    const run = await app.scheduleDuePayments();
    expect(run).toMatchObject({ due: 3, enqueued: 3, alreadyQueued: 0 });
    expect(run.batch!.jobs).toHaveLength(3);
    const totals = app.tw.jobs.wait<RunTotals>(run.batch!.id, { timeout: "1h" });

    // s1 is charged, s3 declined for good, s2 fails once and is retried a minute later.
    expect(await tickPayments()).toBe(3);
    expect(await app.tw.jobs.get(run.batch!.id)).toMatchObject({ queue: "payment-runs", status: "pending", children: { total: 3, pending: 1, failed: 1 } });
    expect(await listRuns(app.db)).toEqual([]);

    await clock.advance("1m");
    // The last charge ends, and the summary job, due from that moment, runs in the same tick.
    expect(await tickPayments()).toBe(1);
    await expect(totals).resolves.toEqual({ payments: 3, succeeded: 2, skipped: 0, failed: 1, amountCents: 1_500 + 700 });
    expect(await listRuns(app.db)).toEqual([
      { id: run.batch!.id, startedAt: START, finishedAt: START + MINUTE, payments: 3, succeeded: 2, skipped: 0, failed: 1, amountCents: 2_200 },
    ]);
    const summary = await app.tw.jobs.get(run.batch!.id);
    expect(summary).toMatchObject({ status: "succeeded", attempts: 1, children: { total: 3, pending: 0, failed: 1 } });
    expect((await app.tw.jobs.list({ queue: "payment-runs" })).length).toBe(1);
    // What the summary read: each payment job's own result, in the batch's order.
    const results = await Promise.all(run.batch!.jobs.map(async (id) => (await app.tw.jobs.get(id))?.result as PaymentResult | null));
    expect(results.map((r) => (r ? [r.status, r.subscriptionId] : null))).toEqual([["charged", "s2"], ["charged", "s1"], null]);
    expectNothingChargedTwice();
  });

  it("charge now waits for the charge and answers with its result; a second click while it runs waits on the same job", async () => {
    // Due in three days: "charge now" charges the next payment early.
    await insertSubscriptions(app.db, [monthly("s1", START + 3 * 86_400_000)]);
    const first = chargeNow("s1");
    const [job] = await paymentJobs(1);
    const second = chargeNow("s1");
    await expect.poll(() => events.filter((e) => e.event === "job.enqueued" && e.duplicate === true).length, DEADLINE).toBe(1);

    expect(await tickPayments()).toBe(1);
    const [a, b] = await Promise.all([first, second]);
    const charged = { status: "charged", jobId: job!.id, subscriptionId: "s1", dueAt: START + 3 * 86_400_000, chargeId: server.charges[0]!.id, amountCents: 1_500, replayed: false };
    expect([a.status, await a.json()]).toEqual([200, charged]);
    expect([b.status, await b.json()]).toEqual([200, charged]);
    expect(server.stats.charges).toBe(1);
    expect(new Date((await getSubscription(app.db, "s1"))!.nextDueAt).toISOString()).toBe("2026-02-18T09:00:00.000Z");
    // The payment it made is not due again.
    await clock.advance("3d");
    expect(await app.scheduleDuePayments()).toEqual({ due: 0, enqueued: 0, alreadyQueued: 0, batch: null });
    expectNothingChargedTwice();
  });

  it("charge now answers 504 when the charge is not made within its timeout; the job goes on and no run queues that payment again", async () => {
    await insertSubscriptions(app.db, [monthly("s1", START)]);
    server.script("s1", [reply.serverError]);
    const answer = chargeNow("s1");
    const [job] = await paymentJobs(1);
    // The first attempt fails; its retry is a minute away, past the route's 30 s.
    expect(await tickPayments()).toBe(1);
    await clock.advance("30s");
    const response = await answer;
    expect(response.status).toBe(504);
    expect(await response.json()).toEqual({ error: "charge_pending", message: "no answer within 30000 ms; the charge goes on", jobId: job!.id });

    // The night's run finds the payment claimed by "charge now": it is not queued twice.
    expect(await app.scheduleDuePayments()).toEqual({ due: 1, enqueued: 0, alreadyQueued: 1, batch: null });
    const pending = await fetch(`${admin!.url}/admin/payment-jobs/${job!.id}`);
    expect(await pending.json()).toMatchObject({ id: job!.id, status: "pending", attempts: 1, runAt: START + MINUTE, result: null, lastError: expect.stringContaining("500 internal_error") });

    await clock.advance("30s");
    expect(await tickPayments()).toBe(1);
    const done = await fetch(`${admin!.url}/admin/payment-jobs/${job!.id}`);
    expect(await done.json()).toMatchObject({ status: "succeeded", attempts: 2, result: { status: "charged", subscriptionId: "s1", amountCents: 1_500 } });
    expect((await app.tw.jobs.list({ queue: "payments" })).length).toBe(1);
    expectNothingChargedTwice();
  });

  it("charge now answers 402 for a declined card, 409 for a subscription that is not active, 404 for an unknown one", async () => {
    await insertSubscriptions(app.db, [monthly("s1", START), monthly("s2", START, { status: "CANCELLED" })]);
    server.script("s1", [reply.cardDeclined]);
    const declined = chargeNow("s1");
    const [job] = await paymentJobs(1);
    await tickPayments();
    const response = await declined;
    expect(response.status).toBe(402);
    expect(await response.json()).toEqual({ error: "charge_failed", jobId: job!.id, attempts: 1, lastError: expect.stringContaining("payment refused: 402 card_declined") });

    const again = await chargeNow("s1");
    expect([again.status, await again.json()]).toEqual([409, { error: "not_active", status: "PAST_DUE", lastError: "payment refused: 402 card_declined" }]);
    const cancelled = await chargeNow("s2");
    expect([cancelled.status, await cancelled.json()]).toEqual([409, { error: "not_active", status: "CANCELLED", lastError: null }]);
    const unknown = await chargeNow("nope");
    expect([unknown.status, await unknown.json()]).toEqual([404, { error: "unknown_subscription" }]);
    const badJob = await fetch(`${admin!.url}/admin/payment-jobs/x`);
    expect(badJob.status).toBe(400);
    expect((await app.tw.jobs.list({ queue: "payments" })).length).toBe(1);
    expect(server.charges).toEqual([]);
  });
});
