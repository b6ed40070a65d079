/**
 * `npm run bench:memory`: does a worker's memory stay flat over 1,000,000 jobs? The target:
 * a worker running a million no-op jobs keeps a flat heap.
 *
 * Each store (a SQLite file in WAL mode, PostgreSQL) runs in its own child process, so each peak RSS
 * is its own. The child starts one engine with one queue (concurrency 50, no-op handler) and feeds
 * it while it runs: `enqueueMany` of 1,000 at a time whenever fewer than LOW jobs wait, up to HIGH.
 * Fed this way, the live set stays bounded and only finished history grows (to a million rows; the
 * default retention keeps them), as in a service that runs for days. Enqueueing the million upfront
 * would instead put a million payloads through this heap before the run and start it on a backlog
 * that only shrinks, which could hide a leak behind memory freed as the backlog drains.
 *
 * Memory is sampled every second (heapUsed and RSS, as they are; every 0.1 s in quick mode), and before `start()` and at 10%, 50%, 90% and 100% of
 * the jobs after a full collection (`gc()`, which needs --expose-gc: the npm script and the child
 * processes pass it). The heap is flat when, after collection, the heap at 90% is within FLAT_MARGIN
 * of the heap at 10%. Peak RSS is the process's maximum resident set (getrusage).
 *
 * Results go to the terminal and to bench/results/memory-latest.{json,md}. BENCH_QUICK=1 runs 20,000
 * jobs and writes memory-quick.* (a smoke run of the harness, not a measurement).
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createTickwork } from "../src/index.js";
import { postgresBackend, sqliteBackend, type Backend } from "./fixtures.js";
import { fmt, loadLine, machineInfo, machineLine, markdownTable, now, sleep, textTable, watchLoad, within, writeResults, type Load, type MachineInfo } from "./support.js";

const QUICK = process.env.BENCH_QUICK === "1";
const OUT = `memory-${QUICK ? "quick" : "latest"}`;
const JOBS = QUICK ? 20_000 : 1_000_000;
const CONCURRENCY = 50;
const ENQUEUE_BATCH = 1_000;
/** The producer refills when fewer than LOW jobs wait, and stops at HIGH. */
const LOW = 5_000;
const HIGH = 10_000;
const SAMPLE_EVERY_MS = QUICK ? 100 : 1_000;
const CHECKPOINTS = [0.1, 0.5, 0.9, 1] as const;
/** Flat: the heap at 90% is at most this much above the heap at 10% (the larger of the two bounds). */
const FLAT_MARGIN = { share: 0.1, mib: 2 };
const QUEUE = "memory";
const MIB = 2 ** 20;
const LOAD_NOTE = ["the benchmark alone keeps about 1-2 busy", "the run times and jobs/s (not the memory figures)"] as const;

interface Sample {
  /** Seconds since `start()`. */
  t: number;
  jobs: number;
  heapUsedMiB: number;
  /** What V8 has reserved for its heap: RSS follows this, not heapUsed. */
  heapTotalMiB: number;
  /** Memory outside V8's heap that it tracks (Buffers and the like). */
  externalMiB: number;
  rssMiB: number;
}

interface Checkpoint extends Sample {
  label: string;
}

interface StoreResult {
  store: Backend["name"];
  jobs: number;
  seconds: number;
  jobsPerSecond: number;
  peakRssMiB: number;
  checkpoints: Checkpoint[];
  /** Before `start()`, engine created and store open, after a collection. */
  atStart: Checkpoint;
  /** After `tw.stop()` and a collection. */
  afterStop: Checkpoint;
  samples: Sample[];
  heapGrowthMiB: number;
  bytesPerJob: number;
  flat: boolean;
  engineWarnings: Record<string, number>;
}

const mib = (bytes: number) => Math.round((bytes / MIB) * 10) / 10;

// ---- the child: one store, one million jobs -----------------------------------------------------

