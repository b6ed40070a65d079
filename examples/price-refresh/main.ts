/**
 * Seed 003 on tickwork, end to end on real parts: a fake Tenero with a small budget and a fake chain
 * API (real HTTP on 127.0.0.1), an SQLite file (or PostgreSQL), tickwork's scheduler running the
 * price refresh and the competition sweep, and the Hono API reading the cache. Runs on short
 * cadences for ~28 s, prints what happens, and exits.
 *
 *   npm run example:price-refresh                          # SQLite file in the OS temp dir, removed afterwards
 *   npm run example:price-refresh -- --db ./prices.db
 *   npm run example:price-refresh -- --db postgres://postgres@127.0.0.1:5432/test   (or DATABASE_URL=...)
 *   npm run example:price-refresh -- --seconds 40          # how long it runs (default 28)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LogEvent, RunRecord, TaskStatus } from "../../src/index.js";
import { BASE_TOKENS, createPriceRefreshApp } from "./app.js";
import { describeTarget, type DatabaseTarget } from "./database.js";
import { startFakeHiro, swapTx, transferTx } from "./fake-hiro.js";
import { startFakeTenero } from "./fake-tenero.js";
import type { PriceReport } from "./prices.js";
import { reportSwaps, sweepCursor } from "./swaps.js";
import { PRICES_EVERY, PRICES_TASK, SWEEP_EVERY, SWEEP_TASK, type PriceRefreshResult, type SweepResult } from "./tasks.js";

const PRICES_DEMO_EVERY = "5s";
const SWEEP_DEMO_EVERY = "15s";
/**
 * Tenero allows 100 a minute; 10 per 15 s here, for the fake and for the shared limiter alike (one
 * request every 1.5 s). A run wants 6-9 tokens, so a window's budget is spent within two runs, and
 * the window's reset comes at most 25 s into the demo: both show in one run.
 */
const BUDGET = 10;
const WINDOW_MS = 15_000;
const MAX_AGE = "15s";
const AGENTS = ["SP1AGENTALPHA", "SP2AGENTBRAVO", "SP3AGENTCHARLIE"];
const OUTSIDER = "SP9SOMEONEELSE";
/** Tokens the agents start swapping during the run: the sweep finds them, then the price task prices them. */
const NEW_TOKENS = ["leo", "odin", "pepe", "nothing"];
/** Epoch-ms fields, printed as seconds since the demo started, like the lines' prefix. */
const TIMES = new Set(["resetAt", "retryAfter", "nextRunAfter", "scheduledAt", "startedAt", "until"]);

