/**
 * `npm run bench:schedule`: how late the scheduler fires under load, and how long a killed lease
 * holder's run takes to be taken over, on this machine.
 *
 * 1. Drift: one engine with `tw.start()` and a task every 1s whose run records how late it started
 *    (`Date.now() - ctx.scheduledAt`), for SLOTS slots after WARMUP_SLOTS discarded ones; first with
 *    nothing else to do, then while a queue in the same engine keeps 1,000 jobs queued and running
 *    (each handler does WORK_MS of async work, then enqueues its successor), at concurrency 10 and
 *    50. On SQLite (a temp file) and PostgreSQL (a fresh schema). Lateness p50/p95/max, slots missed,
 *    jobs/s run meanwhile, and the event loop's delay (the scheduler's timer waits behind handlers).
 * 2. Failover: PostgreSQL, two real processes (test/crash/fixtures/schedule-runner.ts) running a task
 *    every 1s whose runs take far longer than the lease. The process running a slot is SIGKILLed at
 *    a random point early in its run; measured from the kill to the other process's run of the same
 *    slot starting (the run's first line, written through its own connection). With leases of 2 s
 *    and 5 s (FAILOVER_REPS each) and the default 1 m (once; reported as the bound lease + one tick
 *    when BENCH_QUICK skips it).
 * Results go to the terminal and to bench/results/schedule-latest.{json,md}. Only a scenario that
 * errors sets a non-zero exit code.
 *
 * BENCH_QUICK=1 shrinks every size (a smoke run of the harness, not a measurement).
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createTickwork, type LogEvent } from "../src/index.js";
import { eventually } from "../test/crash/fixtures/processes.js";
import { RunsDb, Runners } from "../test/crash/fixtures/schedule-processes.js";
import { newTarget } from "../test/crash/fixtures/target.js";
import { postgresBackend, sqliteBackend, type Backend, type Fixture } from "./fixtures.js";
import { deferred, fmt, machineInfo, markdownTable, quantile, repeat, sleep, textTable, watchLoad, within, loadLine, machineLine, writeResults } from "./support.js";

const QUICK = process.env.BENCH_QUICK === "1";
/** A smoke run writes beside the measured results, never over them. */
/** What the load line says about this benchmark: how busy it keeps the machine, which figures suffer. */
const LOAD_NOTE = ["the drift-under-load scenarios alone keep about 1-2 busy", "lateness figures"] as const;
const OUT = `schedule-${QUICK ? "quick" : "latest"}`;
const SLOTS = QUICK ? 4 : 20;
const WARMUP_SLOTS = 2;
const BACKLOG = QUICK ? 200 : 1_000;
const WORK_MS = 2;
const LOADS: (number | null)[] = [null, 10, 50];
const FAILOVER_REPS = QUICK ? 1 : 3;
const TICK_MS = 1_000;
const DEFAULT_LEASE_MS = 60_000;
const FAILOVER_LEASES: { leaseMs: number; reps: number }[] = [
  { leaseMs: 2_000, reps: FAILOVER_REPS },
  { leaseMs: 5_000, reps: FAILOVER_REPS },
  { leaseMs: DEFAULT_LEASE_MS, reps: QUICK ? 0 : 1 },
];

// ---- engine warnings -------------------------------------------------------------------------

/**
 * Warnings and errors by scenario. A drift run should see none (a `task.overlap_skipped` would mean a
 * run outlived its slot); a failover run expects `task.run_taken_over` and `task.overlap_skipped` in
 * the surviving process and nothing else.
 */
const problems = new Map<string, number>();
let scenario = "setup";
const note = (event: Pick<LogEvent, "event" | "level"> & { operation?: unknown }) => {
  if (event.level === "debug" || event.level === "info") return;
  const key = `${scenario}: ${event.event}${typeof event.operation === "string" ? ` (${event.operation})` : ""}`;
  problems.set(key, (problems.get(key) ?? 0) + 1);
};

// ---- drift -----------------------------------------------------------------------------------

