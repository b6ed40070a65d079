/**
 * `npm run bench:admin`: what the operating surface (the admin server's `/metrics`, its JSON API and
 * the dashboard) costs when the jobs table is big. An operator opens the dashboard and Prometheus
 * scrapes `/metrics` exactly when a queue has piled up, so these reads must stay fast whatever the
 * table holds, not only on a test's handful of rows.
 *
 * For each store (a SQLite file in WAL mode, PostgreSQL; BENCH_STORES=sqlite or postgres runs one):
 * 1. the table: 1,000,000 succeeded jobs (one bulk INSERT), then through an engine 100 jobs failed
 *    with an error (a handler throwing PermanentJobError, run by `tick()`), 10,000 pending jobs due
 *    now and 10,000 scheduled 1 to 4 hours ahead (`enqueueMany`), all in one queue. The counts the
 *    engine reports are checked against these before anything is measured (on PostgreSQL they are
 *    kept by statement-level triggers, which must have counted the bulk INSERT too);
 * 2. over real HTTP on 127.0.0.1, with the bearer token and `accept-encoding: gzip` as a scraper
 *    sends it: `/metrics`, `GET /api/overview`, the job browser's first page
 *    (`/api/jobs?queue=..&limit=25`), a page deep in the table (`before` 1,000 ids above the oldest
 *    job), the failed jobs' first page, and the first page of a state no job is in (cancelled),
 *    which a list can only answer after looking at every job that might match. Each on a new engine
 *    and server: the first request is the cold one (no prepared statement, no kept count: SQLite
 *    counts finished jobs by reading them and keeps a slow count for a minute, so the cold figure is
 *    what a scrape pays once a minute), then N more, one after another -> the first, and the median
 *    with min-max, in ms; and the answer's size, as decoded and as sent (gzip);
 * 3. in headless Chromium, each load in a new browser context (empty cache and storage), after one
 *    untimed load (so the figures are the page's, the server's cold count being in (2)): the
 *    dashboard (`#token=...`) -> first contentful paint, the dashboard's own `tickwork:first-data`
 *    mark (set once its first overview has rendered) and the queue's row in the DOM, all from
 *    navigation start; the bytes transferred (Resource Timing): the shell (page, script,
 *    stylesheet) and the API calls made until the row showed; and the job browser opened by its
 *    link (`#/jobs?queue=...`, the token already in the tab's storage as after a reload) -> its
 *    first job row in the DOM. The rows' times come from a MutationObserver in the page, so
 *    Playwright's round trips are not in them.
 * The engines are not started: the queue has no handler here, and the table stays as filled, so
 * every request reads the same rows.
 *
 * Results go to the terminal and to bench/results/admin-latest.{json,md}. BENCH_QUICK=1 shrinks
 * every size (a smoke run of the harness, not a measurement) and writes admin-quick.* instead; a
 * run of one store writes admin-<store>-latest.* (admin-<store>-quick.*).
 */
import { request } from "node:http";
import { chromium, type Browser, type BrowserContext } from "playwright-core";
import { PermanentJobError } from "../src/queue/errors.js";
import { serve, type Serving } from "../src/server/index.js";
import { createTickwork, type Tickwork } from "../src/tickwork.js";
import { benchEngines, postgresBackend, sqliteBackend, type Backend, type Fixture } from "./fixtures.js";
import { fmt, loadLine, machineInfo, machineLine, markdownTable, now, quantile, textTable, watchLoad, writeResults, type Load, type MachineInfo } from "./support.js";

const QUICK = process.env.BENCH_QUICK === "1";
const STORES = process.env.BENCH_STORES ?? "sqlite,postgres";
// The store before "-quick", so that bench/results/*-quick.* (gitignored) covers a one-store smoke run too.
const OUT = `admin${STORES === "sqlite,postgres" ? "" : `-${STORES.replace(/,/g, "-")}`}-${QUICK ? "quick" : "latest"}`;
const FINISHED = QUICK ? 20_000 : 1_000_000;
const DUE = QUICK ? 1_000 : 10_000;
const SCHEDULED = QUICK ? 1_000 : 10_000;
const FAILED = QUICK ? 20 : 100;
/** Requests of each kind after the cold one. */
const REQUESTS = QUICK ? 3 : 30;
/** Cold loads of each view in Chromium. */
const LOADS = QUICK ? 3 : 10;
const ENQUEUE_BATCH = 1_000;
const QUEUE = "bench";
const TOKEN = "bench-admin-token-0123456789";
/** Where the deep page starts: this many ids above the oldest job, so it is a full page near the bottom. */
const DEEP_OFFSET = 1_000;
const LOAD_NOTE = ["the benchmark alone keeps about 1-2 busy: server, database, Chromium", "latencies"] as const;

