/**
 * Seed 004's subscription payments on tickwork, end to end and on real parts: a payment provider
 * that fails on purpose (real HTTP on 127.0.0.1), a SQLite file (or PostgreSQL), tickwork's queue
 * with retries, each run a batch with a summary job, and the admin API's "charge now" (real HTTP on
 * 127.0.0.1). Runs for a bounded time, prints what happens and a summary, and exits.
 *
 *   npm run example:subscriptions                          # SQLite file in the OS temp dir, removed afterwards
 *   npm run example:subscriptions -- --db ./subscriptions.db
 *   npm run example:subscriptions -- --db postgres://postgres@127.0.0.1:5432/test   (or DATABASE_URL=...)
 *   npm run example:subscriptions -- --seconds 45          # the longest it runs (default 30)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LogEvent, TimerHandle } from "../../src/index.js";
import { listen } from "./admin.js";
import { createSubscriptionsApp, MAX_ATTEMPTS, PAYMENTS_QUEUE, RUNS_QUEUE } from "./app.js";
import { describeTarget, type DatabaseTarget } from "./database.js";
import { reply, startFakePaymentServer } from "./fake-payment-server.js";
import type { PaymentEvent } from "./processor.js";
import { countDue, countSubscriptions, insertSubscriptions, listPayments, listSubscriptions, type NewSubscription } from "./subscriptions.js";

const SCHEDULER_EVERY = "2s";
const RETRY_BASE = "1s";
/** Demo shares of failed charge requests: 30% 500s, 8% 429s, 4% declined cards, 5% lost answers. */
const FAILURES = { serverError: 0.3, rateLimited: 0.08, cardDeclined: 0.04, lostResponse: 0.05 };

const args = parseArgs(process.argv.slice(2));
const startedAt = Date.now();
const say = (line: string) => console.log(`[${((Date.now() - startedAt) / 1000).toFixed(1).padStart(5)}s] ${line}`);
const money = (cents: number) => `$${(cents / 100).toFixed(2)}`;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const firstLine = (text: unknown) => String(text).split("\n")[0];

// ---- the parts ------------------------------------------------------------------------------

const tempDir = args.target ? undefined : mkdtempSync(join(tmpdir(), "tickwork-subscriptions-"));
const target: DatabaseTarget = args.target ?? { kind: "sqlite", path: join(tempDir!, "subscriptions.db") };

const server = await startFakePaymentServer({ failures: FAILURES, retryAfterSeconds: 1 });
// A few scripted subscriptions, so every path shows up on every run; the rest get the random shares.
server.script("sub-03", [reply.cardDeclined]);
server.script("sub-06", [reply.lostResponse]);
server.script("sub-09", [reply.rateLimited(2)]);
server.script("sub-12", [reply.serverError, reply.serverError]);

console.log(`database:        ${describeTarget(target)}${tempDir ? " (a fresh temp file, removed at exit)" : ""}`);
console.log(`payment server:  ${server.url} (fails ${Object.entries(FAILURES).map(([k, v]) => `${k} ${v * 100}%`).join(", ")})`);
console.log(`tickwork events: a plain function logger printing compact lines ("tickwork <event> ..."), level info`);
console.log(`retries:         ${MAX_ATTEMPTS} attempts, ${[1, 2, 4, 8, 16].map((n) => `${n}s`).join(", ")} apart in this demo (base "${RETRY_BASE}");`);
console.log(`                 production uses base "1m": 1, 2, 4, 8, 16 minutes, the seed's schedule`);
console.log(`scheduler:       tw.task("schedule-payments"), every ${SCHEDULER_EVERY} here (production: cron "0 0 * * *", the seed's daily run);`);
console.log(`                 each run is one tw.batch of payment jobs, and a summary job records its totals once every charge finished`);

let schedulerRuns = 0;
let summaries = 0;
const subscriptionOf = new Map<string, string>();
const processed: PaymentEvent[] = [];
const tickworkEvents: LogEvent[] = [];

const app = await createSubscriptionsApp({
  database: target,
  paymentsUrl: server.url,
  retryBase: RETRY_BASE,
  concurrency: 5,
  logLevel: "info",
  logger: (event) => {
    tickworkEvents.push(event);
    say(`  tickwork ${formatEvent(event)}`);
  },
  schedulerCadence: { every: SCHEDULER_EVERY },
  onScheduled: (r) => {
    if (r.due || schedulerRuns++ === 0) say(`scheduler: ${r.due} due, ${r.enqueued} new job${r.enqueued === 1 ? "" : "s"}${r.batch ? ` in batch ${r.batch.id}` : ""}, ${r.alreadyQueued} already queued (skipped by their claims)`);
  },
  onRunSummary: (run) => {
    summaries++;
    say(`= run ${run.id} finished: ${run.payments} payment(s), ${run.succeeded} charged (${money(run.amountCents)}), ${run.failed} failed, ${run.skipped} skipped`);
  },
  chargeTimeout: "10s",
  onPaymentEvent: (event) => {
    processed.push(event);
    subscriptionOf.set(event.jobId, event.subscriptionId);
    say(formatPaymentEvent(event));
  },
});
const { tw, db } = app;
const admin = await listen(app.admin);
console.log(`admin API:       ${admin.url}/admin/subscriptions/:id/charge (POST: "charge now", waits up to 10s for the charge)`);
console.log("");

