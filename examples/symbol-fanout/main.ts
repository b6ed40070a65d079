/**
 * Seed 001 on tickwork, end to end on real parts: 77 receivers as real HTTP servers on 127.0.0.1
 * (7 collectors and 70 alert receivers across 7 locations, each keeping its state in a JSON file),
 * the symbol registry's table and tickwork's in an SQLite file (or PostgreSQL), and the fan-out
 * pushing the enabled symbols with a share of the pushes failing. The 30 s to 15 min waits between
 * rounds run on a fake clock that jumps to each wake-up; every push is real. Takes a few seconds.
 *
 *   npm run example:symbol-fanout                          # SQLite file in the OS temp dir, removed afterwards
 *   npm run example:symbol-fanout -- --db ./registry.db
 *   npm run example:symbol-fanout -- --db postgres://postgres@127.0.0.1:5432/test   (or DATABASE_URL=...)
 *   npm run example:symbol-fanout -- --fail-rate 0.3 --seed 5
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LogEvent } from "../../src/index.js";
import { EmptyStateError } from "../../src/fanout/index.js";
import { fakeClock } from "../../src/testing/index.js";
import { CRAWL_EVERY, CRAWL_TASK, FANOUT_NAME, RECONCILE_EVERY, RETRY_STEPS, createSymbolFanoutApp, type PushOutcome } from "./app.js";
import { describeTarget, type DatabaseTarget } from "./database.js";
import { randomFailures } from "./failures.js";
import { ALERTS_PER_LOCATION, LOCATIONS, startFleet } from "./fleet.js";
import type { ReceiverView } from "./receiver.js";
import { PushLog, runRound, runUntilConverged, type Round } from "./rounds.js";
import { DEMO_SYMBOLS, STATIC_SYMBOL_INFO, type SymbolMetadata } from "./symbols.js";

/** Hung pushes are held this long (real time) before the receiver drops the connection. */
const HANG_MS = 300;

const args = parseArgs(process.argv.slice(2));
const realStart = Date.now();

// ---- the parts ------------------------------------------------------------------------------

const tempDir = mkdtempSync(join(tmpdir(), "tickwork-symbol-fanout-"));
const target: DatabaseTarget = args.target ?? { kind: "sqlite", path: join(tempDir, "registry.db") };
const fleet = await startFleet({ storageDir: join(tempDir, "receivers"), hangMs: HANG_MS });
const clock = fakeClock(Math.floor(Date.now() / 60_000) * 60_000);
const clockStart = clock.now();
const log = new PushLog();
const problems: LogEvent[] = [];
const app = await createSymbolFanoutApp({
  database: target,
  targets: fleet.targets,
  clock,
  logger: (event) => {
    if (event.level === "error" || event.level === "critical") problems.push(event);
  },
  onPush: log.record,
});
const { symbols, registry } = app;
const server = await app.listen();
const driver = { app, clock, log };
const ports = fleet.receivers.map((r) => Number(new URL(r.url).port));

console.log("seed 001 on tickwork: a symbol registry pushing its enabled symbols to 7 collectors and 70 alert receivers");
console.log(`database:   ${describeTarget(target)}${args.target ? "" : " (a fresh temp file, removed at exit)"}`);
console.log(`receivers:  ${fleet.receivers.length} HTTP servers on 127.0.0.1:${Math.min(...ports)}-${Math.max(...ports)}; in each of ${LOCATIONS.join(", ")}: 1 collector + ${ALERTS_PER_LOCATION} alert receivers; each keeps its state in a JSON file (the Durable Object's KV)`);
console.log(`failures:   ${pct(args.failRate)} of pushes fail, half answered 500, half held ${HANG_MS} ms and dropped (seed ${args.seed}); some receivers restart`);
console.log(`fan-out:    "${FANOUT_NAME}": collectors get { symbol, ticker, decimals, priceScale }, alerts get names; retry after ${RETRY_STEPS.join(", ")}; reconcile after each run of the crawler while it is enabled, every ${RECONCILE_EVERY} while it is not (disabled at first)`);
console.log(`clock:      a fake clock that jumps to each wake-up, so the minutes between retries take no time; every push is real HTTP`);
console.log(`admin API:  ${server.url}/api/symbols  POST /api/symbols/:symbol/enable|disable  GET /api/fanout  POST /api/fanout/reconcile`);

// ---- 1. before any push -------------------------------------------------------------------------

