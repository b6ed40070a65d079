/**
 * `npm run bench:flat`: does the queue cost the same when its table is large? The issue's target:
 * with 1,000,000 finished jobs and 100,000 jobs scheduled for later in the table, run throughput
 * within 10% of an empty table's.
 *
 * For each store (a SQLite file in WAL mode, PostgreSQL), the same workload as `npm run bench`
 * on an empty table and on a grown one, alternating which goes first and repeated REPS times:
 * 1. bulk enqueue: 20,000 jobs with `enqueueMany`, 1,000 per call -> jobs/s;
 * 2. run: 20,000 pre-enqueued no-op jobs at concurrency 10 and at 50, from `start()` to the last job
 *    recorded `succeeded` -> jobs/s.
 * The grown table holds rows shaped as the queue leaves them, all in the benchmark's own queue (the
 * hard case: they share its partial indexes' key range): finished jobs of the last 12 hours (98%
 * succeeded, 1% failed after 5 attempts with an error, 1% cancelled; one in ten keyed), so retention
 * keeps them, and pending jobs due in 1 to 29 hours (one in ten keyed). The grown ratio is the median
 * grown figure over the median empty one. Every measurement gets a fresh database: a copy of a
 * template file on SQLite; a new schema filled with one INSERT ... SELECT generate_series on
 * PostgreSQL. Both are then analyzed, vacuumed (PostgreSQL) and checkpointed, empty ones too, so a
 * measurement pays neither for the fill's dirty pages nor for the first reader's hint bits.
 *
 * Beside throughput, each measurement reports the CPU time spent per job (this process, and on
 * PostgreSQL the engine's backends), which other work on the machine moves far less than wall time.
 *
 * Results go to the terminal and to bench/results/flat-latest.{json,md}. BENCH_QUICK=1 shrinks every
 * size and writes flat-quick.* (a smoke run of the harness, not a measurement); BENCH_REPS sets the rounds.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import type { Queue } from "../src/index.js";
import type { Store } from "../src/store/store.js";
import { sqlite } from "../src/store/sqlite.js";
import { postgres } from "../src/store/postgres.js";
import { DATABASE_URL, benchEngines, migratedPostgresSchema, payloads, postgresBackend, sqliteBackend, type Payload } from "./fixtures.js";
import { deferred, fmt, loadLine, machineInfo, machineLine, markdownTable, now, quantile, sleep, textTable, watchLoad, within, writeResults, type Load, type MachineInfo } from "./support.js";

const QUICK = process.env.BENCH_QUICK === "1";
const OUT = `flat-${QUICK ? "quick" : "latest"}`;
const JOBS = QUICK ? 2_000 : 20_000;
const ENQUEUE_BATCH = 1_000;
const FINISHED = QUICK ? 20_000 : 1_000_000;
const SCHEDULED = QUICK ? 2_000 : 100_000;
/** Rounds of each comparison; BENCH_REPS=5 (say) narrows the medians on a busy machine. */
const REPS = Number(process.env.BENCH_REPS ?? (QUICK ? 1 : 3));
if (!Number.isInteger(REPS) || REPS < 1) throw new Error(`BENCH_REPS must be a whole number of rounds, 1 or more; got ${process.env.BENCH_REPS}`);
const QUEUE = "bench";
/** The tolerance: a grown table keeps at least this share of the empty table's throughput. */
const TARGET = 0.9;
const LOAD_NOTE = ["the benchmark alone keeps about 1-2 busy", "throughput figures and their spread (the CPU figures much less)"] as const;

type Shape = "empty" | "grown";

/** One fresh database of a given shape, with a side connection for what the engine has no API for. */
interface Table {
  /** A new store on this database, for one engine. */
  open(): Store;
  /** Jobs of the benchmark still to finish: due pending ones and running ones (the scheduled ones stay pending). */
  unfinished(): Promise<number>;
  /** Jobs of the given status that the benchmark itself added (ids above the fill's). */
  added(status: "pending" | "succeeded"): Promise<number>;
  /**
   * CPU seconds used so far by this process and, on PostgreSQL, by the server backends serving
   * engines on this table. Unlike wall time, its differences barely move when other work competes
   * for the cores.
   */
  cpu(): Promise<number>;
  drop(): Promise<void>;
}