async function runStore(backend: Backend): Promise<StoreResult> {
  const collect = globalThis.gc;
  if (typeof collect !== "function") throw new Error("memory checkpoints need gc(): run node with --expose-gc (npm run bench:memory does)");
  const log = (text: string) => process.stdout.write(`  ${backend.name}: ${text}\n`);
  const problems = new Map<string, number>();
  const fx = await backend.fresh();
  try {
    const tw = await createTickwork({
      store: fx.open(),
      logger: (event) => {
        if (event.level !== "debug" && event.level !== "info") problems.set(event.event, (problems.get(event.event) ?? 0) + 1);
      },
      handleSignals: false,
      migrate: false,
    });
    const samples: Sample[] = [];
    const checkpoints: Checkpoint[] = [];
    let t0 = now();
    let handled = 0;
    let enqueued = 0;
    let room: (() => void) | undefined;
    const take = (label?: string): Sample | Checkpoint => {
      const { heapUsed, heapTotal, external, rss } = process.memoryUsage();
      const sample = { t: Math.round(now() - t0) / 1000, jobs: handled, heapUsedMiB: mib(heapUsed), heapTotalMiB: mib(heapTotal), externalMiB: mib(external), rssMiB: mib(rss) };
      return label === undefined ? sample : { label, ...sample };
    };
    const checkpoint = (label: string) => {
      collect();
      const c = take(label) as Checkpoint;
      checkpoints.push(c);
      log(`${label}: ${c.jobs.toLocaleString("en-US")} jobs, heap ${c.heapUsedMiB} MiB, RSS ${c.rssMiB} MiB after gc (${c.t} s)`);
    };
    const marks = new Map(CHECKPOINTS.filter((c) => c < 1).map((c) => [Math.round(JOBS * c), `${c * 100}%`]));
    let allDone: () => void = () => {};
    const done = new Promise<void>((resolve) => (allDone = resolve));

    const queue = tw.queue<{ n: number }>(QUEUE, {
      concurrency: CONCURRENCY,
      handler: () => {
        handled++;
        // Taken here, not on a later turn of the event loop: on SQLite a whole backlog can run in
        // microtasks, and a checkpoint deferred with setImmediate came after the run's end (or never).
        const mark = marks.get(handled);
        if (mark) checkpoint(mark);
        if (room && enqueued - handled <= LOW) {
          room();
          room = undefined;
        }
        if (handled === JOBS) allDone();
      },
    });
    const produce = async () => {
      while (enqueued < JOBS) {
        if (enqueued - handled >= HIGH) await new Promise<void>((resolve) => (room = resolve));
        const count = Math.min(ENQUEUE_BATCH, JOBS - enqueued);
        const from = enqueued;
        enqueued += count;
        await queue.enqueueMany(Array.from({ length: count }, (_, i) => ({ payload: { n: from + i } })));
      }
    };

    checkpoint("start");
    const sampler = setInterval(() => samples.push(take()), SAMPLE_EVERY_MS);
    t0 = now();
    await tw.start();
    const producing = produce();
    await within(20 * 60_000, `running ${JOBS} jobs`, done);
    await producing;
    await within(60_000, "settling the last jobs", (async () => {
      while ((await fx.live()) > 0) await sleep(5);
    })());
    const seconds = (now() - t0) / 1000;
    checkpoint("100%");
    clearInterval(sampler);
    await tw.stop();
    collect();
    const afterStop = take("after stop") as Checkpoint;

    const succeeded = await fx.countByStatus("succeeded");
    if (handled !== JOBS) throw new Error(`the handler ran ${handled} times for ${JOBS} jobs`);
    if (succeeded !== JOBS) throw new Error(`expected ${JOBS} succeeded jobs, found ${succeeded}`);

    const at = (label: string) => checkpoints.find((c) => c.label === label)!;
    const growth = at("90%").heapUsedMiB - at("10%").heapUsedMiB;
    return {
      store: backend.name,
      jobs: JOBS,
      seconds: Math.round(seconds * 10) / 10,
      jobsPerSecond: JOBS / seconds,
      peakRssMiB: mib(process.resourceUsage().maxRSS * 1024),
      checkpoints: CHECKPOINTS.map((c) => at(`${c * 100}%`)),
      atStart: at("start"),
      afterStop,
      samples,
      heapGrowthMiB: Math.round(growth * 10) / 10,
      bytesPerJob: Math.round(((growth * MIB) / (JOBS * 0.8)) * 100) / 100,
      flat: growth <= Math.max(FLAT_MARGIN.mib, FLAT_MARGIN.share * at("10%").heapUsedMiB),
      engineWarnings: Object.fromEntries(problems),
    };
  } finally {
    await fx.drop();
  }
}