interface DriftFigures {
  store: Backend["name"];
  /** null: no load; else the load queue's concurrency. */
  concurrency: number | null;
  slots: number;
  lateMs: { p50: number; p95: number; max: number; min: number };
  /** Slots collapsed into a later run (a tick more than a slot late) or skipped as overlaps. */
  missed: number;
  overlapsSkipped: number;
  /** Load jobs finished per second while the measured slots ran. */
  jobsPerSecond: number | null;
  /** Jobs queued or running when the last slot ran (the load kept at BACKLOG). */
  liveJobsAtEnd: number | null;
  eventLoopDelayMs: { p50: number; p99: number; max: number };
}

async function onFresh<T>(backend: Backend, fn: (fx: Fixture) => Promise<T>): Promise<T> {
  const fx = await backend.fresh();
  try {
    return await fn(fx);
  } finally {
    await fx.drop();
  }
}

function benchDrift(backend: Backend, concurrency: number | null): Promise<DriftFigures> {
  return onFresh(backend, async (fx) => {
    const tw = await createTickwork({ store: fx.open(), logger: note, handleSignals: false, migrate: false });
    const delay = monitorEventLoopDelay({ resolution: 5 });
    try {
      let finished = 0;
      if (concurrency !== null) {
        // Each job's successor is enqueued as it finishes, so BACKLOG jobs stay queued or running.
        const load = tw.queue<{ n: number }>("load", {
          concurrency,
          handler: async (job) => {
            await sleep(WORK_MS);
            await tw.enqueue("load", { n: job.payload.n + BACKLOG });
            finished++;
          },
        });
        for (let i = 0; i < BACKLOG; i += 500) await load.enqueueMany(Array.from({ length: Math.min(500, BACKLOG - i) }, (_, k) => ({ payload: { n: i + k } })));
      }
      const samples: { lateMs: number; missed: number; finished: number }[] = [];
      const done = deferred<void>();
      tw.task("drift", {
        every: "1s",
        run: (ctx) => {
          samples.push({ lateMs: Date.now() - ctx.scheduledAt, missed: ctx.missed, finished });
          if (samples.length === WARMUP_SLOTS + SLOTS) done.resolve();
        },
      });
      await tw.start();
      delay.enable();
      await within((WARMUP_SLOTS + SLOTS + 15) * TICK_MS, `${SLOTS} slots on ${backend.name}`, done.promise);
      delay.disable();
      const liveJobsAtEnd = concurrency === null ? null : await fx.live();
      const status = (await tw.scheduler.status()).tasks[0]!;
      const measured = samples.slice(WARMUP_SLOTS);
      const late = measured.map((s) => s.lateMs);
      const first = measured[0]!;
      const last = measured.at(-1)!;
      return {
        store: backend.name,
        concurrency,
        slots: measured.length,
        lateMs: { p50: quantile(late, 0.5), p95: quantile(late, 0.95), max: Math.max(...late), min: Math.min(...late) },
        missed: measured.reduce((n, s) => n + s.missed, 0),
        overlapsSkipped: status.overlapsSkipped,
        jobsPerSecond: concurrency === null ? null : ((last.finished - first.finished) / (measured.length - 1)) * (1000 / TICK_MS),
        liveJobsAtEnd,
        eventLoopDelayMs: { p50: delay.percentile(50) / 1e6, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 },
      };
    } finally {
      delay.disable();
      await tw.stop();
    }
  });
}

// ---- failover --------------------------------------------------------------------------------

interface FailoverSample {
  leaseMs: number;
  /** How far into its run the victim was killed. */
  killedIntoRunMs: number;
  /** The victim's lease left at the kill: its last heartbeat's `running_until` minus the kill time. */
  leaseLeftMs: number;
  /** From SIGKILL to the other process's run of the same slot starting. */
  failoverMs: number;
  /** From the lease lapsing to that run starting: how soon a live process noticed. */
  afterLapseMs: number;
}

/**
 * Two runner processes on a fresh schema; the one running a slot is killed 300 ms + a random part of
 * min(lease / 2, 2 s) into its run, so the time since its last heartbeat (and the lease it leaves)
 * varies as it would for a crash at any moment.
 */