/** Debian's chromium, headless, with nothing of its own going to the network (the tests' flags). */
const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** Where the dashboard keeps the admin token (sessionStorage), as src/server/dashboard/ui/api.ts names it. */
const TOKEN_KEY = "tickwork.adminToken";

const bench = benchEngines();
/** A count (of jobs, of bytes) as a whole number: 100 -> "100", never "100.0". */
const count = (n: number) => n.toLocaleString("en-US");

// ---- the table --------------------------------------------------------------------------------

interface Filled {
  seconds: number;
  counts: Record<string, number>;
}

/** Fills a fresh database as the header says, and checks the engine counts what was written. */
async function fill(fx: Fixture): Promise<Filled> {
  const t0 = now();
  await fx.addFinished(QUEUE, FINISHED);
  // Its own engine with a silent logger: the failures it makes are the point, not problems to report.
  const tw = await createTickwork({ store: fx.open(), logger: () => {}, handleSignals: false, migrate: false });
  try {
    const queue = tw.queue<{ n: number }>(QUEUE, {
      retry: { maxAttempts: 1 },
      handler: (job) => {
        throw new PermanentJobError(`upstream refused order ${job.payload.n}: 422 Unprocessable Entity`);
      },
    });
    await queue.enqueueMany(Array.from({ length: FAILED }, (_, n) => ({ payload: { n } })));
    for (let ran = 0; ran < FAILED; ) {
      const result = await tw.tick({ maxJobs: FAILED });
      if (result.ran === 0) throw new Error(`tick() ran no job with ${FAILED - ran} failing jobs still due`);
      ran += result.ran;
    }
    const at = Date.now();
    for (let i = 0; i < DUE; i += ENQUEUE_BATCH) {
      await queue.enqueueMany(Array.from({ length: Math.min(ENQUEUE_BATCH, DUE - i) }, (_, k) => ({ payload: { n: FAILED + i + k } })));
    }
    for (let i = 0; i < SCHEDULED; i += ENQUEUE_BATCH) {
      const size = Math.min(ENQUEUE_BATCH, SCHEDULED - i);
      await queue.enqueueMany(Array.from({ length: size }, (_, k) => ({ payload: { n: FAILED + DUE + i + k }, runAt: at + 3_600_000 + ((i + k) * 3 * 3_600_000) / SCHEDULED })));
    }
    const seconds = (now() - t0) / 1000;
    const counts = (await tw.jobs.counts(QUEUE))[0]?.counts ?? {};
    const expected: Record<string, number> = { succeeded: FINISHED, failed: FAILED, pending: DUE + SCHEDULED, running: 0, cancelled: 0 };
    for (const [status, n] of Object.entries(expected)) {
      if (counts[status as keyof typeof counts] !== n) throw new Error(`tw.jobs.counts() reports ${counts[status as keyof typeof counts]} ${status} jobs, expected ${n}: ${JSON.stringify(counts)}`);
      // The engine's count (kept by triggers on PostgreSQL) against the rows themselves.
      const rows = await fx.countByStatus(status);
      if (rows !== n) throw new Error(`the table holds ${rows} ${status} jobs, expected ${n}`);
    }
    return { seconds, counts: { ...counts } };
  } finally {
    await tw.stop();
  }
}

// ---- the server -------------------------------------------------------------------------------

interface Admin {
  tw: Tickwork;
  serving: Serving;
  close(): Promise<void>;
}

/** A new engine on the store, its queue declared (no handler, not started), and the admin server in front. */
async function admin(fx: Fixture): Promise<Admin> {
  const tw = await bench.engine(fx.open());
  tw.queue(QUEUE);
  let serving: Serving;
  try {
    serving = await serve(tw, { port: 0, token: TOKEN });
  } catch (error) {
    await tw.stop();
    throw error;
  }
  return {
    tw,
    serving,
    async close() {
      try {
        await serving.close();
      } finally {
        await tw.stop();
      }
    },
  };
}

