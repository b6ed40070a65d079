/**
 * Seed 000 on tickwork, end to end on real parts: 5,000 tracked accounts, a price feed, an SQLite
 * file (or PostgreSQL), and a receiver that verifies signatures, upserts and fails on purpose (real
 * HTTP on 127.0.0.1). The clock is simulated: four hours around midnight pass in seconds, so the
 * seed's real retry schedule (1m 5m 15m 1h 2h) plays out in full. Prints each tick that made calls
 * and a summary, and exits.
 *
 *   npm run example:account-extremes                          # SQLite file in the OS temp dir, removed afterwards
 *   npm run example:account-extremes -- --db ./extremes.db
 *   npm run example:account-extremes -- --db postgres://postgres@127.0.0.1:5432/test   (or DATABASE_URL=...)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LogEvent } from "../../src/index.js";
import { fakeClock } from "../../src/testing/index.js";
import { DAILY_DELIVERY, HOURLY_DELIVERY, PIPELINE_TASK, createAccountExtremesApp, type PipelineResult } from "./app.js";
import { describeTarget, openDatabase, type DatabaseTarget } from "./database.js";
import { PROCESSED_UNTIL } from "./extremes.js";
import { priceTicks, trackedAccounts } from "./market.js";
import { DAY, MINUTE, dayOf, midnightOf } from "./periods.js";
import { startReceiver, type ReceivedRequest } from "./receiver.js";
import { GET_STATE } from "./sql.js";

const ACCOUNTS = 5_000;
const SEND_TIMEOUT = "30s";
const FAILURES = { error: 0.1, hang: 0.0005 };
/** The feed stops here, to keep the run short: each later hour would add 5,000 hourly callbacks. */
const FEED_MINUTES = 30;
const SECRET = `whsec_${Buffer.from("account-extremes-demo-secret-32b").toString("base64")}`;

const args = parseArgs(process.argv.slice(2));
const realStart = Date.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- the parts ------------------------------------------------------------------------------

const tempDir = args.target ? undefined : mkdtempSync(join(tmpdir(), "tickwork-account-extremes-"));
const target: DatabaseTarget = args.target ?? { kind: "sqlite", path: join(tempDir!, "extremes.db") };
// A database an earlier run used already holds its days: this run takes the next simulated day.
const demoDay = await nextDemoDay(target);
const simStart = midnightOf(demoDay) - 10 * MINUTE;
const simEnd = midnightOf(demoDay) + 3 * 60 * MINUTE + 30 * MINUTE;
const clock = fakeClock(simStart);
const sim = (ms: number) => new Date(ms).toISOString().slice(11, 23);
const say = (line: string) => console.log(`[${sim(clock.now())} sim | ${((Date.now() - realStart) / 1000).toFixed(1).padStart(5)}s real] ${line}`);

const receiver = await startReceiver({ secret: SECRET, now: () => clock.now(), failures: FAILURES, seed: 2 });
const yesterday = dayOf(midnightOf(demoDay) - DAY);
// One daily callback the receiver refuses every time: its retries run out at about 03:21.
const refused = `daily:acct-00042:${yesterday}`;
receiver.script(refused, Array(6).fill("error"));

// Calls started and finished, to tell when every call still open is one the receiver holds on purpose.
let started = 0;
let finished = 0;
const countingFetch = async (url: string, init: RequestInit) => {
  started++;
  try {
    return await fetch(url, init);
  } finally {
    finished++;
  }
};

const counts = { failed: 0, timeouts: 0, dropped: 0 };
const app = await createAccountExtremesApp({
  database: target,
  receiverUrl: receiver.url,
  secret: SECRET,
  clock,
  sendTimeout: SEND_TIMEOUT,
  fetch: countingFetch,
  logLevel: "info",
  logger: (event) => onEvent(event),
});
const { tw } = app;

console.log(`seed 000 on tickwork: hourly and daily account extremes for ${ACCOUNTS.toLocaleString("en-US")} tracked accounts`);
console.log(`database:  ${describeTarget(target)}${tempDir ? " (a fresh temp file, removed at exit)" : ""}`);
console.log(`receiver:  ${receiver.url}/callbacks/{hourly,daily}: verifies Standard Webhooks signatures, upserts by (account, period);`);
console.log(`           fails ${FAILURES.error * 100}% of calls with a 500 and ${FAILURES.hang * 100}% by never answering (the ${SEND_TIMEOUT} send timeout ends them)`);
console.log(`clock:     simulated, ${sim(simStart)} to ${sim(simEnd)} UTC around ${demoDay}; tw.tick() runs at each moment the engine asks for`);
console.log(`           (100 ms later while calls are carried over), so hours pass in seconds of real time`);
console.log(`pipeline:  task ${PIPELINE_TASK} every minute: fold the feed, emit closed hours, emit the closed day once every tracking has caught up`);
console.log(`budget:    500 calls per tick, ${DAILY_DELIVERY} first (declared first), then ${HOURLY_DELIVERY}; retries at most 50 per tick per delivery,`);
console.log(`           1m 5m 15m 1h 2h after each failure, then dropped to the dead-letter table`);
console.log(`feed:      a price every minute from ${sim(simStart)} for ${FEED_MINUTES + 10} minutes (then it stops, to keep the run short)`);
console.log("");