interface Backend {
  name: "SQLite" | "PostgreSQL";
  describe(): Promise<{ version: string; settings: Record<string, string> }>;
  /** Builds what `fresh` copies from (SQLite); returns the seconds the grown fill took. */
  setup(): Promise<number | undefined>;
  fresh(shape: Shape): Promise<Table>;
  /** Seconds the last grown fill took on PostgreSQL (SQLite fills once, in setup). */
  lastFillSeconds?: number;
  dispose(): Promise<void>;
}

// ---- CPU time ---------------------------------------------------------------------------------

const processCpu = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds of a local process from /proc (utime + stime); NaN where /proc cannot tell (a remote server). */
function procCpu(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

// ---- the grown table --------------------------------------------------------------------------

/** Finished rows span the last 12 hours: inside every default retention, so nothing is pruned mid-run. */
const FINISHED_SPAN_MS = 12 * 3_600_000;
const STEP_MS = Math.max(1, Math.floor(FINISHED_SPAN_MS / FINISHED));
const LAST_ERROR = "Error: upstream answered 503 Service Unavailable";

/**
 * The fill, written once for both dialects: `$n` is the row number, `$at` the fill time. Ids follow
 * row order, so the benchmark's own jobs come after the fill's, as new jobs come after history.
 */
function finishedColumns(n: string, at: string): string {
  const finishedAt = `(${at} - ${n} * ${STEP_MS})`;
  return `
    CASE WHEN ${n} % 10 = 0 THEN 'order-' || ${n} END,
    CASE ${n} % 100 WHEN 0 THEN 'failed' WHEN 1 THEN 'cancelled' ELSE 'succeeded' END,
    0, ${finishedAt} - 1000, CASE ${n} % 100 WHEN 0 THEN 5 WHEN 1 THEN 0 ELSE 1 END, 5,
    CASE WHEN ${n} % 100 = 0 THEN '${LAST_ERROR}' END,
    ${finishedAt} - 60000, CASE WHEN ${n} % 100 = 1 THEN NULL ELSE ${finishedAt} - 50 END, ${finishedAt}`;
}

function scheduledColumns(n: string, at: string): string {
  return `
    CASE WHEN ${n} % 10 = 0 THEN 'reminder-' || ${n} END, 'pending',
    0, ${at} + 3600000 + ${n} * 1000, 0, 5, NULL, ${at} - ${n}, NULL, NULL`;
}

const COLUMNS = "(queue, payload, key, status, priority, run_at, attempts, max_attempts, last_error, created_at, started_at, finished_at)";

// Counts through the partial indexes only (due pending by (queue, run_at), running by lease), so
// polling for "all settled" every millisecond stays cheap next to a million finished rows.
const UNFINISHED = (p: (i: number) => string) =>
  `SELECT (SELECT count(*) FROM tickwork_jobs WHERE queue = ${p(1)} AND status = 'pending' AND run_at <= ${p(2)})
        + (SELECT count(*) FROM tickwork_jobs WHERE status = 'running') AS n`;

function sqliteTables(): Backend {
  const dir = mkdtempSync(join(tmpdir(), "tickwork-flat-"));
  const templates: Record<Shape, string> = { empty: join(dir, "empty.db"), grown: join(dir, "grown.db") };
  let copies = 0;
  return {
    name: "SQLite",
    describe: () => sqliteBackend.describe(),
    async setup() {
      let seconds: number | undefined;
      for (const shape of ["empty", "grown"] as const) {
        const store = sqlite(templates[shape]);
        await store.migrate();
        await store.close();
        const db = new Database(templates[shape]);
        try {
          if (shape === "grown") {
            const t0 = now();
            const at = Date.now();
            db.transaction(() => {
              db.prepare(
                `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
                 INSERT INTO tickwork_jobs ${COLUMNS} SELECT ?, '{"n":' || n || '}', ${finishedColumns("n", String(at))} FROM g`,
              ).run(FINISHED, QUEUE);
              db.prepare(
                `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
                 INSERT INTO tickwork_jobs ${COLUMNS} SELECT ?, '{"n":' || n || '}', ${scheduledColumns("n", String(at))} FROM g`,
              ).run(SCHEDULED, QUEUE);
            })();
            seconds = (now() - t0) / 1000;
          }
          db.exec("ANALYZE");
          db.pragma("wal_checkpoint(TRUNCATE)");
        } finally {
          db.close();
        }
      }
      return seconds;
    },
    async fresh(shape) {
      const path = join(dir, `run-${copies++}.db`);
      copyFileSync(templates[shape], path);
      const side = new Database(path);
      side.pragma("busy_timeout = 5000");
      const filled = (side.prepare(`SELECT coalesce(max(id), 0) AS id FROM tickwork_jobs`).get() as { id: number }).id;
      const unfinished = side.prepare(UNFINISHED(() => "?"));
      const added = side.prepare(`SELECT count(*) AS n FROM tickwork_jobs WHERE id > ? AND status = ?`);
      return {
        open: () => sqlite(path),
        unfinished: async () => (unfinished.get(QUEUE, Date.now()) as { n: number }).n,
        added: async (status) => (added.get(filled, status) as { n: number }).n,
        cpu: async () => processCpu(),
        async drop() {
          side.close();
          for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
        },
      };
    },
    async dispose() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresTables(): Backend {
  const backend: Backend = {
    name: "PostgreSQL",
    async describe() {
      const { version, settings } = await postgresBackend.describe();
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      try {
        settings.autovacuum = (await client.query<{ autovacuum: string }>("SHOW autovacuum")).rows[0]!.autovacuum;
      } finally {
        await client.end();
      }
      return { version, settings };
    },
    setup: async () => undefined,
    async fresh(shape) {
      const { schema, side, count } = await migratedPostgresSchema("tw_flat");
      try {
        if (shape === "grown") {
          const t0 = now();
          const at = Date.now();
          await side.query(
            `INSERT INTO tickwork_jobs ${COLUMNS}
             SELECT $1, json_build_object('n', g), ${finishedColumns("g::bigint", "$2::bigint")} FROM generate_series(1, $3::int) AS g`,
            [QUEUE, at, FINISHED],
          );
          await side.query(
            `INSERT INTO tickwork_jobs ${COLUMNS}
             SELECT $1, json_build_object('n', g), ${scheduledColumns("g::bigint", "$2::bigint")} FROM generate_series(1, $3::int) AS g`,
            [QUEUE, at, SCHEDULED],
          );
          backend.lastFillSeconds = (now() - t0) / 1000;
        }
        // As a long-lived table would be: vacuumed (visibility map and hint bits set) and analyzed.
        // The checkpoint writes out the fill (or the previous measurement's pages) before the clock starts.
        await side.query("VACUUM ANALYZE tickwork_jobs");
        await side.query("CHECKPOINT");
      } catch (error) {
        await side.end();
        throw error;
      }
      const filled = await count(`SELECT coalesce(max(id), 0) AS n FROM tickwork_jobs`, []);
      // The engines' connections carry the schema's name, so their backends can be found (and their CPU read).
      const url = new URL(DATABASE_URL);
      url.searchParams.set("application_name", schema);
      return {
        open: () => postgres({ url: url.toString(), schema }),
        async cpu() {
          const { rows } = await side.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1`, [schema]);
          return rows.reduce((sum, { pid }) => sum + procCpu(pid), processCpu());
        },
        unfinished: () => count(UNFINISHED((i) => `$${i}`), [QUEUE, Date.now()]),
        added: (status) => count(`SELECT count(*) AS n FROM tickwork_jobs WHERE id > $1 AND status = $2`, [filled, status]),
        async drop() {
          try {
            await side.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
          } finally {
            await side.end();
          }
        },
      };
    },
    dispose: async () => {},
  };
  return backend;
}

// ---- scenarios -------------------------------------------------------------------------------

const bench = benchEngines();
const engine = (store: Store) => bench.engine(store);
const problems = bench.problems;

async function enqueueAll(queue: Queue<Payload>, jobs: number): Promise<void> {
  for (let i = 0; i < jobs; i += ENQUEUE_BATCH) await queue.enqueueMany(payloads(i, Math.min(ENQUEUE_BATCH, jobs - i)));
}

interface Figures {
  /** jobs/s, wall clock. */
  rate: number;
  /** CPU ms per 1,000 jobs: this process, and on PostgreSQL the engine's backends. */
  cpu: number;
}

const figures = (jobs: number, ms: number, cpuSeconds: number): Figures => ({ rate: (jobs / ms) * 1000, cpu: (cpuSeconds * 1e6) / jobs });

/** `enqueueMany`, ENQUEUE_BATCH per call, one call after another. */
async function benchEnqueue(table: Table, jobs = JOBS): Promise<Figures> {
  const tw = await engine(table.open());
  try {
    const queue = tw.queue<Payload>(QUEUE);
    await queue.enqueue({ n: -1 }); // opens a connection, so the CPU reading below includes its backend
    const cpu0 = await table.cpu();
    const t0 = now();
    await enqueueAll(queue, jobs);
    const elapsed = now() - t0;
    const cpu = (await table.cpu()) - cpu0;
    const pending = await table.added("pending");
    if (pending !== jobs + 1) throw new Error(`expected ${jobs + 1} new pending jobs after enqueue, found ${pending}`);
    return figures(jobs, elapsed, cpu);
  } finally {
    await tw.stop();
  }
}

/** `jobs` no-op jobs enqueued before `start()` (not timed), to the last one recorded succeeded. */
async function benchRun(table: Table, concurrency: number, jobs = JOBS): Promise<Figures> {
  const tw = await engine(table.open());
  try {
    let calls = 0;
    const last = deferred<void>();
    const queue = tw.queue<Payload>(QUEUE, {
      concurrency,
      handler: () => {
        if (++calls === jobs) last.resolve();
      },
    });
    await enqueueAll(queue, jobs);
    const cpu0 = await table.cpu();
    const t0 = now();
    await tw.start();
    await within(120_000, `running ${jobs} jobs`, last.promise);
    const tSettled = await within(120_000, "settling the last jobs", (async () => {
      while ((await table.unfinished()) > 0) await sleep(1);
      return now();
    })());
    const cpu = (await table.cpu()) - cpu0;
    await sleep(20); // a handler called twice would show up here
    const succeeded = await table.added("succeeded");
    if (calls !== jobs) throw new Error(`the handler ran ${calls} times for ${jobs} jobs`);
    if (succeeded !== jobs) throw new Error(`expected ${jobs} new succeeded jobs, found ${succeeded}`);
    return figures(jobs, tSettled - t0, cpu);
  } finally {
    await tw.stop();
  }
}

// ---- one store -------------------------------------------------------------------------------

interface Comparison {
  id: string;
  label: string;
  empty: Figures[];
  grown: Figures[];
  /** median grown jobs/s over median empty jobs/s: the measure (>= TARGET). */
  ratio: number;
  /** grown over empty jobs/s of each round, the two measured back to back. */
  pairedRatios: number[];
  /** median grown CPU per job over median empty CPU per job (a cost: <= 1 / TARGET is within 10%). */
  cpuRatio: number;
  error?: string;
}

interface StoreReport {
  store: Backend["name"];
  version: string;
  settings: Record<string, string>;
  fillSeconds: number | undefined;
  comparisons: Comparison[];
}

const SCENARIOS = [
  { id: "enqueue", label: `Bulk enqueue ${fmt(JOBS)} (enqueueMany, ${fmt(ENQUEUE_BATCH)} per call)`, measure: (t: Table) => benchEnqueue(t) },
  { id: "run.c10", label: `Run ${fmt(JOBS)} no-op jobs, concurrency 10`, measure: (t: Table) => benchRun(t, 10) },
  { id: "run.c50", label: `Run ${fmt(JOBS)} no-op jobs, concurrency 50`, measure: (t: Table) => benchRun(t, 50) },
] as const;

const median = (values: Figures[], key: keyof Figures) => quantile(values.map((v) => v[key]), 0.5);

async function benchStore(backend: Backend): Promise<StoreReport> {
  const { version, settings } = await backend.describe();
  const log = (text: string) => process.stdout.write(`  ${backend.name}: ${text}\n`);
  const onFresh = async <T>(shape: Shape, fn: (t: Table) => Promise<T>): Promise<T> => {
    const table = await backend.fresh(shape);
    try {
      return await fn(table);
    } finally {
      await table.drop();
    }
  };

  log(`building the tables (${fmt(FINISHED)} finished and ${fmt(SCHEDULED)} scheduled jobs)`);
  let fillSeconds = await backend.setup();
  log("warm-up");
  bench.setScenario(`${backend.name}, warm-up`);
  await onFresh("empty", (t) => benchEnqueue(t, 2_000));
  await onFresh("empty", (t) => benchRun(t, 10, 2_000));

  const comparisons: Comparison[] = [];
  for (const { id, label, measure } of SCENARIOS) {
    const results: Record<Shape, Figures[]> = { empty: [], grown: [] };
    try {
      for (let round = 0; round < REPS; round++) {
        // Alternating which shape goes first, so a drift in the machine's load favours neither.
        for (const shape of round % 2 === 0 ? (["empty", "grown"] as const) : (["grown", "empty"] as const)) {
          bench.setScenario(`${backend.name}, ${id}, ${shape}`);
          const value = await onFresh(shape, measure);
          if (shape === "grown") fillSeconds ??= backend.lastFillSeconds;
          results[shape].push(value);
          log(`${label}, ${shape} table, round ${round + 1}: ${fmt(value.rate)} jobs/s, ${fmt(value.cpu)} CPU ms per 1,000 jobs`);
        }
      }
      comparisons.push({
        id,
        label,
        ...results,
        ratio: median(results.grown, "rate") / median(results.empty, "rate"),
        pairedRatios: results.grown.map((g, i) => g.rate / results.empty[i]!.rate),
        cpuRatio: median(results.grown, "cpu") / median(results.empty, "cpu"),
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log(`  ERROR: ${message}`);
      process.exitCode = 1;
      comparisons.push({ id, label, ...results, ratio: Number.NaN, pairedRatios: [], cpuRatio: Number.NaN, error: message });
    }
  }
  await backend.dispose();
  return { store: backend.name, version, settings, fillSeconds, comparisons };
}

// ---- report ----------------------------------------------------------------------------------

const HEADER = ["Measurement", "Empty, jobs/s", "Grown, jobs/s", "Ratio", "Per round", "Verdict", "CPU ms / 1,000 jobs, empty -> grown", "CPU ratio"];

const verdict = (c: Comparison) => (c.error ? "ERROR" : c.ratio >= TARGET ? "PASS" : "MISS");

function summary(values: Figures[], key: keyof Figures): string {
  if (values.length === 0) return "";
  const all = values.map((v) => v[key]);
  return values.length > 1 ? `${fmt(median(values, key))} (${fmt(Math.min(...all))}-${fmt(Math.max(...all))})` : fmt(all[0]!);
}

function tableRows(report: StoreReport): string[][] {
  return report.comparisons.map((c) => [
    c.label,
    summary(c.empty, "rate"),
    summary(c.grown, "rate"),
    Number.isNaN(c.ratio) ? (c.error ?? "") : `${c.ratio.toFixed(2)}x`,
    c.pairedRatios.map((r) => r.toFixed(2)).join(", "),
    verdict(c),
    c.empty.length && c.grown.length ? `${fmt(median(c.empty, "cpu"))} -> ${fmt(median(c.grown, "cpu"))}` : "",
    Number.isNaN(c.cpuRatio) ? "" : `${c.cpuRatio.toFixed(2)}x`,
  ]);
}

function storeTitle(report: StoreReport): string {
  const settings = Object.entries(report.settings).map(([k, v]) => `${k}=${v}`).join(", ");
  return `${report.store} ${report.version} (${settings})`;
}

const problemLines = () => bench.report();

const GROWN = `${fmt(FINISHED)} finished jobs and ${fmt(SCHEDULED)} jobs scheduled for later`;

function markdown(machine: MachineInfo, load: Load, reports: StoreReport[]): string {
  const lines = [
    "# Flat cost: the queue on an empty table and on a grown one",
    "",
    `Machine: ${machineLine(machine)}.`,
    "",
    loadLine(machine, load, ...LOAD_NOTE),
    "",
    `The grown table holds ${GROWN}, all in the benchmark's queue: finished in the last 12 hours (98% succeeded, 1% failed with an error, 1% cancelled, one in ten keyed), so retention keeps them; scheduled 1 to 29 hours ahead (one in ten keyed).`,
    `Every measurement runs on a fresh database of its shape (analyzed, and on PostgreSQL vacuumed, then checkpointed), the empty and the grown one back to back, alternating which goes first; ${REPS} rounds.`,
    `Figures are medians with min-max; the ratio is the grown median over the empty median (target: >= ${TARGET}x, within 10%), and "per round" gives grown over empty for each back-to-back pair.`,
    "CPU is the CPU time this process and, on PostgreSQL, the engine's server backends (found by application_name, read from /proc) spent per 1,000 jobs; it moves far less than throughput when other work competes for the cores, so it is the steadier view of cost. Its ratio is grown over empty: up to 1.11x is within 10%.",
    `Run throughput is timed from \`start()\` with ${fmt(JOBS)} no-op jobs already enqueued, to the last job recorded \`succeeded\`. Regenerate with \`npm run bench:flat\`.`,
    "",
  ];
  for (const report of reports) {
    const fill = report.fillSeconds === undefined ? "" : ` Filling the grown table took ${report.fillSeconds.toFixed(1)} s.`;
    lines.push(`## ${storeTitle(report)}`, "", markdownTable(HEADER, tableRows(report), [1, 2, 3, 6, 7]), "", ...(fill ? [fill.trim(), ""] : []));
  }
  lines.push(...problemLines(), "");
  return lines.join("\n");
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const loadWatch = watchLoad();
  console.log(`tickwork flat-cost benchmark${QUICK ? " (BENCH_QUICK: sizes shrunk, not a measurement)" : ""}`);
  console.log(machineLine(machine));
  console.log(`Grown table: ${GROWN}.`);
  console.log();

  const reports: StoreReport[] = [];
  for (const backend of [sqliteTables(), postgresTables()]) {
    try {
      reports.push(await benchStore(backend));
    } catch (error) {
      console.error(`${backend.name}: could not run: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    }
  }

  const load = loadWatch.stop();
  console.log();
  for (const report of reports) {
    console.log(storeTitle(report));
    console.log(textTable(HEADER, tableRows(report)));
    console.log();
  }
  console.log(problemLines().join("\n"));
  console.log(loadLine(machine, load, ...LOAD_NOTE));

  const json = {
    benchmark: "flat",
    quick: QUICK,
    machine,
    load,
    parameters: { jobs: JOBS, enqueueBatch: ENQUEUE_BATCH, finishedJobs: FINISHED, scheduledJobs: SCHEDULED, repetitions: REPS, target: TARGET },
    stores: reports,
    engineWarnings: Object.fromEntries(problems),
  };
  writeResults(OUT, json, markdown(machine, load, reports));
}

await main();
