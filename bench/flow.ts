/**
 * `npm run bench:flow`: what the queue's flow control (limits held in the store for every process)
 * costs, on PostgreSQL and on a SQLite file, each comparison measured side by side in one run,
 * alternating which variant goes first, every measurement on a fresh database:
 * 1. globalConcurrency: a queue whose globalConcurrency equals its workers' total concurrency (so the
 *    limit never keeps a slot idle) against the same queue without it; the same jobs and the same
 *    worker processes (PostgreSQL 4 x concurrency 8, SQLite 2 x 8) -> jobs/s and their ratio
 *    (target >= 0.9x);
 * 2. groups (PostgreSQL): 20,000 jobs in 1,000 groups with groupConcurrency 1 against the same jobs
 *    in a plain queue, 4 processes -> jobs/s and their ratio (target >= 0.8x), and fairness: in every
 *    10 s window (a tenth of the run when the run is shorter), each group's starts against the equal
 *    share of the groups still holding jobs; the worst deviation (target within +-10%);
 * 3. cost per claim (flow-claims.ts): one claim as a worker makes it, in this process, on a store
 *    whose statements are counted, for a plain queue, a global limit, and 1, 100 and 10,000 groups
 *    with groupConcurrency 1 -> ms per claim, statements and round trips per claim, jobs per claim.
 * Parts 1 and 2 run real worker processes (flow-worker.ts), started before the clock and told to
 * start together; they are timed from that moment to the last job recorded `succeeded`.
 *
 * Results go to the terminal and to bench/results/flow-latest.{json,md} (flow-quick.* with --quick).
 * A missed target is printed, never a failed exit; only a scenario that errors sets exit code 1.
 * `--help` lists the flags that set every size.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { SERIAL_DEPTH } from "../src/queue/worker/worker.js";
import { postgres } from "../src/store/postgres.js";
import { sqlite } from "../src/store/sqlite.js";
import type { Store } from "../src/store/store.js";
import { FixtureProcess, spawnFixture, type Line } from "../test/crash/fixtures/child-process.js";
import type { Target } from "../test/crash/fixtures/target.js";
import { claimFigures, claimRound, type ClaimFigures, type ClaimPoint, type ClaimRound, type ClaimSettings, type StoreKind } from "./flow-claims.js";
import { flowQueueOptions, type FlowLimits, type FlowPayload, type FlowWorkerConfig, type StartsLine } from "./flow-shared.js";
import { DATABASE_URL, benchEngines, migratedPostgresSchema, postgresBackend, sqliteBackend } from "./fixtures.js";
import { fmt, loadLine, machineInfo, machineLine, markdownTable, quantile, sleep, textTable, watchLoad, within, writeResults, type Load, type MachineInfo } from "./support.js";

// ---- settings --------------------------------------------------------------------------------

const HELP = `npm run bench:flow -- [flags]
  --quick               shrink every size (a smoke run of the harness, under 2 minutes; not a measurement)
  --reps N              rounds of each comparison and of each claim point (default 3; quick 1)
  --only LIST           parts to run: global,groups,claims (default all)
  --stores LIST         postgres,sqlite (default both; part 2 runs on postgres only)
  --handler-ms N        each handler waits N ms; 0 returns at once (default 1)
  --concurrency N       each worker process's concurrency (default 8)
  --jobs N              jobs of part 1 (default 20000; quick 2000)
  --pg-procs N          worker processes on PostgreSQL in part 1 (default 4)
  --sqlite-procs N      worker processes on SQLite in part 1 (default 2)
  --global-concurrency N  part 1's limit (default: processes x concurrency, which never leaves a slot idle)
  --groups N            groups of part 2 (default 1000; quick 200)
  --group-jobs N        jobs of part 2 (default 20000; quick 4000)
  --group-procs N       worker processes of part 2 (default 4)
  --window-s N          fairness window in seconds (default 10; a tenth of the run when the run is shorter)
  --claim-groups LIST   group counts of part 3 (default 1,100,10000; quick 1,100,1000)
  --claims N            measured claims per point and round (default 500; quick 100)
  --claim-limit N       jobs each claim asks for (default 8: a worker's free slots)
  --claim-running N     jobs kept running in other groups before each claim (default 24: three more workers' slots)`;

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
    reps: { type: "string" },
    only: { type: "string" },
    stores: { type: "string" },
    "handler-ms": { type: "string" },
    concurrency: { type: "string" },
    jobs: { type: "string" },
    "pg-procs": { type: "string" },
    "sqlite-procs": { type: "string" },
    "global-concurrency": { type: "string" },
    groups: { type: "string" },
    "group-jobs": { type: "string" },
    "group-procs": { type: "string" },
    "window-s": { type: "string" },
    "claim-groups": { type: "string" },
    claims: { type: "string" },
    "claim-limit": { type: "string" },
    "claim-running": { type: "string" },
  },
  strict: true,
});
if (flags.help) {
  console.log(HELP);
  process.exit(0);
}

const QUICK = flags.quick || process.env.BENCH_QUICK === "1";

function int(name: keyof typeof flags, fallback: number, min = 1): number {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be a whole number, ${min} or more; got ${String(raw)}`);
  return n;
}

function list<T extends string>(name: "only" | "stores", allowed: readonly T[]): T[] {
  const raw = flags[name];
  if (raw === undefined) return [...allowed];
  const items = raw.split(",").map((s) => s.trim());
  const wrong = items.filter((s) => !allowed.includes(s as T));
  if (wrong.length) throw new Error(`--${name}: unknown ${wrong.join(", ")} (choose from ${allowed.join(", ")})`);
  return items as T[];
}

const S = {
  reps: int("reps", QUICK ? 1 : 3),
  parts: list("only", ["global", "groups", "claims"] as const),
  stores: list("stores", ["postgres", "sqlite"] as const),
  handlerMs: int("handler-ms", 1, 0),
  concurrency: int("concurrency", 8),
  jobs: int("jobs", QUICK ? 2_000 : 20_000),
  procs: { postgres: int("pg-procs", 4), sqlite: int("sqlite-procs", 2) } as Record<StoreKind, number>,
  /** Unset: each store's processes x concurrency. */
  globalConcurrency: flags["global-concurrency"] === undefined ? undefined : int("global-concurrency", 1),
  groups: int("groups", QUICK ? 200 : 1_000),
  groupJobs: int("group-jobs", QUICK ? 4_000 : 20_000),
  groupProcs: int("group-procs", 4),
  windowS: int("window-s", 10),
  claimGroups: (flags["claim-groups"] ?? (QUICK ? "1,100,1000" : "1,100,10000")).split(",").map((s) => {
    const n = Number(s.trim());
    if (!Number.isInteger(n) || n < 1) throw new Error(`--claim-groups: ${s} is not a whole number of groups`);
    return n;
  }),
  claims: { claims: int("claims", QUICK ? 100 : 500), warmup: 20, limit: int("claim-limit", 8), running: int("claim-running", 24, 0) } satisfies ClaimSettings,
  /** Full runs warm the database and the machine with a small pair first (not reported). */
  warmup: !QUICK,
};