// ---- seed -----------------------------------------------------------------------------------

const now = tw.clock.now();
/** The run waits for every subscription due by this time; seeding adds some that fall due during the run. */
let horizon = now;
const seeding = (await countSubscriptions(db)) === 0;
if (seeding) {
  const seeded = seedSubscriptions(now);
  await insertSubscriptions(db, seeded);
  const dueNow = seeded.filter((s) => s.nextDueAt <= now && s.status !== "CANCELLED").length;
  const soon = seeded.filter((s) => s.nextDueAt > now && s.nextDueAt <= now + 10_000).length;
  horizon = now + 10_000;
  say(`seeded ${seeded.length} subscriptions: ${dueNow} due now, ${soon} coming due in the next 10s, the rest later or cancelled`);
} else {
  say(`reusing the ${await countSubscriptions(db)} subscriptions already in the database (nothing paid is due again)`);
}

// ---- run ------------------------------------------------------------------------------------

await tw.start();
let checkTimer: TimerHandle | undefined;
let finishing = false;
const deadline = startedAt + args.seconds * 1000;

/** Done when nothing due by the horizon is left unsettled and no payment or summary job is pending or running. */
async function checkDone(): Promise<void> {
  if (finishing) return;
  try {
    const counts = await tw.jobs.counts();
    const live = counts.filter((c) => c.queue === PAYMENTS_QUEUE || c.queue === RUNS_QUEUE).reduce((n, c) => n + c.counts.pending + c.counts.running, 0);
    const unsettled = await countDue(db, horizon);
    if (live === 0 && unsettled === 0 && tw.clock.now() > horizon) return finish("all due payments are settled");
    if (Date.now() >= deadline) return finish(`time is up (${args.seconds}s) with ${live} payment job(s) pending or running and ${unsettled} due subscription(s) unpaid`);
  } catch (error) {
    say(`progress check failed: ${firstLine(error)}`);
  }
  if (!finishing) checkTimer = tw.clock.setTimeout(() => void checkDone(), 250);
}

process.once("SIGINT", () => void finish("interrupted"));
// The first scheduler run is the task's first slot, within 2s; runNow starts at once.
await tw.scheduler.runNow("schedule-payments");
checkTimer = tw.clock.setTimeout(() => void checkDone(), 250);
// Only on a fresh database: on a reused one, sub-19's next payment was charged ahead already.
if (seeding) void chargeNow("sub-19");

/** An operator's "charge now" through the admin API, for a subscription that is due only next week. */
async function chargeNow(id: string): Promise<void> {
  say(`admin: POST /admin/subscriptions/${id}/charge`);
  try {
    const response = await fetch(`${admin.url}/admin/subscriptions/${id}/charge`, { method: "POST" });
    say(`admin: ${response.status} ${await response.text()}`);
  } catch (error) {
    say(`admin: charge now failed: ${firstLine(error)}`);
  }
}

async function finish(why: string): Promise<void> {
  if (finishing) return;
  finishing = true;
  if (checkTimer) tw.clock.clearTimeout(checkTimer);
  say(`stopping: ${why}`);
  const [counts] = await tw.jobs.counts(PAYMENTS_QUEUE);
  const payments = await listPayments(db);
  const subscriptions = await listSubscriptions(db);
  await admin.close();
  await app.stop();
  await server.close();
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  printSummary(counts?.counts, payments.map((p) => p.chargeId), subscriptions.map((s) => s.status));
}

// ---- output ---------------------------------------------------------------------------------