const args = parseArgs(process.argv.slice(2));
const startedAt = Date.now();
const since = (ms: number) => `${((ms - startedAt) / 1000).toFixed(1)}s`;
const say = (line: string) => console.log(`[${since(Date.now()).padStart(6)}] ${line}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- the parts ------------------------------------------------------------------------------

const tempDir = args.target ? undefined : mkdtempSync(join(tmpdir(), "tickwork-price-refresh-"));
const target: DatabaseTarget = args.target ?? { kind: "sqlite", path: join(tempDir!, "prices.db") };
const tenero = await startFakeTenero({ minuteLimit: BUDGET, windowMs: WINDOW_MS });
const hiro = await startFakeHiro();

const app = await createPriceRefreshApp({
  database: target,
  teneroUrl: tenero.url,
  hiroUrl: hiro.url,
  agents: AGENTS,
  cadence: { prices: PRICES_DEMO_EVERY, sweep: SWEEP_DEMO_EVERY },
  priceMaxAge: MAX_AGE,
  requestTimeout: "3s",
  teneroLimit: { max: BUDGET, per: WINDOW_MS },
  logLevel: "info",
  logger: (event) => onEvent(event),
});
const { tw, db } = app;
const server = await app.listen();

console.log("seed 003 on tickwork: Tenero price refresh + competition sweep, one scheduler");
console.log(`database:    ${describeTarget(target)}${tempDir ? " (a fresh temp file, removed at exit)" : ""}`);
console.log(`fake Tenero: ${tenero.url}  budget ${BUDGET} requests per ${WINDOW_MS / 1000}s window per IP (Tenero: 100/minute, 50,000/month, x-ratelimit-type web-ui-ip)`);
console.log(`limiter:     tw.limiter("tenero", { max: ${BUDGET}, per: ${WINDOW_MS} }): every process's Tenero calls draw from it; a 429 or a spent budget pauses it for all`);
console.log(`fake Hiro:   ${hiro.url}  a new block every 3s; agents ${AGENTS.join(", ")}`);
console.log(`tasks:       ${PRICES_TASK} every ${PRICES_DEMO_EVERY}, ${SWEEP_TASK} every ${SWEEP_DEMO_EVERY} in this demo; production: every "${PRICES_EVERY}" and every "${SWEEP_EVERY}" (README: why)`);
console.log(`tokens:      ${BASE_TOKENS.join(", ")} (static base) + SELECT DISTINCT token_in FROM swaps WHERE source = 'agent'`);
console.log(`API:         ${server.url}/api/prices?tokens=...  /api/scheduler/status  POST /api/scheduler/refresh  (prices older than ${MAX_AGE} are stale here; production 15m)`);
console.log(`logs:        tickwork's events and both HTTP clients' go to one function logger (level info), printed as "tickwork <event> ..."`);
console.log("");

// ---- the world moves --------------------------------------------------------------------------

// On a database an earlier run used, the sweep's cursor is where that run's chain ended: the fake
// chain continues above it, and the sweep picks up where it left off.
const cursor = await sweepCursor(db);
if (cursor) {
  hiro.startAbove(cursor);
  say(`reusing the database: competition_state says the sweep scanned up to block ${cursor}; it resumes above it`);
}
// Two swaps the agents reported on the request path before the demo: their tokens join the price set.
await reportSwaps(
  db,
  [
    { txId: "0xreported1", agent: AGENTS[0]!, tokenIn: "leo", tokenOut: "stx", amountIn: 2_500 },
    { txId: "0xreported2", agent: AGENTS[1]!, tokenIn: "alex", tokenOut: "sbtc", amountIn: 900 },
  ],
  tw.clock.now(),
);
hiro.addBlock([swapTx(AGENTS[0]!, { token_in: "leo", token_out: "stx", amount_in: 2_500 }, "success", "0xreported1"), transferTx(OUTSIDER)]);
let blockCount = 0;
const blocks = setInterval(() => {
  blockCount++;
  const agent = AGENTS[blockCount % AGENTS.length]!;
  const token = NEW_TOKENS[Math.min(NEW_TOKENS.length - 1, Math.floor(blockCount / 2))]!;
  const status = blockCount % 4 === 0 ? "abort_by_response" : "success";
  hiro.addBlock([swapTx(agent, { token_in: token, token_out: "stx", amount_in: 100 * blockCount }, status), transferTx(OUTSIDER), swapTx(OUTSIDER, { token_in: "stx", token_out: "welsh", amount_in: 5 })]);
}, 3_000);

await tw.start();
say(`tickwork started; both tasks have never run on this database, so both run now (immediately: true), then every ${PRICES_DEMO_EVERY} and ${SWEEP_DEMO_EVERY}`);

// ---- the readers --------------------------------------------------------------------------------

const askFor = [...BASE_TOKENS, "leo", "odin", "ghost"];
const deadline = startedAt + args.seconds * 1000;
await sleep(1_000);
await showPrices();
let refreshed = false;
while (Date.now() + 6_000 < deadline) {
  await sleep(6_000);
  await showPrices();
  if (!refreshed && Date.now() - startedAt > 12_000) {
    refreshed = true;
    await manualSweep();
    neighboursSpend();
  }
}
await sleep(Math.max(0, deadline - 500 - Date.now()));
await showPrices();

// ---- the end --------------------------------------------------------------------------------------

clearInterval(blocks);
const status = (await (await fetch(`${server.url}/api/scheduler/status`)).json()) as { tasks: TaskStatus[] };
await app.stop();
await Promise.all([tenero.close(), hiro.close()]);
if (tempDir) rmSync(tempDir, { recursive: true, force: true });
printSummary(status.tasks);

// ---- output ---------------------------------------------------------------------------------------

async function showPrices(): Promise<void> {
  const res = await fetch(`${server.url}/api/prices?tokens=${askFor.join(",")}`);
  const body = (await res.json()) as { prices: Record<string, PriceReport> };
  const reports = Object.entries(body.prices);
  const count = (s: PriceReport["status"]) => reports.filter(([, r]) => r.status === s).length;
  say(`GET /api/prices?tokens=${askFor.join(",")} -> ${res.status}: ${count("fresh")} fresh, ${count("stale")} stale, ${count("missing")} missing`);
  const cells = reports.map(([token, r]) =>
    r.status === "fresh" ? `${token} $${formatPrice(r.price)} (${(r.ageMs / 1000).toFixed(0)}s old)` : r.status === "stale" ? `${token} null (stale, ${(r.ageMs / 1000).toFixed(0)}s old)` : `${token} null (missing)`,
  );
  for (let i = 0; i < cells.length; i += 3) say(`    ${cells.slice(i, i + 3).join("   ")}`);
}

async function manualSweep(): Promise<void> {
  say(`POST /api/scheduler/refresh {"task":"${SWEEP_TASK}"}: the seed's refreshNow RPC, outside the sweep's schedule`);
  const res = await fetch(`${server.url}/api/scheduler/refresh`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ task: SWEEP_TASK }) });
  const body = (await res.json()) as { results: { outcome: string; result?: SweepResult; reason?: string }[] };
  const r = body.results[0]!;
  say(`    -> ${res.status}: ${r.outcome}${r.result ? `, ${formatSweep(r.result)}` : r.reason ? ` (${r.reason})` : ""}`);
}