const OUT = `flow-${QUICK ? "quick" : "latest"}`;
const QUEUE = "flow";
const TARGETS = { globalRatio: 0.9, groupsRatio: 0.8, fairness: 0.1 };
const LOAD_NOTE = ["the worker processes and PostgreSQL's backends keep every core busy during parts 1 and 2", "the ms per claim and the spread between rounds"] as const;
const STORE_NAME: Record<StoreKind, string> = { postgres: "PostgreSQL", sqlite: "SQLite" };
const WORKER = fileURLToPath(new URL("./flow-worker.ts", import.meta.url));

// ---- engine warnings -------------------------------------------------------------------------

const bench = benchEngines();
/** Warnings and errors the worker processes printed, by scenario. */
const workerProblems = new Map<string, number>();

function problemLines(): string[] {
  const all = new Map(bench.problems);
  for (const [key, n] of workerProblems) all.set(key, (all.get(key) ?? 0) + n);
  return all.size === 0
    ? ["Engine warnings and errors during the run (worker processes included): none."]
    : ["Engine warnings and errors during the run (these scenarios' figures are suspect):", ...[...all].map(([key, n]) => `- ${key}: ${n}`)];
}

// ---- databases -------------------------------------------------------------------------------

/** A fresh, migrated database that worker processes open by its target. */
interface RunDb {
  target: Target;
  open(): Store;
  /** Whether any job is pending or running. */
  anyLive(): Promise<boolean>;
  succeeded(): Promise<number>;
  /** Settles the database after the enqueue: statistics on PostgreSQL, the WAL written back on SQLite. */
  settle(): Promise<void>;
  drop(): Promise<void>;
}

// Polled every few milliseconds while the workers run: a count of the live rows (20,000 at the start)
// took 7 ms of the server's CPU per poll on PostgreSQL, a core's third taken from the run measured;
// an existence test stops at the first live row of either partial index.
const ANY_LIVE = `SELECT CASE WHEN EXISTS (SELECT 1 FROM tickwork_jobs WHERE status = 'pending') OR EXISTS (SELECT 1 FROM tickwork_jobs WHERE status = 'running') THEN 1 ELSE 0 END AS n`;
const SUCCEEDED = `SELECT count(*) AS n FROM tickwork_jobs WHERE status = 'succeeded'`;