const HEADERS = { authorization: `Bearer ${TOKEN}`, "accept-encoding": "gzip" };

/** One GET, timed to the last byte of the (decoded) body. */
async function timedGet(url: string, path: string): Promise<{ ms: number; bytes: number; body: string }> {
  const t0 = now();
  const response = await fetch(new URL(path, url), { headers: HEADERS });
  const body = await response.text();
  const ms = now() - t0;
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${body.slice(0, 200)}`);
  return { ms, bytes: Buffer.byteLength(body), body };
}

/** The bytes of the answer's body as sent (fetch decodes gzip, so this asks with node:http). */
function wireBytes(url: string, path: string): Promise<{ bytes: number; encoding: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { headers: HEADERS }, (res) => {
      let bytes = 0;
      res.on("data", (chunk: Buffer) => (bytes += chunk.length));
      res.on("end", () => resolve({ bytes, encoding: String(res.headers["content-encoding"] ?? "identity") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

interface HttpRow {
  id: string;
  label: string;
  path: string;
  coldMs: number;
  samples: number[];
  bytes: number;
  wireBytes: number;
  encoding: string;
}

/**
 * On a new engine and server: the cold request, then REQUESTS more, then the size as sent. A job
 * list's first answer must hold `jobs` jobs, so a figure is never of an empty page.
 */
async function measureHttp(fx: Fixture, id: string, label: string, path: (a: Admin) => Promise<string>, jobs?: number): Promise<HttpRow> {
  const a = await admin(fx);
  try {
    bench.setScenario(id);
    const url = a.serving.url;
    const target = await path(a);
    const cold = await timedGet(url, target);
    const listed = jobs === undefined ? undefined : (JSON.parse(cold.body) as { jobs: unknown[] }).jobs.length;
    if (listed !== jobs) throw new Error(`GET ${target} listed ${listed} jobs, expected ${jobs}`);
    const samples: number[] = [];
    for (let i = 0; i < REQUESTS; i++) samples.push((await timedGet(url, target)).ms);
    const wire = await wireBytes(url, target);
    return { id, label, path: target, coldMs: cold.ms, samples, bytes: cold.bytes, wireBytes: wire.bytes, encoding: wire.encoding };
  } finally {
    await a.close();
  }
}

/** The oldest job's id, asked of the API itself (not timed): the deep page's cursor is counted from it. */
async function oldestId(a: Admin): Promise<bigint> {
  const { body } = await timedGet(a.serving.url, `api/jobs?queue=${QUEUE}&order=oldest&limit=1`);
  const page = JSON.parse(body) as { jobs: { id: string }[] };
  if (!page.jobs[0]) throw new Error("the job list is empty");
  return BigInt(page.jobs[0].id);
}

/** Checks an answer holds what the table holds, so a figure is never of an empty or wrong answer. */
async function checkAnswers(fx: Fixture): Promise<void> {
  const a = await admin(fx);
  try {
    const url = a.serving.url;
    const overview = JSON.parse((await timedGet(url, "api/overview")).body) as { queues: { name: string; counts: Record<string, number> }[]; failed: unknown[] };
    const q = overview.queues.find((x) => x.name === QUEUE);
    if (q?.counts.succeeded !== FINISHED) throw new Error(`the overview counts ${q?.counts.succeeded} succeeded jobs, expected ${FINISHED}`);
    if (overview.failed.length === 0) throw new Error("the overview shows no failed job");
    const metrics = (await timedGet(url, "metrics")).body;
    const line = metrics.split("\n").find((l) => l.startsWith("tickwork_jobs{") && l.includes(`queue="${QUEUE}"`) && l.includes(`status="succeeded"`));
    if (!line || Number(line.split(" ").at(-1)) !== FINISHED) throw new Error(`/metrics reports ${line ?? "no line"} for the succeeded jobs, expected ${FINISHED}`);
  } finally {
    await a.close();
  }
}

// ---- the browser ------------------------------------------------------------------------------

interface Load1 {
  fcpMs: number;
  firstDataMs: number;
  rowMs: number;
  shellBytes: number;
  apiBytes: number;
}

/**
 * Runs in the page before its own scripts: marks `bench:row` when an element matching `selector`
 * first enters the DOM (a MutationObserver's callback runs before the next paint). Optionally puts
 * the token where the dashboard keeps it, as a tab that already took it from a link would have it.
 */
function initScript(selector: string, token?: string): string {
  return `(() => {
    ${token ? `sessionStorage.setItem(${JSON.stringify(TOKEN_KEY)}, ${JSON.stringify(token)});` : ""}
    const selector = ${JSON.stringify(selector)};
    const seen = () => document.querySelector(selector) !== null && (performance.mark("bench:row"), true);
    const observer = new MutationObserver(() => seen() && observer.disconnect());
    observer.observe(document, { childList: true, subtree: true });
  })()`;
}

/** What the page measured, read once the row is there; resource sizes from Resource Timing. */
const READ_PAGE = `(() => {
  const at = (name) => performance.getEntriesByName(name)[0]?.startTime ?? null;
  const row = at("bench:row");
  const entries = [...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")].map((e) => ({
    path: new URL(e.name).pathname,
    transferSize: e.transferSize,
    startTime: e.startTime,
  }));
  return { fcp: at("first-contentful-paint"), firstData: at("tickwork:first-data"), row, entries };
})()`;

interface PageReading {
  fcp: number | null;
  firstData: number | null;
  row: number | null;
  entries: { path: string; transferSize: number; startTime: number }[];
}

const QUEUE_ROW = `section[aria-label="Queues"] tr[data-queue="${QUEUE}"]`;
const JOB_ROW = `section[aria-label="Jobs"] tr[data-job]`;

/** One load in a new context: `hash` on the server's page, until `selector` shows. */
async function load(browser: Browser, url: string, hash: string, selector: string, seedToken: boolean, problems: string[]): Promise<Load1> {
  const context: BrowserContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    await context.addInitScript({ content: initScript(selector, seedToken ? TOKEN : undefined) });
    const page = await context.newPage();
    page.on("console", (m) => void (m.type() === "error" && problems.push(m.text())));
    page.on("pageerror", (e) => void problems.push(e.message));
    await page.goto(`${url}${hash}`);
    await page.locator(selector).first().waitFor({ timeout: 60_000 });
    // The mark is set in the observer's callback, which may run just after Playwright saw the row.
    await page.waitForFunction(`performance.getEntriesByName("bench:row").length > 0`, undefined, { timeout: 10_000 });
    const r = (await page.evaluate(READ_PAGE)) as PageReading;
    if (r.row === null) throw new Error(`no bench:row mark for ${hash}`);
    const api = (path: string) => path.includes("/api/");
    return {
      fcpMs: r.fcp ?? Number.NaN,
      firstDataMs: r.firstData ?? Number.NaN,
      rowMs: r.row,
      shellBytes: r.entries.filter((e) => !api(e.path)).reduce((n, e) => n + e.transferSize, 0),
      // The API calls started before the row showed: what it took to show it, not the polls after.
      apiBytes: r.entries.filter((e) => api(e.path) && e.startTime <= r.row!).reduce((n, e) => n + e.transferSize, 0),
    };
  } finally {
    await context.close();
  }
}

interface BrowserFigures {
  dashboard: Load1[];
  jobs: Load1[];
  problems: string[];
}

async function measureBrowser(fx: Fixture, browser: Browser): Promise<BrowserFigures> {
  const a = await admin(fx);
  try {
    bench.setScenario("browser");
    const url = a.serving.url;
    const problems: string[] = [];
    const dashboardHash = `#token=${TOKEN}`;
    const jobsHash = `#/jobs?queue=${QUEUE}`;
    // Untimed: the server's first count and Chromium's first renderer are not the page's cost.
    await load(browser, url, dashboardHash, QUEUE_ROW, false, problems);
    const dashboard: Load1[] = [];
    for (let i = 0; i < LOADS; i++) dashboard.push(await load(browser, url, dashboardHash, QUEUE_ROW, false, problems));
    const jobs: Load1[] = [];
    for (let i = 0; i < LOADS; i++) jobs.push(await load(browser, url, jobsHash, JOB_ROW, true, problems));
    return { dashboard, jobs, problems };
  } finally {
    await a.close();
  }
}