async function benchFailover(leaseMs: number): Promise<FailoverSample> {
  const { target, cleanup } = newTarget("postgres");
  const runners = new Runners();
  const runs = RunsDb.open(target);
  const name = "failover";
  try {
    await runs.prepare(target);
    const task = { name, every: "1s", lease: `${leaseMs}ms`, workMs: 30 * 60_000 };
    const procs = [runners.spawn({ target, task }), runners.spawn({ target, task })];
    await Promise.all(procs.map((p) => p.ready));
    const first = await eventually(async () => (await runs.rows()).find((r) => r.phase === "start"), "a run to start", 20_000, 20);
    const victim = runners.byPid(first.pid);
    await sleep(first.at + 300 + Math.random() * Math.min(leaseMs / 2, 2_000) - Date.now());
    const killedAt = Date.now();
    await victim.kill();
    await sleep(100);
    const left = await runs.taskRow(name);
    if (left.runningBy !== victim.instanceId || left.runningUntil === null) throw new Error(`the killed process did not hold the lease: ${JSON.stringify(left)}`);
    const taken = await eventually(
      async () => (await runs.rows()).find((r) => r.phase === "start" && r.slot === first.slot && r.pid !== victim.pid),
      "the other process to take the slot over",
      leaseMs + 20_000,
      10,
    );
    const survivor = runners.byPid(taken.pid);
    await survivor.waitFor((l) => l.event === "task.run_taken_over", "task.run_taken_over", 2_000);
    for (const line of [...survivor.lines, ...victim.lines]) {
      const expected = line.event === "task.run_taken_over" || line.event === "task.overlap_skipped";
      if (!expected && typeof line.level === "string") note({ event: line.event, level: line.level as LogEvent["level"], operation: line.operation });
    }
    return { leaseMs, killedIntoRunMs: killedAt - first.at, leaseLeftMs: left.runningUntil - killedAt, failoverMs: taken.at - killedAt, afterLapseMs: taken.at - left.runningUntil };
  } finally {
    await runners.killAll();
    await runs.close();
    await cleanup();
  }
}

interface FailoverFigures {
  leaseMs: number;
  /** Lease + one tick of a 1s task: the lease lapses at most one lease after the kill, a live process looks at least every slot. */
  boundMs: number;
  samples: FailoverSample[];
  /** Why there are no samples, if there are none. */
  skipped?: string;
}

// ---- report ----------------------------------------------------------------------------------

const ms = (v: number) => (Number.isFinite(v) ? fmt(v) : "n/a");
const loadLabel = (c: number | null) => (c === null ? "no load" : `${fmt(BACKLOG)} jobs queued, concurrency ${c}`);
const leaseLabel = (leaseMs: number) => (leaseMs % 60_000 === 0 ? `${leaseMs / 60_000} m${leaseMs === DEFAULT_LEASE_MS ? " (default)" : ""}` : `${leaseMs / 1000} s`);

const DRIFT_HEADER = ["Store", "Load", "Slots", "Late p50 ms", "p95 ms", "max ms", "Missed", "Jobs/s", "Loop delay p99 ms", "Loop max ms"];
function driftRows(drift: (DriftFigures | { store: string; concurrency: number | null; error: string })[]): string[][] {
  return drift.map((d) =>
    "error" in d
      ? [d.store, loadLabel(d.concurrency), "ERROR", d.error, "", "", "", "", "", ""]
      : [
          d.store, loadLabel(d.concurrency), String(d.slots), ms(d.lateMs.p50), ms(d.lateMs.p95), ms(d.lateMs.max), String(d.missed + d.overlapsSkipped),
          d.jobsPerSecond === null ? "" : fmt(d.jobsPerSecond), ms(d.eventLoopDelayMs.p99), ms(d.eventLoopDelayMs.max),
        ],
  );
}