function printSummary(counts: Record<string, number> | undefined, recordedCharges: string[], statuses: string[]): void {
  const charged = processed.filter((e): e is Extract<PaymentEvent, { type: "charged" }> => e.type === "charged");
  const recorded = new Set(recordedCharges);
  const unrecorded = server.charges.filter((c) => !recorded.has(c.id)).length;
  const perPayment = [...server.chargesByPayment().values()];
  const rows: [string, string | number][] = [
    ["payments succeeded", charged.length],
    ["  ...after one or more retries", charged.filter((e) => e.attempt > 1).length],
    ["retries scheduled (job.retry_scheduled)", tickworkEvents.filter((e) => e.event === "job.retry_scheduled").length],
    ["failed permanently (job.failed)", tickworkEvents.filter((e) => e.event === "job.failed").length],
    ["payment jobs still pending or running", (counts?.pending ?? 0) + (counts?.running ?? 0)],
    ["payment runs summarised (tw.batch + summary job)", summaries],
    ["charges made by the provider", server.stats.charges],
    ["duplicate charges prevented (key replayed)", server.stats.replayed],
    ["payments charged more than once", perPayment.filter((n) => n > 1).length],
    ["charges not (yet) recorded as payments", unrecorded],
    ["provider answers: 500 / 429 / 402 / lost", `${server.stats.serverErrors} / ${server.stats.rateLimited} / ${server.stats.declined} / ${server.stats.lostResponses}`],
    ["subscriptions ACTIVE / PAST_DUE / CANCELLED", ["ACTIVE", "PAST_DUE", "CANCELLED"].map((s) => statuses.filter((x) => x === s).length).join(" / ")],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  console.log("");
  console.log("summary");
  console.log(`${"-".repeat(width + 12)}`);
  for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${String(value).padStart(10)}`);
  console.log(`${"-".repeat(width + 12)}`);
  if (unrecorded) console.log("A charge without a payment belongs to a job whose answer was lost and that has not run again yet (or ran out of attempts); its next run replays the key and records it.");
}

function formatPaymentEvent(e: PaymentEvent): string {
  switch (e.type) {
    case "charged":
      return e.replayed
        ? `✓ ${e.subscriptionId} paid: the provider returned the charge it already made (${e.chargeId}) instead of charging again; attempt ${e.attempt}`
        : `✓ ${e.subscriptionId} charged ${money(e.amountCents)} (${e.chargeId}) on attempt ${e.attempt}; next due ${day(e.nextDueAt)}`;
    case "attempt_failed":
      return `✗ ${e.subscriptionId} attempt ${e.attempt}/${e.maxAttempts} failed: ${e.reason}${e.permanent ? " (permanent)" : ""}`;
    case "past_due":
      return `! ${e.subscriptionId} marked PAST_DUE: ${e.reason}`;
    case "skipped":
      return `- ${e.subscriptionId} skipped: ${e.reason}`;
  }
}

/** `tickwork job.retry_scheduled job=7 (sub-12) attempt=1 in 1.0s error="..."`: the event's name first, then its fields. */
function formatEvent(event: LogEvent): string {
  const { event: name, level: _level, time: _time, id, ...fields } = event;
  const parts: string[] = [name];
  if (typeof id === "string") parts.push(`job=${id}${subscriptionOf.has(id) ? ` (${subscriptionOf.get(id)})` : ""}`);
  for (const [key, value] of Object.entries(fields)) {
    if (key === "queue" && value === PAYMENTS_QUEUE) continue;
    if (key === "retryAt" || value === undefined) continue;
    if (key === "delayMs" && typeof value === "number") parts.push(`in ${(value / 1000).toFixed(1)}s`);
    else if (key === "error") parts.push(`error="${firstLine(value)}"`);
    else parts.push(`${key}=${typeof value === "object" ? JSON.stringify(value) : String(value)}`);
  }
  return parts.join(" ");
}

// ---- setup helpers --------------------------------------------------------------------------

/** ~20 subscriptions: most due now (some long overdue), a few coming due during the run, a few later. */
function seedSubscriptions(at: number): NewSubscription[] {
  const payers = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter", "yvonne"];
  const intervals = ["monthly", "monthly", "weekly", "yearly"] as const;
  const hour = 3_600_000;
  return payers.map((payer, i): NewSubscription => {
    const id = `sub-${String(i + 1).padStart(2, "0")}`;
    // 1-15: due between 1 and 15 hours ago; 16-18: due 3, 6 and 9 seconds from now; 19: next week; 20: cancelled.
    const nextDueAt = i < 15 ? at - (i + 1) * hour : i < 18 ? at + (i - 14) * 3_000 : i === 18 ? at + 7 * 24 * hour : at - hour;
    return { id, payer, amountCents: 500 + ((i * 737) % 4_500), interval: intervals[i % intervals.length]!, nextDueAt, status: i === 19 ? "CANCELLED" : "ACTIVE" };
  });
}

function parseArgs(argv: string[]): { target: DatabaseTarget | undefined; seconds: number } {
  let db: string | undefined = process.env.DATABASE_URL || undefined;
  let seconds = 30;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === "--db") db = value();
    else if (arg.startsWith("--db=")) db = arg.slice(5);
    else if (arg === "--seconds") seconds = Number(value());
    else if (arg.startsWith("--seconds=")) seconds = Number(arg.slice(10));
    else throw new Error(`unknown argument ${arg}; use --db <file | postgres://...> and --seconds <n>`);
  }
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error("--seconds must be a positive number");
  if (!db) return { target: undefined, seconds };
  // The demo's tables and tickwork's go to a schema of their own, so a shared database stays tidy.
  if (/^postgres(ql)?:\/\//.test(db)) return { target: { kind: "postgres", url: db, schema: "subscriptions_demo" }, seconds };
  return { target: { kind: "sqlite", path: db }, seconds };
}