// ---- one store --------------------------------------------------------------------------------

interface StoreReport {
  store: string;
  version: string;
  settings: Record<string, string>;
  fill: Filled;
  http: HttpRow[];
  browser: BrowserFigures | null;
}

async function benchStore(backend: Backend, browser: Browser): Promise<StoreReport> {
  const { version, settings } = await backend.describe();
  const log = (text: string) => process.stdout.write(`  ${backend.name}: ${text}\n`);
  const fx = await backend.fresh();
  try {
    log(`filling: ${count(FINISHED)} succeeded, ${count(FAILED)} failed, ${count(DUE)} due, ${count(SCHEDULED)} scheduled`);
    bench.setScenario("fill");
    const filled = await fill(fx);
    log(`filled in ${filled.seconds.toFixed(1)} s; counts ${JSON.stringify(filled.counts)}`);
    await checkAnswers(fx);

    const http: HttpRow[] = [];
    const measure = async (id: string, label: string, path: (a: Admin) => Promise<string>, jobs?: number) => {
      const row = await measureHttp(fx, id, label, path, jobs);
      http.push(row);
      log(`${label}: cold ${fmt(row.coldMs)} ms, median ${fmt(quantile(row.samples, 0.5))} ms, ${count(row.bytes)} B (${count(row.wireBytes)} B ${row.encoding})`);
    };
    await measure("metrics", "GET /metrics", async () => "metrics");
    await measure("overview", "GET /api/overview", async () => "api/overview");
    await measure("jobs.first", "GET /api/jobs, first page (25)", async () => `api/jobs?queue=${QUEUE}&limit=25`, 25);
    await measure("jobs.deep", `GET /api/jobs, deep page (before oldest + ${count(DEEP_OFFSET)})`, async (a) => `api/jobs?queue=${QUEUE}&limit=25&before=${(await oldestId(a)) + BigInt(DEEP_OFFSET)}`, 25);
    await measure("jobs.failed", "GET /api/jobs, failed, first page (25)", async () => `api/jobs?queue=${QUEUE}&status=failed&limit=25`, Math.min(25, FAILED));
    // A tab no job matches (the table holds no cancelled job): the list finds out by reading every candidate.
    await measure("jobs.none", "GET /api/jobs, cancelled (none), first page", async () => `api/jobs?queue=${QUEUE}&status=cancelled&limit=25`, 0);

    log(`Chromium: ${LOADS} cold loads of the dashboard and of the job browser`);
    const figures = await measureBrowser(fx, browser);
    if (figures.problems.length) log(`page errors: ${figures.problems.join(" | ")}`);
    return { store: backend.name, version, settings, fill: filled, http, browser: figures };
  } finally {
    await fx.drop();
  }
}