const FAILOVER_HEADER = ["Lease", "Runs", "Failover median ms", "min ms", "max ms", "Lease left at kill ms", "Lapse to takeover ms", "Bound (lease + tick) ms"];
function failoverRows(failover: (FailoverFigures | { leaseMs: number; error: string })[]): string[][] {
  return failover.map((f) => {
    if ("error" in f) return [leaseLabel(f.leaseMs), "ERROR", f.error, "", "", "", "", ""];
    if (f.samples.length === 0) return [leaseLabel(f.leaseMs), "0", f.skipped ?? "not measured", "", "", "", "", fmt(f.boundMs)];
    const fo = f.samples.map((s) => s.failoverMs);
    const left = f.samples.map((s) => s.leaseLeftMs);
    const lapse = f.samples.map((s) => s.afterLapseMs);
    return [
      leaseLabel(f.leaseMs), String(f.samples.length), fmt(quantile(fo, 0.5)), fmt(Math.min(...fo)), fmt(Math.max(...fo)),
      fmt(quantile(left, 0.5)), `${fmt(quantile(lapse, 0.5))} (max ${fmt(Math.max(...lapse))})`, fmt(f.boundMs),
    ];
  });
}

function problemLines(): string[] {
  if (problems.size === 0) return ["Engine warnings and errors during the run: none (besides the takeover and overlap events a failover expects)."];
  return ["Engine warnings and errors during the run (these scenarios' figures are suspect):", ...[...problems].map(([key, n]) => `- ${key}: ${n}`)];
}