section("1. Before any push: receivers run on their defaults");
await registry.upsert(DEMO_SYMBOLS);
// A database an earlier run left behind has a fan-out row with its own next wake-up: start afresh.
await symbols.reconcileNow();
const enabledNow = await registry.enabled();
say(`registry: ${DEMO_SYMBOLS.length} symbols, ${enabledNow.length} enabled (${enabledNow.map((s) => s.symbol).join(" ")})`);
const watched = { alert: "alert-apac-03", collector: "collector-oc" };
const chain: string[] = [];
await fleet.get(watched.alert).restart();
await fleet.get(watched.collector).restart();
say(`${watched.alert} restarts before any push: ${describeView(await fleet.view(watched.alert))}`);
say(`${watched.collector} restarts before any push: ${describeView(await fleet.view(watched.collector))}`);
chain.push(source(await fleet.view(watched.alert)));

// ---- 2. first push ------------------------------------------------------------------------------

section(`2. The first round pushes to all 77; ${pct(args.failRate)} of pushes fail`);
fleet.setFailure(randomFailures({ seed: args.seed, rate: args.failRate, modes: ["error", "hang"] }));
await converge("the first list");
say(`collector-weur runs on: ${formatMetadata((await fleet.view("collector-weur")).symbols as SymbolMetadata[])}`);
say(`alert-weur-01 runs on: ${((await fleet.view("alert-weur-01")).symbols as string[]).join(" ")}`);
say(`${watched.alert}: ${describeView(await fleet.view(watched.alert))}`);
chain.push(source(await fleet.view(watched.alert)));

// ---- 3. an admin change while receivers restart ---------------------------------------------------

section("3. The admin enables DOGE while collector-sam is down and alert-apac-03 restarts");
await fleet.get(watched.alert).restart();
say(`${watched.alert} restarts (memory lost, file kept): ${describeView(await fleet.view(watched.alert))}`);
chain.push(source(await fleet.view(watched.alert)));
const sam = fleet.get("collector-sam");
await sam.stop();
say("collector-sam stops: pushes to it are refused until it is back");
await admin("POST", "/api/symbols/DOGE/enable");
const first = await round();
await sam.start();
say(`collector-sam is back: ${describeView(await fleet.view("collector-sam"))}`);
if (!first.converged) await converge("DOGE", first);
say(`${watched.alert}: ${describeView(await fleet.view(watched.alert))}`);
chain.push(source(await fleet.view(watched.alert)));
say(`fall-back chain of ${watched.alert}: ${chain.join(" -> ")}`);

// ---- 4. empty lists ---------------------------------------------------------------------------------

section("4. An empty symbol list is refused: by the registry, the fan-out and the receivers");
fleet.setFailure(null);
const enabled = (await registry.enabled()).map((s) => s.symbol);
for (const symbol of enabled.slice(0, -1)) await app.setEnabled(symbol, false);
say(`disabled ${enabled.length - 1} of the ${enabled.length} enabled symbols with the admin function; only ${enabled.at(-1)} is left`);
await admin("POST", `/api/symbols/${enabled.at(-1)}/disable`);
await converge(`only ${enabled.at(-1)} (${enabled.length - 1} changes, pushed as one state)`);
try {
  await symbols.push([]);
} catch (error) {
  say(`symbols.push([]) throws ${error instanceof EmptyStateError ? `EmptyStateError (${error.code})` : String(error)}: nothing is written or sent`);
}
await app.db.query("UPDATE fanout_symbols SET enabled = 0");
say("the table is emptied behind the admin's back (the seed's \"transient query issue\"), then a reconciliation is asked for:");
await admin("POST", "/api/fanout/reconcile");
const refused = await round();
say(`    refused: the state read was empty, nothing was sent: ${firstLine(refused.status.lastError)}`);
const direct = await fetch(`${fleet.get("alert-weur-01").url}/symbols`, { method: "POST", headers: { "content-type": "application/json" }, body: "[]" });
say(`POST [] straight to alert-weur-01 -> ${direct.status} ${await direct.text()}`);
say(`alert-weur-01 still runs on: ${describeView(await fleet.view("alert-weur-01"))}`);
await app.db.query("UPDATE fanout_symbols SET enabled = 1 WHERE symbol = $1", [enabled.at(-1)!]);
for (const symbol of enabled.slice(0, -1)) await app.setEnabled(symbol, true);
say(`the table is repaired and the ${enabled.length - 1} symbols enabled again`);
fleet.setFailure(randomFailures({ seed: args.seed + 1, rate: args.failRate, modes: ["error", "hang"] }));
await converge("the repaired list");

