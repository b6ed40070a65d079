/**
 * `npm start`: every example in one process on one SQLite file, with their fake upstreams as real
 * HTTP servers on 127.0.0.1, and the dashboard at http://127.0.0.1:8787 (PORT overrides; 0 picks a
 * free port). Runs until Ctrl-C, then stops gracefully: in-flight jobs and runs finish first, the
 * temporary folder is removed, and it exits 0 (a stop asked for is a success, as `tickwork start`
 * does). A port in use, or any other failure to start, is one line on stderr and exit code 1, with
 * whatever had started closed again.
 *
 *   npm start                        # a fresh SQLite file in the OS temp dir, removed at exit
 *   npm start -- --db ./demo.db      # keep the database
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTickwork, systemClock, type LogEvent, type Tickwork } from "../../src/index.js";
import { serve, type Serving } from "../../src/server/index.js";
import { openDatabase, type DatabaseTarget } from "../support/database.js";
import { eventLine, newEventCounts, plural } from "./events.js";
import { isAddressInUse, onStopSignal, parsePort, portTaken, Teardown } from "./lifecycle.js";
import { accountExtremesPart, paperOrdersPart, priceRefreshPart, subscriptionsPart, symbolFanoutPart, type Part } from "./parts.js";

const HOST = "127.0.0.1";
const startedAt = Date.now();
const say = (line: string) => console.log(`[${((Date.now() - startedAt) / 1000).toFixed(1).padStart(6)}s] ${line}`);

const dbArg = process.argv.indexOf("--db");
const keptDb = dbArg >= 0 && process.argv[dbArg + 1] ? process.argv[dbArg + 1]! : undefined;
const port = parsePort(process.env.PORT, 8787) ?? refuse(`PORT must be a port number from 0 to 65535, got "${process.env.PORT}"`);
const token = process.env.TICKWORK_ADMIN_TOKEN ?? randomBytes(18).toString("base64url");
const portInUse = (p: number) => `port ${p} on ${HOST} is in use; stop what holds it, or run with PORT=<another port> (PORT=0 picks a free one)`;

// Checked before any upstream, file or engine exists, so a taken port costs nothing to undo.
if (await portTaken(port, HOST)) refuse(portInUse(port));

/** Set by the first Ctrl-C or SIGTERM, even one that comes while the demo is still starting. */
let stopRequest: string | undefined;
let running = false;
onStopSignal((signal) => {
  stopRequest = signal === "SIGINT" ? "Ctrl-C" : signal;
  if (running) void stop(stopRequest);
});

// The engine's clock, chosen here so the event lines can read it before the engine exists.
const clock = systemClock;
const counts = newEventCounts();
const teardown = new Teardown();
const dir = mkdtempSync(join(tmpdir(), "tickwork-demo-"));
// Receivers keep their state under `dir` even with --db, so the folder goes in every case.
teardown.add("temporary folder", () => rmSync(dir, { recursive: true, force: true }));
const path = keptDb ?? join(dir, "tickwork.db");
const target: DatabaseTarget = { kind: "sqlite", path };

let tw: Tickwork;
let parts: Part[];
let server: Serving;
try {
  ({ tw, parts, server } = await startDemo());
} catch (error) {
  const problems = await teardown.run();
  for (const problem of problems) console.error(`tickwork demo: while undoing the start: ${problem}`);
  refuse(isAddressInUse(error) ? portInUse(port) : `could not start: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
}

async function startDemo(): Promise<{ tw: Tickwork; parts: Part[]; server: Serving }> {
  const { store, db } = await openDatabase(target, []);
  teardown.add("database", () => db.close());
  const tw = await createTickwork({ store, clock, logger: onEvent, logLevel: "info", handleSignals: false }).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  teardown.add("engine", () => tw.stop());
  const parts: Part[] = [];
  for (const start of [subscriptionsPart, priceRefreshPart, symbolFanoutPart, accountExtremesPart, paperOrdersPart]) {
    const part = await start({ tw, db, target, dir, say });
    teardown.add(part.name, () => part.stop());
    parts.push(part);
  }
  await tw.start();
  for (const part of parts) part.begin();
  const server = await serve(tw, { port, host: HOST, token });
  teardown.add("admin server", () => server.close());
  return { tw, parts, server };
}

console.log("");
console.log("tickwork demo: every example on one engine and one SQLite file");
console.log(`  database   ${path}${keptDb ? "" : " (fresh, removed at exit)"}`);
for (const part of parts) console.log(`  ${part.name.padEnd(17)} ${part.describe}`);
console.log(`  dashboard  ${server.url}#token=${token}`);
console.log(`  admin API  ${server.url}api/overview   (Authorization: Bearer ${token})   metrics ${server.url}metrics`);
console.log("  Ctrl-C stops gracefully.");
console.log("");

const summary = setInterval(() => void printSummary().catch(() => {}), 10_000);
running = true;
if (stopRequest !== undefined) void stop(stopRequest);

/** Runs once (onStopSignal calls back once): exit code 0 when everything closed, 1 otherwise. */
async function stop(why: string): Promise<void> {
  say(`${why}: stopping gracefully (in-flight jobs and runs finish first)`);
  clearInterval(summary);
  const problems = await teardown.run();
  for (const problem of problems) say(`while stopping: ${problem}`);
  say("stopped");
  process.exit(problems.length === 0 ? 0 : 1);
}

async function printSummary(): Promise<void> {
  const queues = await tw.jobs.counts();
  const jobs = queues.map((q) => `${q.queue} ${q.counts.succeeded} ok / ${q.counts.pending + q.counts.running} live / ${q.counts.failed} dead`).join(", ");
  const fanouts = await Promise.all([...tw.fanouts.values()].map((f) => f.status()));
  const fan = fanouts.map((f) => `${f.name} v${f.version} ${f.targets.filter((t) => !t.behind).length}/${f.targets.length} current`).join(", ");
  const deliveries = await Promise.all([...tw.deliveries.values()].map((d) => d.status()));
  const sent = deliveries.map((d) => `${d.name.replace("account-extremes.", "")} ${d.pending} pending / ${d.retrying} retrying / ${d.dropped} dropped`).join(", ");
  say(`summary: jobs ${jobs || "none yet"}; ${plural(counts.retries, "retry", "retries")} scheduled; ${plural(counts.backoffs, "task backoff")}; fan-out ${fan || "-"}; callbacks ${sent || "-"}`);
}

/** One line on stderr and a nonzero exit: a demo that cannot start has nothing to show but why. */
function refuse(line: string): never {
  console.error(`tickwork demo: ${line}`);
  process.exit(1);
}

function onEvent(event: LogEvent): void {
  const line = eventLine(event, counts, clock.now());
  if (line !== null) say(line);
}