/**
 * Our limiter keeps our own calls within the budget, but behind a datacenter's egress IP other tenants
 * spend the same budget. Here they leave one request of the window: the answer to it says nothing is
 * left, which pauses the limiter (for every process) and backs the price task off until the reset.
 */
function neighboursSpend(): void {
  const left = tenero.remaining().minute;
  if (left <= 1) return;
  tenero.spend(left - 1);
  say(`other tenants behind the same egress IP spend ${left - 1} of the ${left} requests left in this Tenero window`);
}

/** Task runs as they finish, read back from the status (the run is recorded before its event is logged). */
function onEvent(event: LogEvent): void {
  const { event: name } = event;
  if (name === "task.succeeded" || name === "task.backoff" || name === "task.failed") {
    const task = String(event.task);
    const scheduledAt = Number(event.scheduledAt);
    void tw.scheduler.status().then(({ tasks }) => {
      const run = tasks.find((t) => t.name === task)?.history.find((h) => h.scheduledAt === scheduledAt);
      say(formatRun(task, run, event));
    }, () => {});
    return;
  }
  if (name === "task.started") return;
  say(`  tickwork ${formatEvent(event)}`);
}

function formatRun(task: string, run: RunRecord | undefined, event: LogEvent): string {
  const manual = event.manual ? " (manual)" : "";
  if (!run) return `${task}${manual}: ${event.event}`;
  if (run.outcome === "failed") return `${task}${manual}: FAILED: ${firstLine(run.error)}`;
  if (task === SWEEP_TASK) return `${task}${manual}: ${run.outcome}, ${formatSweep(run.result as SweepResult)}`;
  const r = run.result as PriceRefreshResult;
  const base = `${task}${manual}: ${run.outcome === "backed_off" ? "BACKED OFF" : "succeeded"}: ${r.succeeded} fetched, ${r.failed} failed, ${r.deferred} deferred; budget left ${r.rateLimitRemaining ?? "?"}`;
  return run.outcome === "backed_off" ? `${base}; skipped until ${since(Number(event.nextRunAfter))} (the budget's reset), the sweep carries on` : base;
}

function formatSweep(r: SweepResult): string {
  return `scanned ${r.scanned}, found ${r.found}, inserted ${r.inserted}, alreadyKnown ${r.alreadyKnown}, pending ${r.pending}, rejected ${r.rejected}, cursor ${r.cursor}`;
}

/** `tickwork http.rate_limited client=tenero status=200 remaining=0 ...`: the event's name first, then its fields. */
function formatEvent(event: LogEvent): string {
  const { event: name, level: _level, time: _time, ...fields } = event;
  const parts: string[] = [name];
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || value === null || key === "method" || key === "maxAttempts" || key === "attempt") continue;
    if (key === "url" && typeof value === "string") parts.push(`path=${new URL(value).pathname}`);
    else if (TIMES.has(key) && typeof value === "number") parts.push(`${key}=${since(value)}`);
    else if (key === "error") parts.push(`error="${firstLine(value)}"`);
    else parts.push(`${key}=${typeof value === "object" ? JSON.stringify(value) : String(value)}`);
  }
  return parts.join(" ");
}

function printSummary(tasks: TaskStatus[]): void {
  console.log("");
  console.log("scheduler status at the end (GET /api/scheduler/status)");
  for (const t of tasks) {
    console.log(`  ${t.name} (${t.schedule}): ${t.runs} runs, ${t.failures} failed, consecutiveFailures ${t.consecutiveFailures}, last outcome ${t.lastOutcome ?? "-"}`);
    console.log(`    lastResult ${JSON.stringify(t.lastResult)}`);
  }
  const refused = tenero.requests.filter((r) => r.status === 429).length;
  console.log(`fake Tenero: ${tenero.requests.length} requests answered, ${refused} refused with 429`);
  console.log("Every price the API served came from the cache: no request waited on Tenero or spent its budget.");
}

function formatPrice(price: number): string {
  return price >= 100 ? price.toFixed(2) : price.toPrecision(4);
}

function firstLine(text: unknown): string {
  return String(text).split("\n")[0]!;
}

function parseArgs(argv: string[]): { target: DatabaseTarget | undefined; seconds: number } {
  let db: string | undefined = process.env.DATABASE_URL || undefined;
  let seconds = 28;
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
  if (!Number.isFinite(seconds) || seconds < 8) throw new Error("--seconds must be a number, at least 8");
  if (!db) return { target: undefined, seconds };
  // The demo's tables and tickwork's go to a schema of their own, so a shared database stays tidy.
  if (/^postgres(ql)?:\/\//.test(db)) return { target: { kind: "postgres", url: db, schema: "price_refresh_demo" }, seconds };
  return { target: { kind: "sqlite", path: db }, seconds };
}
