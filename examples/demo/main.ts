/**
 * `npm start`: every example in one process on one SQLite file, with their fake upstreams as real
 * HTTP servers on 127.0.0.1, and the dashboard at http://127.0.0.1:8787 (PORT overrides; 0 picks a
 * free port). Runs until Ctrl-C, then stops gracefully: in-flight jobs and runs finish first.
 *
 *   npm start                        # a fresh SQLite file in the OS temp dir, removed at exit
 *   npm start -- --db ./demo.db      # keep the database
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTickwork, type LogEvent } from "../../src/index.js";
import { serve } from "../../src/server/index.js";
import { openDatabase, type DatabaseTarget } from "../support/database.js";
import { accountExtremesPart, paperOrdersPart, priceRefreshPart, subscriptionsPart, symbolFanoutPart, type Part, type Shared } from "./parts.js";

const startedAt = Date.now();
const say = (line: string) => console.log(`[${((Date.now() - startedAt) / 1000).toFixed(1).padStart(6)}s] ${line}`);
const dir = mkdtempSync(join(tmpdir(), "tickwork-demo-"));
const dbArg = process.argv.indexOf("--db");
const path = dbArg >= 0 && process.argv[dbArg + 1] ? process.argv[dbArg + 1]! : join(dir, "tickwork.db");
const target: DatabaseTarget = { kind: "sqlite", path };
const port = process.env.PORT === undefined ? 8787 : Number(process.env.PORT);
const token = process.env.TICKWORK_ADMIN_TOKEN ?? randomBytes(18).toString("base64url");

const { store, db } = await openDatabase(target, []);
const tw = await createTickwork({ store, logger: (event) => onEvent(event), logLevel: "info", handleSignals: false });
const shared: Shared = { tw, db, target, dir, say };
const parts: Part[] = [];
for (const start of [subscriptionsPart, priceRefreshPart, symbolFanoutPart, accountExtremesPart, paperOrdersPart]) parts.push(await start(shared));
await tw.start();
for (const part of parts) part.begin();
const server = await serve(tw, { port, token });

console.log("");
console.log("tickwork demo: every example on one engine and one SQLite file");
console.log(`  database   ${path}${dbArg >= 0 ? "" : " (fresh, removed at exit)"}`);
for (const part of parts) console.log(`  ${part.name.padEnd(17)} ${part.describe}`);
console.log(`  dashboard  ${server.url}#token=${token}`);
console.log(`  admin API  ${server.url}api/overview   (Authorization: Bearer ${token})   metrics ${server.url}metrics`);
console.log("  Ctrl-C stops gracefully.");
console.log("");

const summary = setInterval(() => void printSummary().catch(() => {}), 10_000);
let stopping = false;
process.once("SIGINT", () => void stop("Ctrl-C"));
process.once("SIGTERM", () => void stop("SIGTERM"));

async function stop(why: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  say(`${why}: stopping gracefully (in-flight jobs and runs finish first)`);
  clearInterval(summary);
  await server.close();
  await Promise.allSettled(parts.map((p) => p.stop()));
  await tw.stop();
  await db.close();
  if (dbArg < 0) rmSync(dir, { recursive: true, force: true });
  say("stopped");
  process.exit(0);
}

const counts = { succeeded: 0, retries: 0, failed: 0, backoffs: 0, converged: 0, deliveries: 0 };

async function printSummary(): Promise<void> {
  const queues = await tw.jobs.counts();
  const jobs = queues.map((q) => `${q.queue} ${q.counts.succeeded} ok / ${q.counts.pending + q.counts.running} live / ${q.counts.failed} dead`).join(", ");
  const fanouts = await Promise.all([...tw.fanouts.values()].map((f) => f.status()));
  const fan = fanouts.map((f) => `${f.name} v${f.version} ${f.targets.filter((t) => !t.behind).length}/${f.targets.length} current`).join(", ");
  const deliveries = await Promise.all([...tw.deliveries.values()].map((d) => d.status()));
  const sent = deliveries.map((d) => `${d.name.replace("account-extremes.", "")} ${d.pending} pending / ${d.retrying} retrying / ${d.dropped} dropped`).join(", ");
  say(`summary: jobs ${jobs || "none yet"}; ${counts.retries} retries scheduled; ${counts.backoffs} task backoffs; fan-out ${fan || "-"}; callbacks ${sent || "-"}`);
}

/** The events worth a line: retries, failures, backoffs, convergence. The dashboard shows the rest. */
function onEvent(event: LogEvent): void {
  const { event: name } = event;
  if (name === "job.succeeded") counts.succeeded++;
  if (name === "delivery.failed" && counts.deliveries++ < 3) say(`delivery ${String(event.delivery)}: ${String(event.key)} attempt ${String(event.attempt)} failed (${firstLine(event.error)}); retry ${((Number(event.retryAt) - Number(event.failedAt)) / 1000).toFixed(0)}s after that failure`);
  if (name === "job.retry_scheduled") {
    if (counts.retries++ < 5) say(`queue ${String(event.queue)}: job ${String(event.id)} attempt ${String(event.attempt)} failed (${firstLine(event.error)}); retry in ${((Number(event.delayMs) || 0) / 1000).toFixed(0)}s`);
  } else if (name === "job.failed") say(`queue ${String(event.queue)}: job ${String(event.id)} failed for good after ${String(event.attempts)} attempts: ${firstLine(event.error)}`);
  else if (name === "task.backoff") {
    counts.backoffs++;
    say(`task ${String(event.task)} backed off on a rate limit until +${((Number(event.nextRunAfter) - Date.now()) / 1000).toFixed(0)}s (not a failure)`);
  } else if (name === "task.failed") say(`task ${String(event.task)} failed: ${firstLine(event.error)}`);
  else if (name === "fanout.retry_scheduled") say(`fan-out ${String(event.fanout)}: ${String(event.failed)} pushes failed; retry at +${((Number(event.retryAt) - Date.now()) / 1000).toFixed(0)}s`);
  else if (name === "fanout.converged") {
    counts.converged++;
    say(`fan-out ${String(event.fanout)}: every receiver has state v${String(event.version)}`);
  } else if (name === "engine.started") say(`engine started on ${String(event.store)}; events go to ${String(event.logSink)} (${String(event.logSinkChosenBy)})`);
  else if (name === "delivery.dropped" || name === "store.error") say(`${name} ${JSON.stringify(event)}`);
}

function firstLine(text: unknown): string {
  return String(text).split("\n")[0]!.slice(0, 120);
}