// ---- report -----------------------------------------------------------------------------------

const HEADER = ["Measurement", "First (cold), ms", `Median (min-max), ms`, "Size"];

const range = (values: number[]) => (values.length > 1 ? `${fmt(quantile(values, 0.5))} (${fmt(Math.min(...values))}-${fmt(Math.max(...values))})` : fmt(values[0] ?? Number.NaN));

function tableRows(report: StoreReport): string[][] {
  const rows = report.http.map((r) => [r.label, fmt(r.coldMs), range(r.samples), `${count(r.bytes)} B (${count(r.wireBytes)} B ${r.encoding})`]);
  const b = report.browser;
  if (b) {
    const shell = quantile(b.dashboard.map((l) => l.shellBytes), 0.5);
    const api = (loads: Load1[]) => quantile(loads.map((l) => l.apiBytes), 0.5);
    rows.push(
      ["Dashboard: first contentful paint", fmt(b.dashboard[0]!.fcpMs), range(b.dashboard.map((l) => l.fcpMs)), `shell ${count(shell)} B`],
      ["Dashboard: first data (tickwork:first-data)", fmt(b.dashboard[0]!.firstDataMs), range(b.dashboard.map((l) => l.firstDataMs)), ""],
      ["Dashboard: queue row shown", fmt(b.dashboard[0]!.rowMs), range(b.dashboard.map((l) => l.rowMs)), `+ API ${count(api(b.dashboard))} B`],
      ["Job browser (#/jobs?queue=..): first row shown", fmt(b.jobs[0]!.rowMs), range(b.jobs.map((l) => l.rowMs)), `shell ${count(quantile(b.jobs.map((l) => l.shellBytes), 0.5))} B + API ${count(api(b.jobs))} B`],
    );
  }
  return rows;
}