// ---- the world moves ------------------------------------------------------------------------

const feed = priceTicks({ seed: 4, from: simStart, to: midnightOf(demoDay) + FEED_MINUTES * MINUTE });
await app.track(trackedAccounts(ACCOUNTS, 1));
say(`tracking ${ACCOUNTS.toLocaleString("en-US")} accounts (value = cash + units x price, some short)`);

let tickNumber = 0;
let pipelineRan = false;
let lastSkipped = 0;
let seen = 0;
const perTick: number[] = [];
while (clock.now() <= simEnd) {
  const due = feed.filter((t) => t.at <= clock.now());
  if (due.length) await app.recordTicks(feed.splice(0, due.length));
  const result = await tickOnce();
  tickNumber++;
  await reportPipeline();
  const calls = receiver.requests.slice(seen);
  seen = receiver.requests.length;
  if (result.outbound.used > 0) {
    perTick.push(result.outbound.used);
    say(formatTick(result.outbound.used, calls, result.carried, result.nextWakeAt));
  }
  const next = Math.min(result.nextWakeAt ?? Number.POSITIVE_INFINITY, feed[0]?.at ?? Number.POSITIVE_INFINITY);
  if (!Number.isFinite(next) || next > simEnd) break;
  await clock.set(Math.max(next, clock.now()));
}

// ---- the operator -----------------------------------------------------------------------------

const [deadLetter] = await app.daily.dropped();
if (deadLetter) {
  receiver.script(deadLetter.key!, ["ok"]);
  say(`operator: ${DAILY_DELIVERY}.replay({ id: "${deadLetter.id}" }) for ${deadLetter.key} (the receiver is fixed)`);
  await app.daily.replay({ id: deadLetter.id });
  const result = await tickOnce();
  say(formatTick(result.outbound.used, receiver.requests.slice(seen), result.carried, result.nextWakeAt));
  seen = receiver.requests.length;
}

// ---- the end --------------------------------------------------------------------------------------

const [daily, hourly] = await Promise.all([app.daily.status(), app.hourly.status()]);
const dailyIds = receiver.idsByKey("daily");
const replayedIds = deadLetter ? receiver.idsByKey("daily").get(deadLetter.key!) : undefined;
const rows = { hourly: receiver.rows("hourly").length, daily: receiver.rows("daily").length };
const duplicates = { hourly: receiver.duplicates("hourly").length, daily: receiver.duplicates("daily").length };
await app.stop();
await receiver.close();
if (tempDir) rmSync(tempDir, { recursive: true, force: true });

console.log("");
console.log("summary");
console.log(`  ticks that made calls: ${perTick.length}, the largest ${Math.max(...perTick)} calls (budget 500); ${perTick.filter((n) => n === 500).length} ticks used all 500 and carried the rest 100 ms later`);
console.log(`  receiver: ${receiver.stats.requests.toLocaleString("en-US")} requests, ${receiver.stats.errors.toLocaleString("en-US")} answered 500, ${receiver.stats.hangs} never answered; ${receiver.stats.stored.toLocaleString("en-US")} stored`);
console.log(`  tickwork: ${plural(counts.failed, "failed call")} retried (${counts.timeouts} of them timeouts), ${counts.dropped} dropped after the 6th attempt (then replayed)`);
console.log(`  outbox now: daily ${daily.pending} pending, ${daily.retrying} retrying, ${daily.dropped} dropped; hourly ${hourly.pending} pending, ${hourly.retrying} retrying, ${hourly.dropped} dropped`);
console.log(`  receiver's store: ${rows.hourly.toLocaleString("en-US")} hourly rows, ${rows.daily.toLocaleString("en-US")} daily rows (one per account and period)`);
console.log(`  re-deliveries (same webhook id again): ${receiver.stats.redelivered}`);
console.log(`  duplicate daily callbacks (one day of one account under two webhook ids): ${duplicates.daily} of ${dailyIds.size.toLocaleString("en-US")}; duplicate hourly: ${duplicates.hourly}`);
if (replayedIds) console.log(`  the replayed callback arrived under its original id: ${replayedIds.size === 1 && replayedIds.has(deadLetter!.id) ? "yes" : "NO"}`);

// ---- helpers ------------------------------------------------------------------------------------

/**
 * One tick. A call the receiver never answers holds its tick until the send timeout, on the
 * simulated clock: once every open call is one the receiver is holding, the clock jumps to it.
 */