/** The two sentences the issue's closing note asks for, from the figures. */
function summaryLines(drift: (DriftFigures | { error: string })[], failover: (FailoverFigures | { error: string })[]): string[] {
  const lines: string[] = [];
  const ok = drift.filter((d): d is DriftFigures => !("error" in d));
  for (const store of ["SQLite", "PostgreSQL"] as const) {
    const idle = ok.find((d) => d.store === store && d.concurrency === null);
    const loaded = ok.filter((d) => d.store === store && d.concurrency !== null);
    if (!idle || loaded.length === 0) continue;
    lines.push(
      `- Drift on ${store}: a task every 1s fired p50 ${ms(idle.lateMs.p50)} ms / p95 ${ms(idle.lateMs.p95)} ms / max ${ms(idle.lateMs.max)} ms late with nothing else running; ` +
        loaded.map((d) => `with ${fmt(BACKLOG)} queued jobs running at concurrency ${d.concurrency} (${fmt(d.jobsPerSecond ?? 0)} jobs/s) p50 ${ms(d.lateMs.p50)} / p95 ${ms(d.lateMs.p95)} / max ${ms(d.lateMs.max)} ms, ${d.missed + d.overlapsSkipped} slots missed`).join("; ") +
        ".",
    );
  }
  const measured = failover.filter((f): f is FailoverFigures => !("error" in f));
  const parts = measured.map((f) => {
    if (f.samples.length === 0) return `lease ${leaseLabel(f.leaseMs)}: not measured, bounded by lease + tick = ${fmt(f.boundMs)} ms`;
    const fo = f.samples.map((s) => s.failoverMs);
    return `lease ${leaseLabel(f.leaseMs)}: ${f.samples.length > 1 ? `median ${fmt(quantile(fo, 0.5))} ms (max ${fmt(Math.max(...fo))})` : `${fmt(fo[0]!)} ms`}, bound ${fmt(f.boundMs)} ms`;
  });
  if (parts.length) lines.push(`- Failover on PostgreSQL: from SIGKILL of the lease holder to another process starting its run: ${parts.join("; ")}.`);
  return lines;
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const loadWatch = watchLoad();
  console.log(`tickwork schedule benchmark${QUICK ? " (BENCH_QUICK: sizes shrunk, not a measurement)" : ""}`);
  console.log(machineLine(machine));

  const versions: Record<string, string> = {};
  for (const backend of [sqliteBackend, postgresBackend]) {
    const d = await backend.describe();
    versions[backend.name] = `${d.version} (${Object.entries(d.settings).map(([k, v]) => `${k}=${v}`).join(", ")})`;
  }

  const drift: (DriftFigures | { store: Backend["name"]; concurrency: number | null; error: string })[] = [];
  for (const backend of [sqliteBackend, postgresBackend]) {
    for (const concurrency of LOADS) {
      scenario = `drift, ${backend.name}, ${loadLabel(concurrency)}`;
      console.log(`  ${scenario}: ${WARMUP_SLOTS + SLOTS} slots`);
      try {
        drift.push(await benchDrift(backend, concurrency));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        console.log(`    ERROR: ${message}`);
        drift.push({ store: backend.name, concurrency, error: message });
        process.exitCode = 1;
      }
    }
  }

  const failover: (FailoverFigures | { leaseMs: number; error: string })[] = [];
  for (const { leaseMs, reps } of FAILOVER_LEASES) {
    scenario = `failover, PostgreSQL, lease ${leaseLabel(leaseMs)}`;
    const boundMs = leaseMs + TICK_MS;
    if (reps === 0) {
      failover.push({ leaseMs, boundMs, samples: [], skipped: "skipped (BENCH_QUICK)" });
      continue;
    }
    console.log(`  ${scenario}: x${reps}`);
    try {
      failover.push({ leaseMs, boundMs, samples: await repeat(reps, () => benchFailover(leaseMs)) });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      console.log(`    ERROR: ${message}`);
      failover.push({ leaseMs, error: message });
      process.exitCode = 1;
    }
  }

  const load = loadWatch.stop();
  const summary = summaryLines(drift, failover);
  console.log();
  console.log(`Drift: lateness of a task every 1s (${SLOTS} slots after ${WARMUP_SLOTS} warm-up), ms`);
  console.log(textTable(DRIFT_HEADER, driftRows(drift)));
  console.log();
  console.log("Failover: SIGKILL of the process running a slot -> the other process starting that slot, PostgreSQL, 2 processes");
  console.log(textTable(FAILOVER_HEADER, failoverRows(failover)));
  console.log();
  console.log(summary.join("\n"));
  console.log(problemLines().join("\n"));
  console.log(loadLine(machine, load, ...LOAD_NOTE));

  const json = {
    benchmark: "schedule",
    quick: QUICK,
    machine,
    load,
    versions,
    parameters: { slots: SLOTS, warmupSlots: WARMUP_SLOTS, every: "1s", backlog: BACKLOG, workMs: WORK_MS, loadConcurrency: LOADS.filter((c) => c !== null), failoverLeasesMs: FAILOVER_LEASES },
    drift,
    failover,
    summary,
    engineWarnings: Object.fromEntries(problems),
  };
  const md = [
    "# Schedule benchmark",
    "",
    `Machine: ${machineLine(machine)}.`,
    "",
    loadLine(machine, load, ...LOAD_NOTE),
    "",
    `Stores: SQLite ${versions.SQLite}; PostgreSQL ${versions.PostgreSQL}.`,
    "",
    "## Summary",
    "",
    ...summary,
    "",
    "## Drift under load",
    "",
    `One engine with \`tw.start()\` and a task \`every: "1s"\` whose run records \`Date.now() - ctx.scheduledAt\`; ${SLOTS} slots after ${WARMUP_SLOTS} discarded.`,
    `Under load, a queue in the same engine keeps ${fmt(BACKLOG)} jobs queued and running: each handler waits ${WORK_MS} ms, then enqueues its successor.`,
    "Missed counts slots collapsed into a later run or skipped as overlaps. Loop delay is Node's event-loop delay over the run: the schedule's timer and its queries wait behind the handlers' callbacks.",
    "",
    markdownTable(DRIFT_HEADER, driftRows(drift), [2, 3, 4, 5, 6, 7, 8, 9]),
    "",
    "## Failover when the lease holder is killed",
    "",
    "PostgreSQL, two processes (`test/crash/fixtures/schedule-runner.ts`) running a task every 1s whose runs outlast the lease. The process running a slot is SIGKILLed 300 ms + a random part of min(lease / 2, 2 s) into its run.",
    "Failover is measured from the kill to the other process's run of the same slot writing its first row. A run's heartbeat renews its lease every lease / 4, so the lease left at a kill is between 3/4 of the lease and the whole lease; a live process that sees the task held elsewhere wakes just after the lease it read ends (and at every slot), so the takeover follows the lapse within milliseconds. The bound is lease + one tick of the task.",
    "",
    markdownTable(FAILOVER_HEADER, failoverRows(failover), [1, 2, 3, 4, 5, 6, 7]),
    "",
    ...problemLines(),
    "",
    "Regenerate with `npm run bench:schedule` (about 5 minutes; `BENCH_QUICK=1` for a smoke run of the harness).",
    "",
  ].join("\n");
  writeResults(OUT, json, md);
}

await main();
