/**
 * `npm run bench:peers`: tickwork next to graphile-worker, pg-boss and BullMQ, in one run, on the
 * same PostgreSQL and Redis, with the same workloads (`workloads.ts`), alternating the systems'
 * order between repetitions. Writes bench/results/peers-latest.{json,md}.
 *
 * Options:
 *   --quick                   small sizes (2,000 jobs, 100 latency samples, 3 s sustained, short budgets, 1 repetition):
 *                             a smoke run of the harness; results go to a temp dir unless --out is given
 *   --sustained-seconds N     length of the sustained workload (default 60)
 *   --sustained-rate N        producer rate in jobs/s (default 2,000)
 *   --reps N                  repetitions (default 3)
 *   --systems a,b             only systems whose id contains one of these (e.g. tickwork,BullMQ.tuned)
 *   --workloads a,b           only these workloads: enqueue, enqueue.2k, enqueue.16k, run.c10, run.c50, run.c50.2k,
 *                             run.c50.16k, run.c50.5ms, run.c50.200k, latency, sustained, roundtrip, producer.1k, producer.3k, producer.5k,
 *                             scale.1, scale.2, scale.4 (every one of them by default, with --quick too)
 *   --producer-seconds N      length of each producer workload (default 20)
 *   --out DIR                 where to write peers-latest.{json,md}
 * A missed target is printed, never a failed exit; a measurement that throws becomes an error in
 * its row and sets a non-zero exit code.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { fmt, machineInfo, now, watchLoad } from "../support.js";
import type { Adapter, RunFigures, System } from "./adapter.js";
import { bullmqSystem } from "./bullmq.js";
import { graphileWorkerSystem } from "./graphile-worker.js";
import { pgBossSystem } from "./pg-boss.js";
import { PRODUCER, SCALE, handlerMs, json, runConcurrency, runJobs, machineLine, markdown, payloadBytes, producerRate, scaleProcesses, terminal, type Cell, type FiguresByWorkload, type Parameters, type Report, type RunId, type Results, type WorkloadId } from "./report.js";
import { awaitsResults } from "./adapter.js";
import { postgresInfo, redisInfo, tickworkRevision } from "./servers.js";
import { sqliteRuntime, sqliteWriteLimit } from "./sqlite-limit.js";
import { timerCeiling } from "./timer-ceiling.js";
import { tickworkSystem } from "./tickwork.js";
import { adapterFor, problems } from "./workloads.js";

const WORKLOADS: readonly WorkloadId[] = ["enqueue", "enqueue.2k", "enqueue.16k", "run.c10", "run.c50", "run.c50.2k", "run.c50.16k", "run.c50.5ms", "run.c50.200k", "latency", "sustained", "roundtrip", ...PRODUCER, ...SCALE];

function parameters(): { p: Parameters; systems: string[] | undefined; workloads: WorkloadId[]; out: string | undefined } {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      "sustained-seconds": { type: "string" },
      "sustained-rate": { type: "string" },
      "producer-seconds": { type: "string" },
      reps: { type: "string" },
      systems: { type: "string" },
      workloads: { type: "string" },
      out: { type: "string" },
    },
    strict: true,
  });
  const number = (name: string, value: string | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} expects a positive number, got ${value}`);
    return n;
  };
  const quick = values.quick ?? false;
  const workloads = values.workloads ? values.workloads.split(",").map((w) => w.trim()) : [...WORKLOADS];
  for (const w of workloads) if (!WORKLOADS.includes(w as WorkloadId)) throw new Error(`unknown workload "${w}" (expected ${WORKLOADS.join(", ")})`);
  return {
    p: {
      quick,
      repetitions: number("reps", values.reps, quick ? 1 : 3),
      jobs: quick ? 2_000 : 20_000,
      enqueueBatch: 1_000,
      latencySamples: quick ? 100 : 500,
      latencyConcurrency: 10,
      sustainedRate: number("sustained-rate", values["sustained-rate"], 2_000),
      sustainedSeconds: number("sustained-seconds", values["sustained-seconds"], quick ? 3 : 60),
      sustainedConcurrency: 10,
      // --quick is a smoke run (CI): a system that polls slowly (pg-boss at its defaults) reports the
      // rate of what it ran within a short budget rather than spending the run waiting on its polls.
      runBudgetSeconds: quick ? 4 : 30,
      backlogJobs: quick ? 20_000 : 200_000,
      backlogBudgetSeconds: quick ? 8 : 60,
      latencyBudgetSeconds: quick ? 4 : 30,
      roundTripSamples: quick ? 100 : 1_000,
      roundTripConcurrency: 10,
      producerSeconds: number("producer-seconds", values["producer-seconds"], quick ? 3 : 20),
      // 10 per process: the concurrency of the producer and round-trip workloads' worker process and
      // of run.c10, so scale.1 is the same one-process worker and scale.2/.4 show what more processes
      // add, not what more concurrency in one process adds (run.c50 shows that). It is also the pool
      // size the three PostgreSQL systems open by default (10 connections), so 4 processes stay well
      // inside PostgreSQL's default max_connections (100) next to the benchmark's own connections.
      scaleConcurrency: 10,
      drainBudgetSeconds: quick ? 5 : 10,
      sqliteLimitTransactions: quick ? 5_000 : 50_000,
    },
    systems: values.systems?.split(",").map((s) => s.trim().toLowerCase()),
    workloads: workloads as WorkloadId[],
    out: values.out,
  };
}

function allSystems(): System[] {
  return [
    graphileWorkerSystem("defaults"),
    graphileWorkerSystem("tuned"),
    pgBossSystem("defaults"),
    pgBossSystem("tuned"),
    bullmqSystem("defaults"),
    bullmqSystem("tuned"),
    bullmqSystem("defaults", "PostgreSQL"),
    bullmqSystem("tuned", "PostgreSQL"),
    tickworkSystem("PostgreSQL", "defaults"),
    tickworkSystem("PostgreSQL", "tuned"),
    tickworkSystem("SQLite", "defaults"),
    tickworkSystem("SQLite", "tuned"),
  ];
}

function measureOnce(adapter: Adapter, workload: WorkloadId, p: Parameters): Promise<FiguresByWorkload[WorkloadId]> {
  switch (workload) {
    case "enqueue":
    case "enqueue.2k":
    case "enqueue.16k":
      return adapter.bulkEnqueue(p.jobs, p.enqueueBatch, payloadBytes(workload));
    case "run.c10":
    case "run.c50":
    case "run.c50.2k":
    case "run.c50.16k":
    case "run.c50.5ms":
    case "run.c50.200k": {
      const budget = (workload === "run.c50.200k" ? p.backlogBudgetSeconds : p.runBudgetSeconds) * 1000;
      return adapter.runN(runJobs(workload, p), runConcurrency(workload), budget, { bytes: payloadBytes(workload), handlerMs: handlerMs(workload) });
    }
    case "latency":
      return adapter.latency(p.latencySamples, p.latencyBudgetSeconds * 1000);
    case "roundtrip":
      return adapter.roundTrip(p.roundTripSamples, p.roundTripConcurrency, p.latencyBudgetSeconds * 1000);
    case "producer.1k":
    case "producer.3k":
    case "producer.5k":
      return adapter.producer({ rate: producerRate(workload), seconds: p.producerSeconds, concurrency: p.roundTripConcurrency, drainBudgetMs: p.drainBudgetSeconds * 1000 });
    case "sustained":
      return adapter.sustained({ rate: p.sustainedRate, seconds: p.sustainedSeconds, concurrency: p.sustainedConcurrency, drainBudgetMs: p.drainBudgetSeconds * 1000 });
    case "scale.1":
    case "scale.2":
    case "scale.4":
      return adapter.scaleOut({ jobs: p.jobs, processes: scaleProcesses(workload), concurrency: p.scaleConcurrency, budgetMs: p.runBudgetSeconds * 1000 });
  }
}

function headline(workload: WorkloadId, f: FiguresByWorkload[WorkloadId]): string {
  if ("partial" in f && f.partial) return `${fmt(f.jobsPerSec)} jobs/s (partial: ${f.partial.ran} of ${f.partial.of})`;
  if ("perProcess" in f) return `${fmt(f.jobsPerSec)} jobs/s, start ${fmt(f.startMs)} ms, jobs per process ${f.perProcess.join(" / ")}`;
  if ("callP50" in f) return `p50 ${fmt(f.p50)} ms, p99 ${fmt(f.p99)} ms, ${fmt(f.enqueueRate)} enqueued/s, call p50 ${fmt(f.callP50)} ms${f.keptUp ? "" : ", fell behind"}`;
  if ((workload === "latency" || workload === "roundtrip") && "p99" in f && "samples" in f) return `p50 ${fmt(f.p50)} ms, p99 ${fmt(f.p99)} ms (${f.samples} samples)`;
  if ("keptUp" in f) return `${fmt(f.startRate)} started/s, backlog ${Math.round(f.backlogAtEnd)} at end, p99 ${fmt(f.p99)} ms${f.keptUp ? "" : ", fell behind"}`;
  if ("jobsPerSec" in f) return `${fmt(f.jobsPerSec)} jobs/s`;
  return "";
}

async function main(): Promise<void> {
  const { p, systems: only, workloads, out } = parameters();
  const systems = allSystems().filter((s) => !only || only.some((o) => s.id.toLowerCase().includes(o)));
  if (!systems.length) throw new Error("--systems matched no system");
  const adapters = systems.map(adapterFor);
  const machine = machineInfo();
  const revision = tickworkRevision();
  const load = watchLoad();
  const t0 = now();
  console.log(`tickwork vs peers${p.quick ? " (--quick: small sizes, not a measurement)" : ""}`);
  console.log(machineLine(machine));
  console.log(`tickwork ${revision}`);
  const [postgres, redis] = [await postgresInfo(), await redisInfo()];
  // The SQLite tickwork's SQLite rows and the write limit run on: node:sqlite on Node 22.13 and later.
  const sqlite = sqliteRuntime();
  console.log(`PostgreSQL ${postgres.version}, Redis ${redis.version}, SQLite ${sqlite.version} (${sqlite.driver}); systems: ${systems.map((s) => s.id).join(", ")}\n`);

  // Warm-up, not reported: JIT, each system's statement caches, the servers' buffers.
  for (const adapter of adapters) {
    process.stdout.write(`warm-up ${adapter.system.id}\n`);
    try {
      await adapter.runN(Math.min(1_000, p.jobs), 10, 5_000);
      await adapter.latency(10, 3_000);
    } catch (error) {
      console.log(`  warm-up failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  const results = Object.fromEntries(WORKLOADS.map((w) => [w, {}])) as Results;
  const sqliteLimit: number[] = [];
  const timerLimit: number[] = [];
  const measureLimit = systems.some((s) => s.backend.startsWith("SQLite")) && workloads.some((w) => w.startsWith("run."));
  /**
   * The workloads across processes run only systems with a worker process of their own here (see
   * System.workerProcess), the round trip only those whose producer can await a result.
   */
  const acrossProcesses = (w: WorkloadId) => w.startsWith("producer.") || w.startsWith("scale.");
  const runs = (w: WorkloadId, system: System) =>
    w === "roundtrip" ? system.workerProcess !== undefined && awaitsResults(system.workerProcess) : acrossProcesses(w) ? system.workerProcess !== undefined : true;
  const measured = (w: WorkloadId) => adapters.filter((a) => runs(w, a.system)).length;
  const total = workloads.reduce((n, w) => n + measured(w) * p.repetitions, 0);
  let done = 0;
  for (const workload of workloads) {
    const cells = results[workload] as Record<string, Cell<FiguresByWorkload[WorkloadId]>>;
    for (let rep = 0; rep < p.repetitions; rep++) {
      if (workload.startsWith("run.") && handlerMs(workload)) {
        const ceiling = await timerCeiling(runConcurrency(workload as RunId), handlerMs(workload), runJobs(workload as RunId, p));
        timerLimit.push(ceiling);
        console.log(`${workload} rep ${rep + 1}: ${handlerMs(workload)} ms timers alone, ${runConcurrency(workload as RunId)} at a time: ${fmt(ceiling)} calls/s`);
      }
      const order = rep % 2 === 0 ? adapters : [...adapters].reverse();
      for (const adapter of order) {
        const id = adapter.system.id;
        if (!runs(workload, adapter.system)) continue;
        const cell = (cells[id] ??= { values: [], errors: [] });
        const prefix = `[${++done}/${total}] ${workload} rep ${rep + 1}/${p.repetitions} ${id}`;
        try {
          // A SQLite row's yardstick, measured next to it: the write limit drifts by up to 2x over a run.
          const limit = measureLimit && workload.startsWith("run.") && adapter.system.backend.startsWith("SQLite") ? sqliteWriteLimit(p.sqliteLimitTransactions) : undefined;
          if (limit !== undefined) {
            sqliteLimit.push(limit);
            console.log(`${prefix}: SQLite single-row write transactions before it: ${fmt(limit)} tx/s`);
          }
          const figures = await measureOnce(adapter, workload, p);
          if (limit !== undefined) (figures as RunFigures).writeLimit = limit;
          cell.values.push(figures);
          console.log(`${prefix}: ${headline(workload, figures)}`);
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          cell.errors.push(message);
          process.exitCode = 1;
          console.log(`${prefix}: ERROR ${message}`);
        }
      }
    }
  }

  const report: Report = {
    parameters: p,
    machine,
    load: load.stop(),
    servers: { postgres, redis, sqlite: { version: sqlite.version, settings: { driver: sqlite.driver, journal_mode: "wal", synchronous: "normal" } } },
    systems,
    revision,
    results,
    sqliteLimit,
    timerLimit,
    problems,
    durationSeconds: (now() - t0) / 1000,
  };
  console.log(`\n${terminal(report)}`);

  const dir = out ?? (p.quick ? mkdtempSync(join(tmpdir(), "tickwork-peers-quick-")) : join(dirname(fileURLToPath(import.meta.url)), "..", "results"));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "peers-latest.json"), `${JSON.stringify(json(report), null, 2)}\n`);
  writeFileSync(join(dir, "peers-latest.md"), markdown(report));
  const shown = relative(process.cwd(), dir) || ".";
  console.log(`\nWrote ${join(shown.startsWith("..") ? dir : shown, "peers-latest.json")} and peers-latest.md`);
}

try {
  await main();
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
}
// A driver that keeps a socket open must not keep a finished benchmark alive (and CI waiting).
setTimeout(() => {
  console.warn("open handles kept the process alive after the run; exiting");
  process.exit();
}, 5_000).unref();