function storeTitle(report: StoreReport): string {
  const settings = Object.entries(report.settings).map(([k, v]) => `${k}=${v}`).join(", ");
  return `${report.store} ${report.version} (${settings}), filled in ${report.fill.seconds.toFixed(1)} s`;
}

const TABLE = `${count(FINISHED)} succeeded jobs, ${count(FAILED)} failed, ${count(DUE)} pending due now and ${count(SCHEDULED)} scheduled for later, in one queue`;

function notes(): string[] {
  return [
    `The table: ${TABLE}. The engines are not started (the queue has no handler here), so every request reads the same rows.`,
    `HTTP: each row on a new engine and server, over 127.0.0.1 with the bearer token and accept-encoding gzip; the first request is the cold one (no prepared statement, no kept count), then ${REQUESTS} more one after another (their median and min-max), timed to the last byte. Size: the body decoded, and as sent.`,
    "SQLite counts finished jobs by reading them and keeps a count that took over 20 ms for a minute, so its cold /metrics and overview figures are what a scrape or a poll pays once a minute; PostgreSQL keeps its counts in a table moved by triggers and reads them every time.",
    `Chromium (headless, ${CHROMIUM_PATH}): ${LOADS} loads of each view after one untimed load, each in a new browser context (no cache, no storage); times from navigation start; "first" is the first of these loads. The rows' times come from a MutationObserver in the page. The dashboard sets tickwork:first-data in an effect, which Preact runs after the frame that rendered the overview, so the mark can fall after the queue's row entered the DOM. Bytes are Resource Timing's transferSize (headers and compressed body): the shell (page, script, stylesheet), and the API calls started before the row showed. The job browser is opened by its link with the token already in the tab's storage, as after a reload; it shows once the overview has arrived, then asks for its page.`,
  ];
}

function markdown(machine: MachineInfo, load: Load, reports: StoreReport[]): string {
  const lines = [
    "# The admin server and the dashboard on a big jobs table",
    "",
    `Machine: ${machineLine(machine)}.`,
    "",
    loadLine(machine, load, ...LOAD_NOTE),
    "",
    ...notes(),
    "Regenerate with `npm run bench:admin`.",
    "",
  ];
  for (const report of reports) {
    lines.push(`## ${storeTitle(report)}`, "", markdownTable(HEADER, tableRows(report), [1, 2, 3]), "");
    if (report.browser?.problems.length) lines.push(`Page errors: ${report.browser.problems.join(" | ")}`, "");
  }
  lines.push(...bench.report(), "");
  return lines.join("\n");
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const loadWatch = watchLoad();
  console.log(`tickwork admin benchmark${QUICK ? " (BENCH_QUICK: sizes shrunk, not a measurement)" : ""}`);
  console.log(machineLine(machine));
  console.log(`Table: ${TABLE}.`);
  console.log();

  const wanted = new Set(STORES.split(","));
  const backends = [...(wanted.has("sqlite") ? [sqliteBackend] : []), ...(wanted.has("postgres") ? [postgresBackend] : [])];
  if (backends.length === 0) throw new Error(`BENCH_STORES names no store: expected sqlite, postgres or both, got ${STORES}`);
  const reports: StoreReport[] = [];
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    for (const backend of backends) {
      try {
        reports.push(await benchStore(backend, browser));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        console.error(`${backend.name}: could not run: ${message}`);
        process.exitCode = 1;
      }
    }
  } finally {
    await browser.close();
  }

  const load = loadWatch.stop();
  console.log();
  for (const report of reports) {
    console.log(storeTitle(report));
    console.log(textTable(HEADER, tableRows(report)));
    console.log();
  }
  console.log(bench.report().join("\n"));
  console.log(loadLine(machine, load, ...LOAD_NOTE));

  const json = {
    benchmark: "admin",
    quick: QUICK,
    machine,
    load,
    parameters: { finishedJobs: FINISHED, failedJobs: FAILED, dueJobs: DUE, scheduledJobs: SCHEDULED, requests: REQUESTS, browserLoads: LOADS, deepOffset: DEEP_OFFSET },
    stores: reports,
    engineWarnings: Object.fromEntries(bench.problems),
  };
  writeResults(OUT, json, markdown(machine, load, reports));
}

await main();