// ---- the parent: one child per store, then the report -------------------------------------------

function inChild(store: Backend["name"]): Promise<StoreResult> {
  const execArgv = process.execArgv.includes("--expose-gc") ? process.execArgv : [...process.execArgv, "--expose-gc"];
  const child = fork(fileURLToPath(import.meta.url), ["--store", store], { execArgv });
  return new Promise((resolve, reject) => {
    let result: StoreResult | undefined;
    child.on("message", (message) => (result = message as StoreResult));
    child.on("error", reject);
    child.on("exit", (code) => (result && code === 0 ? resolve(result) : reject(new Error(`the ${store} run exited with code ${code}`))));
  });
}

const HEADER = ["Measurement", "SQLite (file)", "PostgreSQL"];

function rows(results: StoreResult[]): string[][] {
  const cell = (fn: (r: StoreResult) => string) => HEADER.slice(1).map((store) => {
    const r = results.find((x) => (store === "SQLite (file)" ? x.store === "SQLite" : x.store === store));
    return r ? fn(r) : "did not run";
  });
  const at = (i: number, key: "heapUsedMiB" | "rssMiB") => (r: StoreResult) => `${r.checkpoints[i]![key]} MiB`;
  return [
    ["Jobs, run time", ...cell((r) => `${fmt(r.jobs)} in ${r.seconds} s (${fmt(r.jobsPerSecond)} jobs/s)`)],
    ["Peak RSS", ...cell((r) => `${r.peakRssMiB} MiB`)],
    ["Heap after gc, before start()", ...cell((r) => `${r.atStart.heapUsedMiB} MiB`)],
    ...CHECKPOINTS.map((c, i) => [`Heap after gc at ${c * 100}%`, ...cell(at(i, "heapUsedMiB"))]),
    ["Heap after gc, engine stopped", ...cell((r) => `${r.afterStop.heapUsedMiB} MiB`)],
    ["RSS after gc, before start()", ...cell((r) => `${r.atStart.rssMiB} MiB`)],
    ...CHECKPOINTS.map((c, i) => [`RSS at ${c * 100}%`, ...cell(at(i, "rssMiB"))]),
    ["V8 heap reserved (heapTotal) at 10% / 90%", ...cell((r) => `${r.checkpoints[0]!.heapTotalMiB} / ${r.checkpoints[2]!.heapTotalMiB} MiB`)],
    ["Heap growth, 10% to 90%", ...cell((r) => `${r.heapGrowthMiB} MiB (${r.bytesPerJob} bytes per job)`)],
    ["Flat heap", ...cell((r) => (r.flat ? "yes" : "NO"))],
  ];
}

/** Heap (no gc) and RSS at each tenth of the run: the nearest one-second sample. */
function seriesRows(results: StoreResult[]): string[][] {
  return results.flatMap((r) => {
    const nearest = Array.from({ length: 10 }, (_, i) => {
      const target = (r.jobs * (i + 1)) / 10;
      return r.samples.reduce<Sample | undefined>((best, s) => (!best || Math.abs(s.jobs - target) < Math.abs(best.jobs - target) ? s : best), undefined);
    });
    return [
      [`${r.store}, heap used`, ...nearest.map((s) => (s ? `${s.heapUsedMiB}` : ""))],
      [`${r.store}, RSS`, ...nearest.map((s) => (s ? `${s.rssMiB}` : ""))],
    ];
  });
}