async function tickOnce() {
  let settled = false;
  const ticking = tw.tick().finally(() => (settled = true));
  while (!settled) {
    await sleep(2);
    const open = started - finished;
    if (!settled && open > 0 && open === receiver.hanging) {
      say(`${open} call${open === 1 ? "" : "s"} unanswered: the simulated clock moves ${SEND_TIMEOUT} on, to their timeout`);
      await clock.advance(SEND_TIMEOUT);
    }
  }
  return ticking;
}

/** What the pipeline run in this tick did, if one ran (its result is kept as the task's lastResult). */
async function reportPipeline(): Promise<void> {
  if (!pipelineRan) return;
  pipelineRan = false;
  const { tasks } = await tw.scheduler.status();
  const r = tasks.find((t) => t.name === PIPELINE_TASK)!.lastResult as PipelineResult;
  const parts: string[] = [];
  if (r.processed.hoursClosed.length) parts.push(`hour ${r.processed.hoursClosed.map((h) => h.slice(11, 16)).join(", ")} closed`);
  if (r.processed.daysClosed.length) parts.push(`day ${r.processed.daysClosed.join(", ")} closed`);
  if (r.hourly.emitted) parts.push(`${r.hourly.emitted.toLocaleString("en-US")} hourly callbacks emitted`);
  if (r.daily.emitted) parts.push(`${r.daily.emitted.toLocaleString("en-US")} daily callbacks emitted (every tracking caught up to midnight)`);
  // Said when it changes: every run reads the trackings that owe the day again.
  if (r.daily.skipped && r.daily.skipped !== lastSkipped) parts.push(`skipped ${plural(r.daily.skipped, "tracking")} that still owe the day: the callback waits for a retry, so it is not emitted twice`);
  lastSkipped = r.daily.skipped;
  if (r.daily.droppedSettled) parts.push(`${r.daily.droppedSettled} dropped daily callback${r.daily.droppedSettled === 1 ? "" : "s"} settled: the tracking moves on, the callback waits in the dead-letter table`);
  if (parts.length) say(`pipeline: ${parts.join("; ")}`);
}

function formatTick(used: number, calls: ReceivedRequest[], carried: boolean, nextWakeAt: number | null): string {
  const of = (kind: string) => calls.filter((c) => c.key.startsWith(`${kind}:`));
  const part = (kind: string) => {
    const list = of(kind);
    const retries = list.filter((c) => c.attempt > 1).length;
    return `${kind} ${list.length}${retries ? ` (${plural(retries, "retry", "retries")})` : ""}`;
  };
  const failed = calls.filter((c) => c.reply !== "ok").length;
  const next = nextWakeAt === null ? "nothing scheduled" : carried ? "carried: next tick in 100 ms" : `next at ${sim(nextWakeAt)}`;
  return `tick #${String(tickNumber).padStart(3)}: ${String(used).padStart(3)} call${used === 1 ? " " : "s"} = ${part("daily")} + ${part("hourly")}; ${calls.length - failed} ok, ${failed} failed; ${next}`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

function onEvent(event: LogEvent): void {
  if (event.event === "task.succeeded" && event.task === PIPELINE_TASK) pipelineRan = true;
  else if (event.event === "delivery.failed") {
    counts.failed++;
    if (String(event.error).includes("no answer within")) counts.timeouts++;
  } else if (event.event === "delivery.dropped") {
    counts.dropped++;
    say(`tickwork delivery.dropped ${event.key} after ${event.attempts} attempts (last error: ${String(event.error).split("\n")[0]}): kept for replay`);
  } else if (event.event === "delivery.replayed") say(`tickwork delivery.replayed ${JSON.stringify(event.ids)}`);
  else if (event.level === "error" || event.level === "critical") say(`tickwork ${event.event} ${JSON.stringify(event)}`);
}

/** 2 March 2026, or the day after the last one an earlier run on this database simulated. */
async function nextDemoDay(target: DatabaseTarget): Promise<string> {
  const first = "2026-03-02";
  if (!args.target) return first;
  const { store, db } = await openDatabase(target);
  try {
    const [row] = await db.query<{ value: number | string }>(GET_STATE, [PROCESSED_UNTIL]);
    return row ? dayOf(midnightOf(dayOf(Number(row.value))) + DAY) : first;
  } finally {
    await Promise.allSettled([store.close(), db.close()]);
  }
}

function parseArgs(argv: string[]): { target: DatabaseTarget | undefined } {
  let db: string | undefined = process.env.DATABASE_URL || undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--db") {
      db = argv[++i];
      if (db === undefined) throw new Error("--db needs a value");
    } else if (arg.startsWith("--db=")) db = arg.slice(5);
    else throw new Error(`unknown argument ${arg}; use --db <file | postgres://...>`);
  }
  if (!db) return { target: undefined };
  // The demo's tables and tickwork's go to a schema of their own, so a shared database stays tidy.
  if (/^postgres(ql)?:\/\//.test(db)) return { target: { kind: "postgres", url: db, schema: "account_extremes_demo" } };
  return { target: { kind: "sqlite", path: db } };
}