// ---- 5. reconciliation -------------------------------------------------------------------------------

section(`5. Reconciliation every ${RECONCILE_EVERY}: a receiver that lost its storage too gets the list back`);
const wnam = fleet.get("collector-wnam");
await wnam.restart({ wipeStorage: true });
say(`collector-wnam restarts with its storage wiped: ${describeView(await fleet.view("collector-wnam"))}`);
await converge("the reconciliation");
say(`collector-wnam: ${describeView(await fleet.view("collector-wnam"))}`);

// ---- 6. reconciliation follows the crawler ------------------------------------------------------------

section(`6. The crawler is enabled: reconciliation rides on its runs (${CRAWL_TASK}, every ${CRAWL_EVERY}); disabled, it has its own ${RECONCILE_EVERY} again`);
fleet.setFailure(null);
await admin("POST", "/api/crawler/enable");
say("the fan-out chooses again at the end of its next round, and follows the crawler from then on");
await round();
await wakeUp();
await wakeUp();
await admin("POST", "/api/crawler/disable");
say("the crawler's next run skips, and the fan-out, choosing again after it, has its own interval back");
await wakeUp();
await wakeUp();

// ---- the end -----------------------------------------------------------------------------------------

const status = await symbols.status();
const views = await fleet.views();
const totals = fleet.totals();
await app.stop();
await fleet.close();
rmSync(tempDir, { recursive: true, force: true });
printSummary();

// ---- output ----------------------------------------------------------------------------------------