const SERIES_HEADER = ["MiB, sampled without gc, at", ...Array.from({ length: 10 }, (_, i) => `${(i + 1) * 10}%`)];

function warningLines(results: StoreResult[]): string[] {
  const lines = results.flatMap((r) => Object.entries(r.engineWarnings).map(([event, n]) => `- ${r.store}: ${event}: ${n}`));
  return lines.length ? ["Engine warnings and errors during the run (these figures are suspect):", ...lines] : ["Engine warnings and errors during the run: none."];
}

const FLAT_RULE = `flat: after gc, the heap at 90% is at most max(${FLAT_MARGIN.mib} MiB, ${FLAT_MARGIN.share * 100}% of the heap at 10%) above the heap at 10%`;

function markdown(machine: MachineInfo, load: Load, results: StoreResult[]): string {
  return [
    "# Memory: one worker, a million no-op jobs",
    "",
    `Machine: ${machineLine(machine)}.`,
    "",
    loadLine(machine, load, ...LOAD_NOTE),
    "",
    `Each store runs in its own process: one engine, one queue at concurrency ${CONCURRENCY}, no-op handler, ${fmt(JOBS)} jobs fed while it runs (\`enqueueMany\` of ${fmt(ENQUEUE_BATCH)} whenever fewer than ${fmt(LOW)} wait, up to ${fmt(HIGH)}), so the live set stays bounded and finished history grows to ${fmt(JOBS)} rows.`,
    `Heap and RSS at each checkpoint are taken after a full collection (\`gc()\`); ${FLAT_RULE}. Peak RSS is the process's maximum resident set. Regenerate with \`npm run bench:memory\`.`,
    "",
    markdownTable(HEADER, rows(results), [1, 2]),
    "",
    "Heap and RSS as sampled every second, without collection (the heap saws between V8's own collections), at each tenth of the jobs:",
    "",
    markdownTable(SERIES_HEADER, seriesRows(results), SERIES_HEADER.slice(1).map((_, i) => i + 1)),
    "",
    ...warningLines(results),
    "",
  ].join("\n");
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const loadWatch = watchLoad();
  console.log(`tickwork memory benchmark${QUICK ? " (BENCH_QUICK: sizes shrunk, not a measurement)" : ""}`);
  console.log(machineLine(machine));
  console.log(`${fmt(JOBS)} no-op jobs per store, concurrency ${CONCURRENCY}, each store in its own process.`);
  console.log();

  const results: StoreResult[] = [];
  for (const store of ["SQLite", "PostgreSQL"] as const) {
    try {
      results.push(await inChild(store));
    } catch (error) {
      console.error(`${store}: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    }
  }

  const load = loadWatch.stop();
  console.log();
  console.log(textTable(HEADER, rows(results)));
  console.log();
  console.log(textTable(SERIES_HEADER, seriesRows(results)));
  console.log(FLAT_RULE);
  console.log(warningLines(results).join("\n"));
  console.log(loadLine(machine, load, ...LOAD_NOTE));

  const json = {
    benchmark: "memory",
    quick: QUICK,
    machine,
    load,
    parameters: { jobs: JOBS, concurrency: CONCURRENCY, enqueueBatch: ENQUEUE_BATCH, low: LOW, high: HIGH, sampleEveryMs: SAMPLE_EVERY_MS, flatMargin: FLAT_MARGIN },
    stores: results,
  };
  writeResults(OUT, json, markdown(machine, load, results));
}

const storeArg = process.argv.indexOf("--store");
if (storeArg === -1) {
  await main();
} else {
  const name = process.argv[storeArg + 1];
  const backend = [sqliteBackend, postgresBackend].find((b) => b.name === name);
  if (!backend) throw new Error(`unknown store ${name}: expected SQLite or PostgreSQL`);
  process.send!(await runStore(backend));
  process.disconnect();
}