async function freshDb(kind: StoreKind): Promise<RunDb> {
  if (kind === "postgres") {
    const { schema, side, count } = await migratedPostgresSchema("tw_flow");
    return {
      target: { kind: "postgres", url: DATABASE_URL, schema },
      open: () => postgres({ url: DATABASE_URL, schema }),
      anyLive: async () => (await count(ANY_LIVE)) > 0,
      succeeded: () => count(SUCCEEDED),
      async settle() {
        // Before autovacuum does it at a moment of its choosing, in one variant's run and not the other's.
        await side.query("ANALYZE tickwork_jobs");
        await side.query("CHECKPOINT");
      },
      async drop() {
        try {
          await side.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        } finally {
          await side.end();
        }
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), "tickwork-flow-"));
  const path = join(dir, "bench.db");
  const setup = sqlite(path);
  await setup.migrate();
  await setup.close();
  const side = new Database(path);
  side.pragma("busy_timeout = 5000");
  const anyLive = side.prepare(ANY_LIVE);
  const succeeded = side.prepare(SUCCEEDED);
  return {
    target: { kind: "sqlite", path },
    open: () => sqlite(path),
    anyLive: async () => (anyLive.get() as { n: number }).n > 0,
    succeeded: async () => (succeeded.get() as { n: number }).n,
    settle: async () => void side.pragma("wal_checkpoint(TRUNCATE)"),
    async drop() {
      side.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---- one multi-process run -------------------------------------------------------------------

interface Variant {
  procs: number;
  concurrency: number;
  jobs: number;
  /** Groups the jobs are spread over (in blocks); 1 for part 1. */
  groups: number;
  limits: FlowLimits;
}

/** One handler start: ms after the workers were told to start, and the job's group. */
interface Start {
  at: number;
  g: number;
}

interface RunResult {
  /** jobs/s from the start signal to the last job recorded succeeded. */
  rate: number;
  seconds: number;
  /** Seconds from the start signal until 90% of the jobs had started: a slow tail shows as a gap to `seconds`. */
  ninetyStarted: number;
  /** `queue.throttled` events the workers logged, by what held the claim. */
  throttled: Record<string, number>;
  starts: Start[];
}

const wallNow = () => performance.timeOrigin + performance.now();
let spawned = 0;

/**
 * Enqueues the variant's jobs on a fresh database, starts its worker processes and waits until each
 * is ready (not timed), tells them all to start, and times until no job is pending or running.
 */
async function runWorkers(kind: StoreKind, v: Variant, scenario: string): Promise<RunResult> {
  const db = await freshDb(kind);
  const procs: { child: ChildProcess; fixture: FixtureProcess }[] = [];
  try {
    bench.setScenario(scenario);
    const producer = await bench.engine(db.open());
    try {
      const queue = producer.queue<FlowPayload>(QUEUE, flowQueueOptions(v.concurrency, v.limits));
      // In blocks, group 0's jobs first, then group 1's: a claim in enqueue order serves the groups one
      // after another, which is what a fair claim must not do.
      for (let i = 0; i < v.jobs; i += 1_000) {
        const batch = Array.from({ length: Math.min(1_000, v.jobs - i) }, (_, k) => ({ payload: { n: i + k, g: Math.floor(((i + k) * v.groups) / v.jobs) } }));
        await queue.enqueueMany(batch);
      }
    } finally {
      await producer.stop();
    }
    await db.settle();

    for (let i = 0; i < v.procs; i++) {
      const config: FlowWorkerConfig = { target: db.target, instanceId: `flow-${process.pid}-${++spawned}`, queue: QUEUE, concurrency: v.concurrency, handlerMs: S.handlerMs, limits: v.limits };
      const child = spawnFixture(WORKER, config);
      procs.push({ child, fixture: new FixtureProcess(child, `flow worker ${config.instanceId}`, 60_000) });
    }
    await Promise.all(procs.map((p) => p.fixture.ready));

    const t0 = wallNow();
    for (const p of procs) p.child.send({ go: true });
    const tEnd = await within(Math.max(120_000, v.jobs * 20), `${v.jobs} jobs on ${STORE_NAME[kind]}`, (async () => {
      while (await db.anyLive()) await sleep(5);
      return wallNow();
    })());

    for (const p of procs) p.child.send({ stop: true });
    const lines = (await Promise.all(procs.map((p) => p.fixture.waitFor((l) => l.event === "flow.starts", "flow.starts", 60_000)))) as unknown as StartsLine[];
    await Promise.all(procs.map((p) => p.fixture.exited));
    for (const p of procs) noteWorkerLines(scenario, p.fixture.lines);

    const starts = lines.flatMap((l) => l.at.map((at, i): Start => ({ at: at - t0, g: l.groups[i]! }))).sort((a, b) => a.at - b.at);
    const throttled: Record<string, number> = {};
    for (const l of lines) for (const [by, n] of Object.entries(l.throttled)) throttled[by] = (throttled[by] ?? 0) + n;
    if (starts.length !== v.jobs) throw new Error(`the handlers started ${starts.length} times for ${v.jobs} jobs`);
    const succeeded = await db.succeeded();
    if (succeeded !== v.jobs) throw new Error(`expected ${v.jobs} succeeded jobs, found ${succeeded}`);
    const ninetyStarted = (starts[Math.ceil(0.9 * starts.length) - 1]?.at ?? Number.NaN) / 1000;
    return { rate: (v.jobs / (tEnd - t0)) * 1000, seconds: (tEnd - t0) / 1000, ninetyStarted, throttled, starts };
  } finally {
    await Promise.all(procs.map((p) => p.fixture.kill()));
    await db.drop();
  }
}

function noteWorkerLines(scenario: string, lines: readonly Line[]): void {
  for (const line of lines) {
    if (line.level !== "warn" && line.level !== "error" && line.level !== "critical") continue;
    const key = `${scenario}: ${line.event}${typeof line.operation === "string" ? ` (${line.operation})` : ""}`;
    workerProblems.set(key, (workerProblems.get(key) ?? 0) + 1);
  }
}

// ---- comparisons -----------------------------------------------------------------------------

interface Measured {
  rate: number;
  seconds: number;
  ninetyStarted: number;
  throttled: Record<string, number>;
}

interface Comparison {
  id: string;
  store: StoreKind;
  label: string;
  /** The variant under test (limited) and the one it is compared with (plain). */
  limited: Variant;
  plain: Variant;
  limitedRuns: Measured[];
  plainRuns: Measured[];
  /** Median limited jobs/s over median plain jobs/s. */
  ratio: number;
  /** limited over plain jobs/s of each round, the two measured back to back. */
  pairedRatios: number[];
  target: number;
  /** Part 2 only: fairness of every run. */
  fairness?: { limited: Fairness[]; plain: Fairness[] };
  error?: string;
}

const median = (values: number[]) => quantile(values, 0.5);

/**
 * REPS rounds of the two variants back to back, alternating which goes first, so a drift in the
 * machine's load favours neither. A full run first warms up with a small pair, not reported.
 */
async function compare(c: Pick<Comparison, "id" | "store" | "label" | "limited" | "plain" | "target">, withFairness: boolean): Promise<Comparison> {
  const log = (text: string) => process.stdout.write(`  ${STORE_NAME[c.store]}: ${text}\n`);
  const result: Comparison = { ...c, limitedRuns: [], plainRuns: [], ratio: Number.NaN, pairedRatios: [], ...(withFairness ? { fairness: { limited: [], plain: [] } } : {}) };
  try {
    if (S.warmup) {
      log(`${c.label}: warm-up`);
      const small = (v: Variant): Variant => ({ ...v, jobs: Math.min(v.jobs, 2_000) });
      await runWorkers(c.store, small(c.limited), `${STORE_NAME[c.store]}, ${c.id}, warm-up`);
      await runWorkers(c.store, small(c.plain), `${STORE_NAME[c.store]}, ${c.id}, warm-up`);
    }
    for (let round = 0; round < S.reps; round++) {
      const order = round % 2 === 0 ? (["limited", "plain"] as const) : (["plain", "limited"] as const);
      for (const which of order) {
        const run = await runWorkers(c.store, c[which], `${STORE_NAME[c.store]}, ${c.id}, ${which}`);
        (which === "limited" ? result.limitedRuns : result.plainRuns).push({ rate: run.rate, seconds: run.seconds, ninetyStarted: run.ninetyStarted, throttled: run.throttled });
        let fair = "";
        if (result.fairness) {
          const f = fairness(run.starts, c[which].groups, S.windowS);
          result.fairness[which].push(f);
          fair = `, worst group deviation ${pct(f.worst)} (${f.windows} windows of ${fmt(f.windowMs / 1000)} s)`;
        }
        const held = Object.entries(run.throttled).map(([by, n]) => `${by} ${n}`).join(", ");
        log(`${c.label}, ${which}, round ${round + 1}: ${fmt(run.rate)} jobs/s in ${run.seconds.toFixed(1)} s (90% started at ${run.ninetyStarted.toFixed(1)} s)${held ? `, claims held: ${held}` : ""}${fair}`);
      }
    }
    result.ratio = median(result.limitedRuns.map((r) => r.rate)) / median(result.plainRuns.map((r) => r.rate));
    result.pairedRatios = result.limitedRuns.map((r, i) => r.rate / result.plainRuns[i]!.rate);
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
    log(`  ERROR: ${result.error}`);
    process.exitCode = 1;
  }
  return result;
}

// ---- fairness --------------------------------------------------------------------------------

interface Fairness {
  windowMs: number;
  windows: number;
  /** Fewest groups compared in a window: those still holding a job to start when the window ends. */
  groupsCompared: number;
  /** The equal share in starts (the mean over the compared groups) in the window of the worst deviation. */
  equalStarts: number;
  /** The worst deviation of a group's starts from the equal share in any window, as a fraction (+0.25: a quarter more). */
  worst: number;
  /** The same deviation, in starts. */
  worstStarts: number;
  /** Groups compared in the window of the worst deviation. */
  worstCompared: number;
  /** Each window: groups compared, the equal share, and the fewest and most starts of a compared group. */
  perWindow: { compared: number; equal: number; min: number; max: number }[];
}

/**
 * Each group's share of the starts in consecutive windows of the run (from its first start to its
 * last; a trailing part window is left out), against the equal share. A window compares only the
 * groups that held a job to start throughout it (their last start is at or after its end): every job
 * was enqueued before the run, so such a group could have been started at any moment of the window.
 */
function fairness(starts: readonly Start[], groups: number, windowS: number): Fairness {
  const first = starts[0]?.at ?? 0;
  const span = (starts.at(-1)?.at ?? 0) - first;
  const windowMs = span >= windowS * 1000 ? windowS * 1000 : span / 10;
  const windows = windowMs > 0 ? Math.floor(span / windowMs + 1e-9) : 0;
  const lastStart = new Float64Array(groups).fill(-Infinity);
  const counts = Array.from({ length: windows }, () => new Uint32Array(groups));
  for (const s of starts) {
    lastStart[s.g] = Math.max(lastStart[s.g]!, s.at);
    const w = Math.floor((s.at - first) / windowMs);
    if (w < windows) counts[w]![s.g]!++;
  }
  const f: Fairness = { windowMs, windows, groupsCompared: Number.POSITIVE_INFINITY, equalStarts: Number.NaN, worst: 0, worstStarts: 0, worstCompared: 0, perWindow: [] };
  for (let w = 0; w < windows; w++) {
    const end = first + (w + 1) * windowMs;
    const compared: number[] = [];
    for (let g = 0; g < groups; g++) if (lastStart[g]! >= end) compared.push(g);
    const total = compared.reduce((sum, g) => sum + counts[w]![g]!, 0);
    if (compared.length === 0 || total === 0) continue;
    f.groupsCompared = Math.min(f.groupsCompared, compared.length);
    const equal = total / compared.length;
    const window = { compared: compared.length, equal: Math.round(equal * 100) / 100, min: Number.POSITIVE_INFINITY, max: 0 };
    for (const g of compared) {
      const n = counts[w]![g]!;
      window.min = Math.min(window.min, n);
      window.max = Math.max(window.max, n);
      const deviation = n / equal - 1;
      if (Math.abs(deviation) > Math.abs(f.worst) || Number.isNaN(f.equalStarts)) {
        f.worst = deviation;
        f.worstStarts = n - equal;
        f.equalStarts = equal;
        f.worstCompared = compared.length;
      }
    }
    f.perWindow.push(window);
  }
  if (!Number.isFinite(f.groupsCompared)) f.groupsCompared = 0;
  return f;
}

/** The run's worst window: the fairness with the largest deviation. */
const worstOf = (all: Fairness[]) => all.reduce<Fairness | undefined>((w, f) => (w === undefined || Math.abs(f.worst) > Math.abs(w.worst) ? f : w), undefined);

/** A count, never with decimals: 1 -> "1", 20000 -> "20,000". */
const count = (n: number) => n.toLocaleString("en-US");

const pct = (fraction: number) => `${fraction >= 0 ? "+" : ""}${fmt(fraction * 100)}%`;

// ---- part 3 ----------------------------------------------------------------------------------

interface ClaimResultRow {
  store: StoreKind;
  point: ClaimPoint;
  rounds: Omit<ClaimRound, "samples">[];
  figures?: ClaimFigures;
  error?: string;
}

function claimPoints(store: StoreKind): ClaimPoint[] {
  const total = S.procs.postgres * S.concurrency;
  const grouped = (groups: number, depth: number): ClaimPoint => ({
    id: `groups.${groups}${depth > 1 ? `.depth${depth}` : ""}`,
    label: `${count(groups)} group${groups === 1 ? "" : "s"}, groupConcurrency 1${depth > 1 ? `, up to ${depth} jobs per group` : ""}`,
    limits: { groupConcurrency: 1 },
    groups,
    ...(depth > 1 ? { depth } : {}),
  });
  return [
    { id: "plain", label: "plain queue (no limits)", limits: {} },
    { id: "global", label: `globalConcurrency ${total}`, limits: { globalConcurrency: total } },
    ...S.claimGroups.map((groups) => grouped(groups, 1)),
    ...(store === "postgres" ? S.claimGroups.map((groups) => grouped(groups, SERIAL_DEPTH)) : []),
  ];
}

async function benchClaims(store: StoreKind): Promise<ClaimResultRow[]> {
  const log = (text: string) => process.stdout.write(`  ${STORE_NAME[store]}: ${text}\n`);
  const points = claimPoints(store);
  const rounds = new Map<string, ClaimRound[]>(points.map((p) => [p.id, []]));
  const errors = new Map<string, string>();
  for (let round = 0; round < S.reps; round++) {
    // Alternating the order of the points, so a drift in the machine's load favours none.
    for (const point of round % 2 === 0 ? points : [...points].reverse()) {
      if (errors.has(point.id)) continue;
      bench.setScenario(`${STORE_NAME[store]}, claims, ${point.id}`);
      try {
        const r = await claimRound(store, point, S.claims, (s) => bench.engine(s));
        rounds.get(point.id)!.push(r);
        const one = claimFigures([r]);
        log(`claims, ${point.label}, round ${round + 1}: ${fmt(one.msMedians[0]!)} ms per claim (median), ${fmt(one.statements.mean)} statements, ${one.roundTrips ? `${fmt(one.roundTrips.mean)} round trips, ` : ""}${fmt(one.jobsPerClaim)} jobs per claim`);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        errors.set(point.id, message);
        log(`  ERROR (${point.label}): ${message}`);
        process.exitCode = 1;
      }
    }
  }
  return points.map((point) => {
    const done = rounds.get(point.id)!;
    const error = errors.get(point.id);
    return {
      store,
      point,
      rounds: done.map(({ jobs, kept }) => ({ jobs, kept })),
      ...(done.length ? { figures: claimFigures(done) } : {}),
      ...(error ? { error } : {}),
    };
  });
}

// ---- report ----------------------------------------------------------------------------------

const range = (values: number[]) => (values.length > 1 ? `${fmt(median(values))} (${fmt(Math.min(...values))}-${fmt(Math.max(...values))})` : values.length ? fmt(values[0]!) : "");
const verdictOf = (c: Comparison) => (c.error ? "ERROR" : c.ratio >= c.target ? "PASS" : "MISS");
const workers = (v: Variant) => `${v.procs} x ${v.concurrency}${v.limits.globalConcurrency !== undefined ? ` (globalConcurrency ${v.limits.globalConcurrency})` : ""}`;

function heldCell(runs: Measured[]): string {
  const total: Record<string, number> = {};
  for (const r of runs) for (const [by, n] of Object.entries(r.throttled)) total[by] = (total[by] ?? 0) + n;
  const perRun = (n: number) => (Number.isInteger(n / runs.length) ? count(n / runs.length) : fmt(n / runs.length));
  const parts = Object.entries(total).map(([by, n]) => `${by} ${perRun(n)}`);
  return parts.length ? parts.join(", ") : "none";
}

const GLOBAL_HEADER = ["Store", "Workers", "Jobs", "With globalConcurrency, jobs/s", "Without, jobs/s", "Ratio", "Per round", "Target", "Verdict", "Claims held per run (limited)"];
const GROUPS_HEADER = ["Store", "Workers", "Jobs", "Grouped, jobs/s", "Plain, jobs/s", "Ratio", "Per round", "Target", "Verdict", "Claims held per run (grouped)"];

function comparisonRows(comparisons: Comparison[]): string[][] {
  return comparisons.map((c) => [
    STORE_NAME[c.store],
    workers(c.limited),
    count(c.limited.jobs),
    c.error && !c.limitedRuns.length ? "ERROR" : range(c.limitedRuns.map((r) => r.rate)),
    range(c.plainRuns.map((r) => r.rate)),
    Number.isNaN(c.ratio) ? (c.error ?? "") : `${c.ratio.toFixed(2)}x`,
    c.pairedRatios.map((r) => r.toFixed(2)).join(", "),
    `>= ${c.target}x`,
    verdictOf(c),
    heldCell(c.limitedRuns),
  ]);
}

const FAIRNESS_HEADER = ["Queue", "Window", "Windows per run", "Groups compared (worst window)", "Equal share, starts per group per window", "Worst deviation", "In starts", "One start is", "Target", "Verdict"];

function fairnessVerdict(f: Fairness): string {
  return Math.abs(f.worst) <= TARGETS.fairness ? "PASS" : "MISS";
}

function fairnessRows(c: Comparison): string[][] {
  if (!c.fairness) return [];
  const row = (label: string, runs: Fairness[], target: boolean): string[] => {
    const w = worstOf(runs);
    if (!w) return [label, "", "", "", "", c.error ?? "", "", "", "", ""];
    return [
      label,
      `${fmt(w.windowMs / 1000)} s`,
      String(w.windows),
      count(w.worstCompared),
      fmt(w.equalStarts),
      `${pct(w.worst)} (per run: ${runs.map((f) => pct(f.worst)).join(", ")})`,
      `${w.worstStarts >= 0 ? "+" : ""}${fmt(w.worstStarts)}`,
      pct(1 / w.equalStarts).replace("+", "±"),
      target ? `within ±${TARGETS.fairness * 100}%` : "(contrast)",
      target ? fairnessVerdict(w) : "",
    ];
  };
  return [row(`grouped, groupConcurrency 1 (${count(c.limited.groups)} groups)`, c.fairness.limited, true), row("plain queue (jobs enqueued group after group)", c.fairness.plain, false)];
}

const CLAIMS_HEADER = ["Store", "Claim", "ms per claim, median (rounds)", "p95 ms", "Statements per claim", "Round trips per claim", "Jobs per claim", "Jobs in table", "Kept running"];

function claimRows(rows: ClaimResultRow[]): string[][] {
  const spread = (s: { mean: number; min: number; max: number }) => (s.min === s.max ? fmt(s.mean) : `${fmt(s.mean)} (${fmt(s.min)}-${fmt(s.max)})`);
  return rows.map((r) => {
    const f = r.figures;
    return [
      STORE_NAME[r.store],
      r.point.label,
      f ? range(f.msMedians) : (r.error ?? "ERROR"),
      f ? fmt(f.msP95) : "",
      f ? spread(f.statements) : "",
      f?.roundTrips ? spread(f.roundTrips) : f ? "- (in process)" : "",
      f ? fmt(f.jobsPerClaim) : "",
      r.rounds.length ? count(r.rounds[0]!.jobs) : "",
      r.rounds.length ? String(r.rounds[0]!.kept) : "",
    ];
  });
}

interface Check {
  target: string;
  value: string;
  verdict: "PASS" | "MISS" | "ERROR";
}

function checks(global: Comparison[], groups: Comparison[]): Check[] {
  const out: Check[] = [];
  for (const c of global) {
    out.push({ target: `${STORE_NAME[c.store]}: globalConcurrency = total concurrency keeps >= ${c.target}x of the plain queue's jobs/s`, value: Number.isNaN(c.ratio) ? "no figure" : `${c.ratio.toFixed(2)}x`, verdict: verdictOf(c) });
  }
  for (const c of groups) {
    out.push({ target: `${STORE_NAME[c.store]}: ${count(c.limited.groups)} groups, groupConcurrency 1 keep >= ${c.target}x of the plain queue's jobs/s`, value: Number.isNaN(c.ratio) ? "no figure" : `${c.ratio.toFixed(2)}x`, verdict: verdictOf(c) });
    const w = c.fairness ? worstOf(c.fairness.limited) : undefined;
    out.push({
      target: `${STORE_NAME[c.store]}: every group's share of starts within ±${TARGETS.fairness * 100}% of the equal share in every window`,
      value: w ? `${pct(w.worst)} (equal share ${fmt(w.equalStarts)} starts)` : "no figure",
      verdict: w ? (fairnessVerdict(w) as Check["verdict"]) : "ERROR",
    });
  }
  return out;
}

const FAIRNESS_NOTE =
  "A window compares the groups that still held a job to start at its end; the equal share is their mean number of starts in it. Starts are whole numbers: with an equal share of s starts per group per window, one start more or fewer is a deviation of 1/s, so a deviation within ±10% needs s >= 10 (for 10 windows, 100 jobs per group: `--group-jobs` = 100 x `--groups`).";

interface Described {
  version: string;
  settings: Record<string, string>;
}

function storeLine(kind: StoreKind, d: Described | undefined): string {
  if (!d) return `${STORE_NAME[kind]}: not described`;
  return `${STORE_NAME[kind]} ${d.version} (${Object.entries(d.settings).map(([k, v]) => `${k}=${v}`).join(", ")})`;
}

function markdown(machine: MachineInfo, load: Load, described: Partial<Record<StoreKind, Described>>, global: Comparison[], groups: Comparison[], claims: ClaimResultRow[], results: Check[]): string {
  const lines = [
    "# Flow control benchmark",
    "",
    `Machine: ${machineLine(machine)}.`,
    "",
    loadLine(machine, load, ...LOAD_NOTE),
    "",
    `Stores: ${Object.entries(described).map(([k, d]) => storeLine(k as StoreKind, d)).join("; ")}. Every run on a fresh database (a new PostgreSQL schema, a temp SQLite file in WAL mode).`,
    `Parts 1 and 2 run real worker processes (\`bench/flow-worker.ts\`), each with its own store (PostgreSQL's default pool of 10), started and ready before the clock starts; the clock runs from the signal that starts them all to the last job recorded \`succeeded\`. Each handler waits ${S.handlerMs} ms. The two variants of a comparison are measured back to back, alternating which goes first, ${S.reps} round${S.reps === 1 ? "" : "s"}${S.warmup ? " after a warm-up pair" : ""}; figures are medians with min-max; the ratio is the limited median over the plain one, "per round" each back-to-back pair's.`,
    "Regenerate with `npm run bench:flow` (flags: `npm run bench:flow -- --help`).",
    "",
  ];
  if (global.length) {
    lines.push(
      "## 1. globalConcurrency equal to the workers' total concurrency, against no limit",
      "",
      `The same ${count(S.jobs)} jobs and the same worker processes; the limited queue sets globalConcurrency to processes x concurrency (unless \`--global-concurrency\` says otherwise), so the limit itself never leaves a slot idle and the difference is the cost of holding it: each worker holds a share of the limit's slots in the store (asked for when it has jobs to run, renewed every quarter lease, given back when idle) and runs no more jobs at once than it holds; its claims are the plain queue's, prefetch included. "Claims held" counts the workers' \`queue.throttled\` events, claims the limit cut short.`,
      "",
      markdownTable(GLOBAL_HEADER, comparisonRows(global), [2, 3, 4, 5]),
      "",
    );
  }
  if (groups.length) {
    lines.push(
      `## 2. ${count(S.groups)} groups with groupConcurrency 1, against the same jobs ungrouped`,
      "",
      `${count(S.groupJobs)} jobs, ${fmt(S.groupJobs / S.groups)} per group, enqueued group after group (so a claim in enqueue order would serve one group at a time), run by ${S.groupProcs} processes x concurrency ${S.concurrency}. The plain queue carries the same payloads without groups or limits.`,
      "",
      markdownTable(GROUPS_HEADER, comparisonRows(groups), [2, 3, 4, 5]),
      "",
      "Fairness, the worst window of every run:",
      "",
      markdownTable(FAIRNESS_HEADER, groups.flatMap(fairnessRows), [1, 2, 3, 4, 6, 7]),
      "",
      FAIRNESS_NOTE,
      "",
    );
  }
  if (claims.length) {
    lines.push(
      "## 3. Cost per claim",
      "",
      `One claim as a worker makes it (\`store.queue.claim\`, asking for ${S.claims.limit} jobs), in the benchmark's process, ${count(S.claims.claims)} measured claims per round after ${S.claims.warmup} not measured, ${S.reps} round${S.reps === 1 ? "" : "s"} alternating the points' order, each round on a fresh database. Before each claim the oldest running jobs are settled (not measured) until ${S.claims.running} are left running, as three other workers' would be (a grouped point keeps at most groups - ${S.claims.limit}: one group keeps none, or its only group would be full). A point "up to ${SERIAL_DEPTH} jobs per group" (PostgreSQL) claims as a worker of jobs faster than a round trip does under groupConcurrency 1: it asks for ${SERIAL_DEPTH} x ${S.claims.limit} jobs, at most ${SERIAL_DEPTH} of a group, which the worker runs one after another. On PostgreSQL every query the pool's clients send is counted: round trips include BEGIN and COMMIT, statements do not. On SQLite the executor counts the statements it runs. The globalConcurrency point counts a call setting the worker's slots before every claim, an upper bound: a worker makes it when it starts being busy, at most every 50 ms while it holds fewer slots than it could fill, and every quarter lease.`,
      "",
      markdownTable(CLAIMS_HEADER, claimRows(claims), [2, 3, 4, 5, 6, 7, 8]),
      "",
    );
  }
  lines.push("## Targets", "", markdownTable(["Target", "Measured (median; fairness: worst)", "Verdict"], results.map((c) => [c.target, c.value, c.verdict])), "", ...problemLines(), "");
  return lines.join("\n");
}

// ---- main ------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const machine = machineInfo();
  const loadWatch = watchLoad();
  console.log(`tickwork flow-control benchmark${QUICK ? " (--quick: sizes shrunk, not a measurement)" : ""}`);
  console.log(machineLine(machine));
  if (machine.loadAverage[0]! >= 0.5) console.log(`WARNING: load average ${machine.loadAverage[0]} at start: other work is running; the figures will be noisy.`);
  console.log();

  const described: Partial<Record<StoreKind, Described>> = {};
  for (const kind of S.stores) {
    try {
      described[kind] = await (kind === "postgres" ? postgresBackend : sqliteBackend).describe();
    } catch (error) {
      console.error(`${STORE_NAME[kind]}: could not connect: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    }
  }
  const stores = S.stores.filter((k) => described[k]);

  const global: Comparison[] = [];
  if (S.parts.includes("global")) {
    console.log("1. globalConcurrency = total concurrency, against no limit");
    for (const store of stores) {
      const base = { procs: S.procs[store], concurrency: S.concurrency, jobs: S.jobs, groups: 1 };
      global.push(
        await compare(
          { id: "global", store, label: "globalConcurrency", target: TARGETS.globalRatio, limited: { ...base, limits: { globalConcurrency: S.globalConcurrency ?? base.procs * base.concurrency } }, plain: { ...base, limits: {} } },
          false,
        ),
      );
    }
  }

  const groups: Comparison[] = [];
  if (S.parts.includes("groups") && stores.includes("postgres")) {
    console.log(`2. ${count(S.groups)} groups, groupConcurrency 1, against ungrouped`);
    const base = { procs: S.groupProcs, concurrency: S.concurrency, jobs: S.groupJobs, groups: S.groups };
    groups.push(await compare({ id: "groups", store: "postgres", label: "groups", target: TARGETS.groupsRatio, limited: { ...base, limits: { groupConcurrency: 1 } }, plain: { ...base, limits: {} } }, true));
  }

  const claims: ClaimResultRow[] = [];
  if (S.parts.includes("claims")) {
    console.log("3. cost per claim");
    for (const store of stores) claims.push(...(await benchClaims(store)));
  }

  const load = loadWatch.stop();
  const results = checks(global, groups);
  console.log();
  if (global.length) console.log(`1. globalConcurrency\n${textTable(GLOBAL_HEADER, comparisonRows(global))}\n`);
  if (groups.length) {
    console.log(`2. groups\n${textTable(GROUPS_HEADER, comparisonRows(groups))}\n`);
    console.log(`Fairness\n${textTable(FAIRNESS_HEADER, groups.flatMap(fairnessRows))}\n${FAIRNESS_NOTE}\n`);
  }
  if (claims.length) console.log(`3. cost per claim\n${textTable(CLAIMS_HEADER, claimRows(claims))}\n`);
  console.log("Targets");
  console.log(textTable(["Target", "Measured", "Verdict"], results.map((c) => [c.target, c.value, c.verdict])));
  console.log(problemLines().join("\n"));
  console.log(loadLine(machine, load, ...LOAD_NOTE));

  const json = {
    benchmark: "flow",
    quick: QUICK,
    machine,
    load,
    parameters: S,
    stores: described,
    globalConcurrency: global,
    groups,
    claims,
    targets: results,
    engineWarnings: Object.fromEntries(bench.problems),
    workerWarnings: Object.fromEntries(workerProblems),
  };
  writeResults(OUT, json, markdown(machine, load, described, global, groups, claims, results));
}

await main();