function printSummary(): void {
  const outcomes = log.outcomes;
  const count = (kind: string) => outcomes.filter((o) => o.result !== "ok" && failureKind(o) === kind).length;
  const sources = ["pushed", "stored", "default"].map((s) => `${views.filter((v) => v.source === s).length} ${s}`).join(", ");
  console.log("");
  console.log("summary");
  const rows: [string, string | number][] = [
    ["fan-out version", status.version],
    ["converged (every receiver acknowledged it)", String(status.converged)],
    ["pushes sent", outcomes.length],
    ["  failed: 500 / dropped / refused (down) / timeout", ["500", "dropped", "refused", "timeout"].map(count).join(" / ")],
    ["receivers' sources (GET /state)", sources],
    ["receivers' answers: accepted / refused (400, 422)", `${totals.accepted} / ${totals.refused}`],
    ["receiver restarts", totals.restarts],
    ["real time", `${((Date.now() - realStart) / 1000).toFixed(1)} s for ${since(clock.now())} on the clock`],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  for (const [label, value] of rows) console.log(`  ${label.padEnd(width)}  ${value}`);
  for (const p of problems) console.log(`  tickwork ${p.event}: ${firstLine(String(p.error ?? ""))}`);
}

/**
 * Jumps to the engine's next wake-up (the fan-out's or the crawler's, whichever is first), ticks, and
 * says what ran: `runRound` follows the fan-out's own wake-ups only, and one that follows the crawler has none.
 */
async function wakeUp(): Promise<void> {
  const [before, tasks] = await Promise.all([symbols.status(), app.tw.scheduler.status()]);
  const crawl = tasks.tasks.find((t) => t.name === CRAWL_TASK)!;
  const next = Math.min(...[before.nextAt, crawl.nextRunAt].filter((t): t is number => t !== null));
  await clock.set(next);
  const from = log.outcomes.length;
  await app.tw.tick();
  const pushes = log.outcomes.slice(from);
  const after = await symbols.status();
  const ran = (await app.tw.scheduler.status()).tasks.find((t) => t.name === CRAWL_TASK)!;
  const crawled = ran.lastRunAt === next ? `crawler ran (${JSON.stringify(ran.lastResult)})` : "no crawler run";
  const pushed = pushes.length ? `reconciled: ${plural(pushes.length, "push", "pushes")}` : "no reconciliation";
  const wake = after.nextAt === null ? "none of its own (it follows the crawler)" : `${after.nextReason} at ${since(after.nextAt)}`;
  say(`${crawled}; ${pushed}; the fan-out's next wake-up: ${wake}`);
}

async function round(): Promise<Round> {
  const r = await runRound(driver);
  if (!r) throw new Error("the fan-out has nothing scheduled");
  printRound(r);
  return r;
}

/** Runs rounds until every receiver has the version, and says how long that took on the clock. */
async function converge(what: string, already?: Round): Promise<void> {
  const rounds = already ? [already] : [];
  rounds.push(...(await runUntilConverged(driver, { onRound: printRound })));
  const last = rounds.at(-1)!;
  const wall = rounds.reduce((sum, r) => sum + r.wallMs, 0);
  say(`converged on ${what}: all 77 receivers have version ${last.version} after ${plural(rounds.length, "round", "rounds")}, ${duration(last.at - rounds[0]!.at)} on the clock, ${Math.round(wall)} ms of real time`);
}

function printRound(r: Round): void {
  const kinds = new Map<string, number>();
  for (const f of r.failed) kinds.set(failureKind(f), (kinds.get(failureKind(f)) ?? 0) + 1);
  const failed = r.failed.length ? `, ${r.failed.length} failed (${[...kinds].map(([k, n]) => `${n}× ${k}`).join(", ")})` : "";
  const who = r.failed.length > 0 && r.failed.length <= 3 ? `: ${r.failed.map((f) => f.target).join(", ")}` : "";
  const next = r.nextAt === null ? "nothing scheduled" : `${r.nextReason} at ${since(r.nextAt)}`;
  say(`round (${r.reason}, v${r.version}): ${plural(r.pushes.length, "push", "pushes")}, ${r.pushes.length - r.failed.length} ok${failed}${who}; ${Math.round(r.wallMs)} ms; next: ${next}`);
}

async function admin(method: string, path: string): Promise<void> {
  const res = await fetch(`${server.url}${path}`, { method });
  say(`${method} ${path} -> ${res.status} ${await res.text()}`);
}

function failureKind(o: PushOutcome): string {
  if (o.result === "http") return String(o.status);
  if (o.result === "timeout") return "timeout";
  return o.error?.includes("ECONNREFUSED") ? "refused" : "dropped";
}

function describeView(v: ReceiverView): string {
  if (v.symbols === null) return `source ${v.source}: null, every symbol allowed`;
  const names = v.symbols.map((s) => (typeof s === "string" ? s : s.symbol)).join(" ");
  const what = v.kind === "collector" && v.source === "default" && v.symbols.length === STATIC_SYMBOL_INFO.length ? "the static symbol table" : `${v.symbols.length} symbols`;
  return `source ${v.source}${v.version !== null ? ` (v${v.version})` : ""}: ${what} (${names})`;
}

function source(v: ReceiverView): string {
  return v.version !== null ? `${v.source} (v${v.version})` : v.source;
}

function formatMetadata(list: SymbolMetadata[]): string {
  return list.map((s) => `${s.ticker}/${s.decimals}dp/×${s.priceScale}`).join(" ");
}

function section(title: string): void {
  console.log("");
  console.log(title);
}

function say(line: string): void {
  console.log(`[${since(clock.now())}] ${line}`);
}

/** The fake clock's time since the demo began, as +h:mm:ss. */
function since(at: number): string {
  const s = Math.round((at - clockStart) / 1000);
  return `+${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
}

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : s % 60 === 0 ? `${s / 60}m` : `${Math.floor(s / 60)}m${s % 60}s`;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function pct(rate: number): string {
  return `${Math.round(rate * 100)}%`;
}

function firstLine(text: unknown): string {
  return String(text).split("\n")[0]!;
}

function parseArgs(argv: string[]): { target: DatabaseTarget | undefined; failRate: number; seed: number } {
  let db: string | undefined = process.env.DATABASE_URL || undefined;
  let failRate = 0.2;
  let seed = 1;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [name, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${name} needs a value`);
      return v;
    };
    if (name === "--db") db = value();
    else if (name === "--fail-rate") failRate = Number(value());
    else if (name === "--seed") seed = Number(value());
    else throw new Error(`unknown argument ${arg}; use --db <file | postgres://...>, --fail-rate <0..0.9>, --seed <integer>`);
  }
  // Above 0.9 the demo's rounds would go on for hours of fake time; at 1 it never converges.
  if (!(failRate >= 0 && failRate <= 0.9)) throw new Error("--fail-rate must be a number from 0 to 0.9");
  if (!Number.isInteger(seed)) throw new Error("--seed must be an integer");
  if (!db) return { target: undefined, failRate, seed };
  // The demo's tables and tickwork's go to a schema of their own, so a shared database stays tidy.
  if (/^postgres(ql)?:\/\//.test(db)) return { target: { kind: "postgres", url: db, schema: "symbol_fanout_demo" }, failRate, seed };
  return { target: { kind: "sqlite", path: db }, failRate, seed };
}
