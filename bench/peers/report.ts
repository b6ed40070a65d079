/**
 * Tables, ratios and targets of the side-by-side benchmark, for the terminal and for
 * bench/results/peers-latest.{json,md}. Nothing here measures; main.ts hands over the figures.
 */
import { fmt, markdownTable, quantile, summarise, textTable, type MachineInfo, type Summary } from "../support.js";
import { awaitsResults } from "./adapter.js";
import type { EnqueueFigures, LatencyFigures, ProducerFigures, RunFigures, ScaleFigures, SustainedFigures, System } from "./adapter.js";
import type { CpuPerJob } from "./cpu.js";

export type WorkloadId = "enqueue" | "enqueue.2k" | "enqueue.16k" | RunId | "latency" | "sustained" | "roundtrip" | ProducerId | ScaleId;
type ProducerId = "producer.1k" | "producer.3k" | "producer.5k";
export const PRODUCER: readonly ProducerId[] = ["producer.1k", "producer.3k", "producer.5k"];
type ScaleId = "scale.1" | "scale.2" | "scale.4";
/** The scale-out workloads, the one-process baseline first (the others' ratios are to it). */
export const SCALE: readonly ScaleId[] = ["scale.1", "scale.2", "scale.4"];

/** The enqueue rate (jobs/s) of a producer workload. */
export function producerRate(id: ProducerId): number {
  return Number(id.slice("producer.".length, -1)) * 1_000;
}

/** The worker processes of a scale-out workload. */
export function scaleProcesses(id: ScaleId): number {
  return Number(id.slice("scale.".length));
}
/** The workloads that run a backlog in one process. */
export type RunId = "run.c10" | "run.c50" | "run.c50.2k" | "run.c50.16k" | "run.c50.5ms" | "run.c50.200k";
type ThroughputId = "enqueue" | "enqueue.2k" | "enqueue.16k" | RunId;
const THROUGHPUT: readonly ThroughputId[] = ["enqueue", "enqueue.2k", "enqueue.16k", "run.c10", "run.c50", "run.c50.2k", "run.c50.16k", "run.c50.5ms", "run.c50.200k"];

/** How long each handler call of a run workload takes (ms, an awaited timer; 0: a no-op). */
export function handlerMs(id: WorkloadId): number {
  return id.endsWith(".5ms") ? 5 : 0;
}

/** The backlog a run workload starts from: `jobs`, or `backlogJobs` for the big-backlog one. */
export function runJobs(id: RunId, p: Pick<Parameters, "jobs" | "backlogJobs">): number {
  return id === "run.c50.200k" ? p.backlogJobs : p.jobs;
}

/** The concurrency of a run workload. */
export function runConcurrency(id: RunId): number {
  return id === "run.c10" ? 10 : 50;
}

/** The highest rate a run workload's handlers allow (concurrency / handler time), or undefined for no-op handlers. */
function idealRate(id: RunId): number | undefined {
  const ms = handlerMs(id);
  return ms ? (runConcurrency(id) * 1000) / ms : undefined;
}

/** The payload size of a workload, in bytes of JSON (0: just a number and a time). */
export function payloadBytes(id: WorkloadId): number {
  return id.endsWith(".16k") ? 16_384 : id.endsWith(".2k") ? 2_048 : 0;
}

export interface FiguresByWorkload {
  enqueue: EnqueueFigures;
  "enqueue.2k": EnqueueFigures;
  "enqueue.16k": EnqueueFigures;
  "run.c10": RunFigures;
  "run.c50": RunFigures;
  "run.c50.2k": RunFigures;
  "run.c50.16k": RunFigures;
  "run.c50.5ms": RunFigures;
  "run.c50.200k": RunFigures;
  latency: LatencyFigures;
  sustained: SustainedFigures;
  roundtrip: LatencyFigures;
  "producer.1k": ProducerFigures;
  "producer.3k": ProducerFigures;
  "producer.5k": ProducerFigures;
  "scale.1": ScaleFigures;
  "scale.2": ScaleFigures;
  "scale.4": ScaleFigures;
}

/** One system's repetitions of one workload: the figures of those that worked, the errors of the rest. */
export interface Cell<T> {
  values: T[];
  errors: string[];
}

export type Results = { [W in WorkloadId]: Record<string, Cell<FiguresByWorkload[W]>> };

export interface Parameters {
  quick: boolean;
  repetitions: number;
  jobs: number;
  enqueueBatch: number;
  latencySamples: number;
  latencyConcurrency: number;
  sustainedRate: number;
  sustainedSeconds: number;
  sustainedConcurrency: number;
  runBudgetSeconds: number;
  /** The big-backlog run's jobs (run.c50.200k) and its time budget. */
  backlogJobs: number;
  backlogBudgetSeconds: number;
  latencyBudgetSeconds: number;
  roundTripSamples: number;
  roundTripConcurrency: number;
  /** Seconds each producer workload (producer.1k, .3k, .5k) enqueues for; workers at roundTripConcurrency. */
  producerSeconds: number;
  /** Concurrency of each worker process in the scale-out workloads (scale.1, .2, .4; `jobs` jobs each). */
  scaleConcurrency: number;
  drainBudgetSeconds: number;
  sqliteLimitTransactions: number;
}

export interface ServerInfo {
  version: string;
  settings: Record<string, string>;
}

export interface Report {
  parameters: Parameters;
  machine: MachineInfo;
  load: { max: number; mean: number };
  servers: { postgres: ServerInfo; redis: ServerInfo; sqlite: ServerInfo };
  systems: System[];
  /** The tickwork commit measured (see servers.ts tickworkRevision). */
  revision: string;
  results: Results;
  sqliteLimit: number[];
  /** Calls per second of the 5 ms workload's timers alone, once per repetition (timer-ceiling.ts). */
  timerLimit: number[];
  problems: Map<string, number>;
  durationSeconds: number;
}

// ---- figures -----------------------------------------------------------------------------------

function summary<T>(cell: Cell<T> | undefined, pick: (value: T) => number): Summary | undefined {
  if (!cell || cell.values.length === 0) return undefined;
  return summarise(cell.values.map(pick));
}

/** Counts (jobs, samples) without fmt's decimals for small numbers. */
const int = (n: number) => Math.round(n).toLocaleString("en-US");

const range = (s: Summary | undefined, f: (n: number) => string = fmt) => (s ? (s.samples.length > 1 ? `${f(s.median)} (${f(s.min)}-${f(s.max)})` : f(s.median)) : "n/a");

/**
 * CPU per job (µs, medians of the repetitions) on each side: this process (the system's client, or
 * the producer), plus the worker processes where there are any, over the store's server ("in
 * process" for SQLite). Empty for results written before the harness measured it.
 */
function cpuCell(cell: Cell<{ cpu?: CpuPerJob }> | undefined, withWorkers: boolean): string {
  const cpus = (cell?.values ?? []).map((f) => f.cpu).filter((c): c is CpuPerJob => c !== undefined);
  if (cpus.length === 0) return "";
  const med = (pick: (c: CpuPerJob) => number) => summarise(cpus.map(pick)).median;
  const here = withWorkers ? `${int(med((c) => c.process))} + ${int(med((c) => c.workers))}` : int(med((c) => c.process));
  const servers = cpus.map((c) => c.server).filter((v): v is number => v !== null);
  return `${here} / ${servers.length ? int(summarise(servers).median) : "in process"}`;
}

function rowName(system: System): string {
  return `${system.name} ${system.version}`;
}

/** The system, its backend where it has more than one (BullMQ), and its setting: who a "best peer" is. */
function peerName(system: System): string {
  return `${rowName(system)}${system.name === "BullMQ" ? ` (${system.backend})` : ""} ${system.setting}`;
}

function errorNote<T>(cell: Cell<T> | undefined): string {
  if (!cell || cell.errors.length === 0) return "";
  return `ERROR in ${cell.errors.length} of ${cell.errors.length + cell.values.length}: ${cell.errors[0]}`;
}

/** The best peer row for a figure: highest when `higher`, lowest otherwise. */
function bestPeer(report: Report, value: (system: System) => number | undefined, higher: boolean): { system: System; value: number } | undefined {
  let best: { system: System; value: number } | undefined;
  for (const system of report.systems) {
    const v = value(system);
    if (!system.peer || v === undefined || !Number.isFinite(v)) continue;
    if (!best || (higher ? v > best.value : v < best.value)) best = { system, value: v };
  }
  return best;
}

const ratio = (value: number | undefined, best: number | undefined) => (value === undefined || !best ? "" : `${(value / best).toFixed(2)}x`);

// ---- tables ------------------------------------------------------------------------------------

interface Table {
  /** The workload, or "scale" for the one table of the scale-out workloads. */
  id: WorkloadId | "scale";
  title: string;
  note: string;
  header: string[];
  rows: string[][];
  /** Columns holding numbers (right-aligned in Markdown). */
  numeric: number[];
}

const CPU_HEADER = "CPU µs/job: here / server";
const CPU_NOTE =
  ' "CPU µs/job" is CPU time per job, medians of the repetitions, read from /proc over the timed span: "here" is the benchmark\'s process (the system\'s client and workers; with " + " the worker processes beside it), "server" the PostgreSQL server (postmaster, backends, background processes) or Redis; SQLite runs in the process.';

const enqueueValue = (f: EnqueueFigures) => f.jobsPerSec;
const runValue = (f: RunFigures) => f.jobsPerSec;

function throughputTable(report: Report, id: ThroughputId): Table {
  const p = report.parameters;
  const cells = report.results[id] as Record<string, Cell<EnqueueFigures | RunFigures>>;
  const median = (system: System) => summary(cells[system.id], (f) => f.jobsPerSec)?.median;
  const best = bestPeer(report, median, true);
  const isRun = id.startsWith("run.");
  const bytes = payloadBytes(id);
  const sized = bytes ? `, ${bytes / 1024} KB payloads` : "";
  const rows = report.systems.map((system) => {
    const cell = cells[system.id];
    const s = summary(cell, isRun ? (f) => runValue(f as RunFigures) : (f) => enqueueValue(f as EnqueueFigures));
    const notes: string[] = [];
    const ideal = isRun ? idealRate(id as RunId) : undefined;
    if (ideal && s) notes.push(`${((s.median / ideal) * 100).toFixed(0)}% of the ideal ${fmt(ideal)} jobs/s${ofTimers(report, s.median)}`);
    if (isRun && cell) {
      const partial = (cell.values as RunFigures[]).filter((f) => f.partial);
      if (partial.length) {
        const f = partial[0]!.partial!;
        notes.push(`did not finish: ${int(f.ran)} of ${int(f.of)} jobs ran in ${f.seconds.toFixed(0)} s (rate over those)`);
      }
    }
    const err = errorNote(cell);
    if (err) notes.push(err);
    const row = [rowName(system), system.backend, system.setting, range(s), ratio(s?.median, best?.value), cpuCell(cell, false)];
    if (isRun) row.splice(4, 0, range(summary(cell, (f) => (f as RunFigures).toLastHandler)));
    return [...row, notes.join("; ")];
  });
  const concurrency = isRun ? runConcurrency(id as RunId) : 0;
  const jobs = isRun ? runJobs(id as RunId, p) : p.jobs;
  const ms = handlerMs(id);
  const handlers = ms ? `jobs whose handler awaits a ${ms} ms timer` : "no-op jobs";
  const header = isRun
    ? ["System", "Backend", "Setting", "jobs/s to last completion", "jobs/s to last handler call", "vs best peer", CPU_HEADER, "Note"]
    : ["System", "Backend", "Setting", "jobs/s", "vs best peer", CPU_HEADER, "Note"];
  const bestText = best ? ` Best peer: ${peerName(best.system)}, ${fmt(best.value)} jobs/s.` : "";
  return isRun
    ? {
        id,
        title: `Run ${fmt(jobs)} ${handlers}, concurrency ${concurrency}${sized}, one process`,
        note:
          `Jobs enqueued first (not timed); timed from the call that starts the workers to the last job the system recorded completed (tickwork: succeeded; graphile-worker: row deleted; pg-boss: state completed; BullMQ: moved to completed). ` +
          `A run that does not finish within ${id === "run.c50.200k" ? p.backlogBudgetSeconds : p.runBudgetSeconds} s reports the rate of the jobs that ran.` +
          `${ms ? ` The ideal is concurrency / handler time, ${fmt(idealRate(id as RunId)!)} jobs/s: a slot freed is at once busy again. ${timerLine(report)}` : ""}${bestText}${CPU_NOTE}`,
        header,
        rows,
        numeric: [3, 4, 5, 6],
      }
    : {
        id,
        title: `Bulk enqueue ${fmt(p.jobs)} jobs${sized}`,
        note: `Each system's bulk API, ${fmt(p.enqueueBatch)} jobs per call, one call after another, no workers running.${bytes ? ` Every payload is an order of about ${bytes / 1024} KB of JSON (lines of strings, numbers, quotes and backslashes), the same for every system.` : ""}${bestText}${CPU_NOTE}`,
        header,
        rows,
        numeric: [3, 4, 5],
      };
}

function latencyTable(report: Report): Table {
  const p = report.parameters;
  const cells = report.results.latency;
  const p99 = (system: System) => summary(cells[system.id], (f) => f.p99)?.median;
  const best = bestPeer(report, p99, false);
  const rows = report.systems.map((system) => {
    const cell = cells[system.id];
    const pick = (k: "p50" | "p95" | "p99" | "max") => range(summary(cell, (f) => f[k]));
    const samples = cell && cell.values.length ? String(Math.min(...cell.values.map((f) => f.samples))) : "";
    return [rowName(system), system.backend, system.setting, samples, pick("p50"), pick("p95"), pick("p99"), pick("max"), ratio(p99(system), best?.value), errorNote(cell)];
  });
  return {
    id: "latency",
    title: "Enqueue-to-start latency on an idle worker (ms)",
    note:
      `${p.latencySamples} single enqueues from the worker's process (concurrency ${p.latencyConcurrency}), one at a time, each waited for, 2-4 ms apart, after a short warm-up; ` +
      `from just before the enqueue call to the handler's first line. tickwork's idle worker takes such a job straight from the enqueue (a hand-off: the insert writes it claimed, no claim round trip); ` +
      `a producer in another process goes through LISTEN/NOTIFY and a claim instead (\`npm run bench\` measures that path). A system that polls gets fewer samples: the loop stops after ${p.latencyBudgetSeconds} s ("samples" is the smallest count of the repetitions). ` +
      `"vs best peer" is p99 over the best peer's p99 (lower is better)${best ? `; best peer: ${peerName(best.system)}, p99 ${fmt(best.value)} ms` : ""}.`,
    header: ["System", "Backend", "Setting", "samples", "p50", "p95", "p99", "max", "p99 vs best peer", "Note"],
    rows,
    numeric: [3, 4, 5, 6, 7, 8],
  };
}

function roundTripTable(report: Report): Table {
  const p = report.parameters;
  const cells = report.results.roundtrip;
  const p99 = (system: System) => summary(cells[system.id], (f) => f.p99)?.median;
  const best = bestPeer(report, p99, false);
  const rows = report.systems
    .filter((system) => system.workerProcess && awaitsResults(system.workerProcess))
    .map((system) => {
      const cell = cells[system.id];
      const pick = (k: "p50" | "p95" | "p99" | "max") => range(summary(cell, (f) => f[k]));
      const samples = cell && cell.values.length ? String(Math.min(...cell.values.map((f) => f.samples))) : "";
      return [rowName(system), system.backend, system.setting, samples, pick("p50"), pick("p95"), pick("p99"), pick("max"), ratio(p99(system), best?.value), errorNote(cell)];
    });
  return {
    id: "roundtrip",
    title: "Enqueue and await the result, worker in another process (ms)",
    note:
      `${p.roundTripSamples} jobs, one at a time, 2-4 ms apart, after a short warm-up: the producer enqueues a job and awaits its result (tickwork \`queue.enqueueAndWait\`, BullMQ \`job.waitUntilFinished\` with QueueEvents), ` +
      `computed by a worker (concurrency ${p.roundTripConcurrency}) in a child process of its own; from just before the enqueue call until the result is back in the producer. ` +
      `tickwork's waiter hears of the end by LISTEN/NOTIFY and reads the job once; BullMQ's by its events stream. graphile-worker and pg-boss cannot await a job's result (a caller would poll its row), so they have no row. ` +
      `"vs best peer" is p99 over the best peer's p99 (lower is better)${best ? `; best peer: ${peerName(best.system)}, p99 ${fmt(best.value)} ms` : ""}.`,
    header: ["System", "Backend", "Setting", "samples", "p50", "p95", "p99", "max", "p99 vs best peer", "Note"],
    rows,
    numeric: [3, 4, 5, 6, 7, 8],
  };
}

function sustainedTable(report: Report): Table {
  const p = report.parameters;
  const cells = report.results.sustained;
  const p99 = (system: System) => summary(cells[system.id], (f) => f.p99)?.median;
  const best = bestPeer(report, p99, false);
  const rows = report.systems.map((system) => {
    const cell = cells[system.id];
    const pick = (fn: (f: SustainedFigures) => number, format?: (n: number) => string) => range(summary(cell, fn), format);
    const kept = cell && cell.values.length ? `${cell.values.filter((f) => f.keptUp).length} of ${cell.values.length}` : "";
    const drains = cell?.values.map((f) => f.drainMs);
    const drain = !drains?.length ? "" : drains.every((d) => d !== null) ? range(summarise(drains as number[])) : `not within ${p.drainBudgetSeconds} s (${int(Math.max(...cell!.values.map((f) => f.backlogAfterDrain)))} left)`;
    const notes = [errorNote(cell)];
    if (cell?.values.some((f) => f.backlogAfterDrain > 0)) notes.unshift("latencies are of the jobs that started (lower bounds)");
    return [
      rowName(system), system.backend, system.setting, pick((f) => f.enqueueRate), pick((f) => f.startRate), pick((f) => f.backlogAtEnd, int), drain, kept,
      pick((f) => f.p50), pick((f) => f.p95), pick((f) => f.p99), pick((f) => f.max), ratio(p99(system), best?.value), notes.filter(Boolean).join("; "),
    ];
  });
  return {
    id: "sustained",
    title: `Sustained load: ${fmt(p.sustainedRate)} jobs/s for ${p.sustainedSeconds} s`,
    note:
      `A producer in the workers' process issues single enqueues at ${fmt(p.sustainedRate)} jobs/s (each call when due, at most 100 outstanding, like 100 concurrent requests; a system slower than that falls behind its rate) while workers at concurrency ${p.sustainedConcurrency} run them. ` +
      `"enqueued/s" and "started/s" are over the window; "backlog at end" is jobs enqueued but not started when the window closed; "drain (ms)" is how long after the window the rest took to start (budget ${p.drainBudgetSeconds} s). ` +
      `Kept up: the producer held at least 98% of its rate and the backlog at the end was at most one second of production. Latency (ms) is enqueue call to handler start. ` +
      `tickwork writes a queue's concurrent enqueues in one insert, and its caught-up worker takes them by hand-off (written claimed, no claim); a producer in another process would pay a claim per batch instead.` +
      (best ? ` Best peer p99: ${peerName(best.system)}, ${fmt(best.value)} ms.` : ""),
    header: ["System", "Backend", "Setting", "enqueued/s", "started/s", "backlog at end", "drain (ms)", "kept up", "p50", "p95", "p99", "max", "p99 vs best peer", "Note"],
    rows,
    numeric: [3, 4, 5, 6, 8, 9, 10, 11, 12],
  };
}

function producerTable(report: Report, id: ProducerId): Table {
  const p = report.parameters;
  const rate = producerRate(id);
  const cells = report.results[id];
  const p99 = (system: System) => summary(cells[system.id], (f) => f.p99)?.median;
  const best = bestPeer(report, p99, false);
  const rows = report.systems
    .filter((system) => system.workerProcess)
    .map((system) => {
      const cell = cells[system.id];
      const pick = (fn: (f: ProducerFigures) => number, format?: (n: number) => string) => range(summary(cell, fn), format);
      const kept = cell && cell.values.length ? `${cell.values.filter((f) => f.keptUp).length} of ${cell.values.length}` : "";
      return [
        rowName(system), system.backend, system.setting, pick((f) => f.enqueueRate), pick((f) => f.callP50), pick((f) => f.callP99), pick((f) => f.backlogAtEnd, int), kept,
        pick((f) => f.p50), pick((f) => f.p95), pick((f) => f.p99), pick((f) => f.max), ratio(p99(system), best?.value), cpuCell(cell, true), errorNote(cell),
      ];
    });
  return {
    id,
    title: `Producer in another process: ${fmt(rate)} enqueues/s for ${p.producerSeconds} s`,
    note:
      `The benchmark's process enqueues single jobs at ${fmt(rate)} per second (each call when due, at most 100 outstanding) and does nothing else; a worker (concurrency ${p.roundTripConcurrency}) runs them in a child process of its own, as a web process and a worker process would be deployed. ` +
      `"call p50/p99" is how long an enqueue call took in the producer. Latency (ms) is from just before the enqueue call in the producer to the handler's start in the worker process (both read the machine's wall clock). ` +
      `Kept up: the producer held at least 98% of its rate and the backlog at the end was at most one second of production. tickwork's, graphile-worker's and BullMQ's on PostgreSQL workers hear of the jobs by LISTEN/NOTIFY, BullMQ's on Redis by its blocking list pop, pg-boss's by its poll (tuned: every 0.5 s, its minimum; at its defaults, one job per 2 s per loop, it cannot keep up). ` +
      (best ? ` Best peer p99: ${peerName(best.system)}, ${fmt(best.value)} ms.` : "") +
      CPU_NOTE.replace("job", "enqueued job"),
    header: ["System", "Backend", "Setting", "enqueued/s", "call p50", "call p99", "backlog at end", "kept up", "p50", "p95", "p99", "max", "p99 vs best peer", "CPU µs/job: producer + worker / server", "Note"],
    rows,
    numeric: [3, 4, 5, 6, 8, 9, 10, 11, 12, 13],
  };
}

/** The share of a scale-out run's jobs its busiest worker process ran (1 / processes when they spread evenly). */
const busiestShare = (f: ScaleFigures) => Math.max(...f.perProcess) / Math.max(1, f.perProcess.reduce((a, b) => a + b, 0));

function scaleTable(report: Report): Table {
  const p = report.parameters;
  const median = (id: ScaleId, system: System) => summary(report.results[id][system.id], (f) => f.jobsPerSec)?.median;
  const processes = (id: ScaleId) => `${scaleProcesses(id)} process${scaleProcesses(id) === 1 ? "" : "es"}`;
  const rows = report.systems
    .filter((system) => system.workerProcess)
    .map((system) => {
      const base = median("scale.1", system);
      const figures: string[] = [];
      const notes: string[] = [];
      const busiest: string[] = [];
      const cpu: string[] = [];
      for (const id of SCALE) {
        const cell = report.results[id][system.id];
        const s = summary(cell, (f) => f.jobsPerSec);
        figures.push(range(s));
        const c = cpuCell(cell, true);
        if (c) cpu.push(`${c} at ${scaleProcesses(id)}`);
        if (id !== "scale.1") figures.push(ratio(s?.median, base));
        const partial = cell?.values.find((f) => f.partial)?.partial;
        if (partial) notes.push(`${processes(id)} did not finish: ${int(partial.ran)} of ${int(partial.of)} jobs ran in ${partial.seconds.toFixed(0)} s (rate over those)`);
        const err = errorNote(cell);
        if (err) notes.push(`${processes(id)}: ${err}`);
        const share = summary(cell, busiestShare);
        if (id !== "scale.1" && share) busiest.push(`${(share.median * 100).toFixed(0)}% at ${scaleProcesses(id)}`);
      }
      // How evenly the backlog spread: where one process takes most of it (a large claim batch), more processes cannot help.
      if (busiest.length) notes.unshift(`busiest process's share: ${busiest.join(", ")}`);
      if (cpu.length) notes.push(`CPU µs/job, here + worker processes / server: ${cpu.join(", ")}`);
      return [rowName(system), system.backend, system.setting, ...figures, notes.join("; ")];
    });
  const header = ["System", "Backend", "Setting", ...SCALE.flatMap((id) => (id === "scale.1" ? [`${processes(id)}, jobs/s`] : [`${processes(id)}, jobs/s`, `${scaleProcesses(id)} vs 1`]))];
  return {
    id: "scale",
    title: `Scale-out: ${fmt(p.jobs)} no-op jobs run by ${SCALE.map(scaleProcesses).join(", ")} worker processes together`,
    note:
      `The benchmark's process enqueues the backlog first through the system's bulk API (${fmt(p.enqueueBatch)} jobs per call, not timed); then 1, 2 or 4 worker processes of the system (each a child process of its own, concurrency ${p.scaleConcurrency} each) run it on the one PostgreSQL database or Redis. ` +
      `Every process has its worker configured beforehand; the time runs from the messages that tell them all to start (each system's start call is inside it) to the last job the system recorded completed (tickwork: succeeded; graphile-worker: row deleted; pg-boss: state completed; BullMQ: moved to completed), polled once every process said its handler calls covered the backlog. ` +
      `"K vs 1" is the median at K processes over the median at 1 process of the same system (2.00x at 2 processes, 4.00x at 4 would be linear growth). ` +
      `The worker processes, the benchmark's process and the servers share this machine's ${report.machine.cores} cores, so the growth is bounded by them: it says how a system spreads its work over processes here, not what more machines would add. ` +
      `"busiest process's share" (in the notes) is the median share of the backlog the busiest process ran (50% at 2 and 25% at 4 would be an even spread). Each run checks that the processes ran every job exactly once between them (the job numbers each reported over IPC) and that the system recorded every job completed and none failed; a run that does not finish within ${p.runBudgetSeconds} s reports the rate of the jobs that ran. ` +
      `Systems: those with a worker process in this harness, as in the producer workloads: tickwork on PostgreSQL, BullMQ (on Redis and on PostgreSQL) and graphile-worker at their defaults, pg-boss tuned (0.5 s polls, batches of 1,000; at its defaults, one job per 2 s poll per loop, it would measure its poll interval).`,
    header: [...header, "Note"],
    rows,
    numeric: header.map((_, i) => i).filter((i) => i >= 3),
  };
}

export function tables(report: Report): Table[] {
  const out: Table[] = [];
  for (const id of THROUGHPUT) if (Object.keys(report.results[id]).length) out.push(throughputTable(report, id));
  if (Object.keys(report.results.latency).length) out.push(latencyTable(report));
  if (Object.keys(report.results.sustained).length) out.push(sustainedTable(report));
  if (Object.keys(report.results.roundtrip).length) out.push(roundTripTable(report));
  for (const id of PRODUCER) if (Object.keys(report.results[id]).length) out.push(producerTable(report, id));
  if (SCALE.some((id) => Object.keys(report.results[id]).length)) out.push(scaleTable(report));
  return out;
}

// ---- targets -----------------------------------------------------------------------------------

export interface Check {
  target: string;
  row: string;
  measured: string;
  needed: string;
  verdict: "PASS" | "MISS" | "n/a";
  /** By how much a miss misses, in words. */
  gap: string;
}

export function checks(report: Report): Check[] {
  const out: Check[] = [];
  const ours = (backend: string) => report.systems.filter((s) => !s.peer && s.backend.startsWith(backend));
  const label = (s: System) => `tickwork ${s.backend} ${s.setting}`;

  const throughputTargets = [
    { id: "run.c10", times: 2, target: "PostgreSQL run throughput, concurrency 10 >= 2x best peer" },
    { id: "run.c50", times: 2, target: "PostgreSQL run throughput, concurrency 50 >= 2x best peer" },
    { id: "run.c50.2k", times: 1.5, target: "PostgreSQL run throughput, 2 KB payloads >= 1.5x best peer" },
    { id: "run.c50.5ms", times: 1.5, target: "PostgreSQL run throughput, 5 ms handlers >= 1.5x best peer" },
    { id: "enqueue.2k", times: 1.5, target: "PostgreSQL bulk enqueue of 2 KB payloads >= 1.5x best peer" },
  ] as const;
  for (const { id, times, target } of throughputTargets) {
    const cells = report.results[id] as Record<string, Cell<EnqueueFigures | RunFigures>>;
    if (!Object.keys(cells).length) continue;
    const median = (s: System) => summary(cells[s.id], (f) => f.jobsPerSec)?.median;
    const best = bestPeer(report, median, true);
    for (const s of ours("PostgreSQL")) {
      const v = median(s);
      if (v === undefined || !best) {
        out.push({ target, row: label(s), measured: "no figure", needed: "", verdict: "n/a", gap: "" });
        continue;
      }
      const need = times * best.value;
      out.push({
        target, row: label(s), measured: `${fmt(v)} jobs/s (${(v / best.value).toFixed(2)}x)`,
        needed: `${fmt(need)} jobs/s (${times}x ${peerName(best.system)}, ${fmt(best.value)})`,
        verdict: v >= need ? "PASS" : "MISS",
        gap: v >= need ? "" : `${fmt(need - v)} jobs/s short: needs ${(((need - v) / v) * 100).toFixed(0)}% more`,
      });
    }
  }

  const ideal = idealRate("run.c50.5ms")!;
  for (const s of report.systems.filter((s) => !s.peer)) {
    const v = summary(report.results["run.c50.5ms"][s.id], (f) => f.jobsPerSec)?.median;
    if (v === undefined) continue;
    const timers = report.timerLimit.length ? quantile(report.timerLimit, 0.5) : undefined;
    out.push({
      target: "5 ms handlers at concurrency 50 >= 95% of the ideal", row: label(s), measured: `${fmt(v)} jobs/s (${((v / ideal) * 100).toFixed(0)}%${ofTimers(report, v)})`,
      needed: `${fmt(0.95 * ideal)} jobs/s`, verdict: v >= 0.95 * ideal ? "PASS" : "MISS",
      gap: v >= 0.95 * ideal ? "" : `${fmt(0.95 * ideal - v)} jobs/s short${timers === undefined ? "" : `; the timers alone ran ${fmt(timers)} calls/s (${((timers / ideal) * 100).toFixed(0)}% of the ideal)`}`,
    });
  }

  const latency = report.results.latency;
  if (Object.keys(latency).length) {
    const p99 = (s: System) => summary(latency[s.id], (f) => f.p99)?.median;
    const bull = report.systems.filter((s) => s.name === "BullMQ" && s.backend === "Redis").map((s) => ({ s, v: p99(s) })).filter((x) => x.v !== undefined).sort((a, b) => a.v! - b.v!)[0];
    for (const s of ours("PostgreSQL")) {
      const v = p99(s);
      const target = "Enqueue-to-start p99 on PostgreSQL <= BullMQ's p99";
      if (v === undefined || !bull) {
        out.push({ target, row: label(s), measured: v === undefined ? "no figure" : `${fmt(v)} ms`, needed: bull ? "" : "no BullMQ figure", verdict: "n/a", gap: "" });
        continue;
      }
      out.push({
        target, row: label(s), measured: `${fmt(v)} ms`, needed: `<= ${fmt(bull.v!)} ms (BullMQ ${bull.s.setting})`,
        verdict: v <= bull.v! ? "PASS" : "MISS",
        gap: v <= bull.v! ? "" : `${fmt(v - bull.v!)} ms over (${(v / bull.v!).toFixed(2)}x BullMQ's)`,
      });
    }
  }

  for (const id of PRODUCER) {
    const cells = report.results[id];
    if (!Object.keys(cells).length) continue;
    const rate = producerRate(id);
    const median = (s: System, pick: (f: ProducerFigures) => number) => summary(cells[s.id], pick)?.median;
    const bull = report.systems.filter((s) => s.name === "BullMQ" && s.backend === "Redis").map((s) => ({ s, v: median(s, (f) => f.p99) })).filter((x) => x.v !== undefined).sort((a, b) => a.v! - b.v!)[0];
    for (const s of ours("PostgreSQL").filter((s) => s.workerProcess)) {
      const p50 = median(s, (f) => f.p50);
      const p99 = median(s, (f) => f.p99);
      const kept = cells[s.id]?.values.filter((f) => f.keptUp).length ?? 0;
      const runs = cells[s.id]?.values.length ?? 0;
      if (p50 === undefined || p99 === undefined) continue;
      out.push({
        target: `Producer in another process at ${fmt(rate)}/s: enqueue-to-start p50 <= 1.5 ms`, row: label(s), measured: `${fmt(p50)} ms`, needed: "<= 1.5 ms",
        verdict: p50 <= 1.5 ? "PASS" : "MISS", gap: p50 <= 1.5 ? "" : `${fmt(p50 - 1.5)} ms over`,
      });
      if (bull) {
        out.push({
          target: `Producer in another process at ${fmt(rate)}/s: p99 <= BullMQ's`, row: label(s), measured: `${fmt(p99)} ms`, needed: `<= ${fmt(bull.v!)} ms (BullMQ ${bull.s.setting})`,
          verdict: p99 <= bull.v! ? "PASS" : "MISS", gap: p99 <= bull.v! ? "" : `${fmt(p99 - bull.v!)} ms over (${(p99 / bull.v!).toFixed(2)}x BullMQ's)`,
        });
      }
      out.push({
        target: `Producer in another process at ${fmt(rate)}/s: keeps up`, row: label(s), measured: `kept up in ${kept} of ${runs}`, needed: "every run",
        verdict: kept === runs ? "PASS" : "MISS", gap: kept === runs ? "" : `fell behind in ${runs - kept}`,
      });
    }
  }

  if (report.sqliteLimit.length) {
    const limit = quantile(report.sqliteLimit, 0.5);
    for (const id of ["run.c10", "run.c50"] as const) {
      const cells = report.results[id];
      for (const s of ours("SQLite")) {
        const v = summary(cells[s.id], (f) => f.jobsPerSec)?.median;
        if (v === undefined) continue;
        // Each repetition against the limit measured right before it; results written before the
        // limit was paired (no writeLimit) against the run's median limit.
        const ratios = summarise(cells[s.id]!.values.map((f) => f.jobsPerSec / (f.writeLimit ?? limit)));
        const paired = cells[s.id]!.values.every((f) => f.writeLimit !== undefined);
        out.push({
          target: `SQLite run throughput, concurrency ${id === "run.c10" ? 10 : 50} >= 1.5x the single-row write transaction limit`,
          row: label(s),
          measured: `${fmt(v)} jobs/s; ${range(ratios, (n) => `${n.toFixed(2)}x`)} ${paired ? "of the limit measured right before each repetition" : `of the limit (${fmt(limit)} tx/s)`}`,
          needed: `1.5x (${fmt(1.5 * limit)} jobs/s at the run's median limit, ${fmt(limit)} tx/s)`,
          verdict: ratios.median >= 1.5 ? "PASS" : "MISS",
          gap: ratios.median >= 1.5 ? "" : `needs ${(((1.5 - ratios.median) / ratios.median) * 100).toFixed(0)}% more`,
        });
      }
    }
  }
  return out;
}

// ---- output ------------------------------------------------------------------------------------

export function machineLine(m: MachineInfo): string {
  return `${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.platform}, Node ${m.node}, load average ${m.loadAverage.join(" / ")} at start, ${m.date}`;
}

function serverLines(report: Report): string[] {
  const settings = (s: ServerInfo) => Object.entries(s.settings).map(([k, v]) => `${k}=${v}`).join(", ");
  const { postgres, redis, sqlite } = report.servers;
  return [`PostgreSQL ${postgres.version} (${settings(postgres)})`, `Redis ${redis.version} (${settings(redis)})`, `SQLite ${sqlite.version} (${settings(sqlite)})`];
}

function loadLine(report: Report): string {
  const { machine, load } = report;
  const busy = machine.loadAverage[0]! >= 0.5 || load.max > machine.cores + 0.5;
  return (
    `Load average (1 min) during the run: mean ${load.mean}, max ${load.max} on ${machine.cores} cores (the benchmark alone keeps about 1-2 busy).` +
    (busy ? " WARNING: other work competed for the CPU; figures, latency percentiles above all, are noisier than on a quiet machine." : "")
  );
}

/** ", N% of what the timers allow" for a rate of the 5 ms workload, when the run measured them. */
function ofTimers(report: Report, rate: number): string {
  return report.timerLimit.length ? `, ${((rate / quantile(report.timerLimit, 0.5)) * 100).toFixed(0)}% of what the timers allow` : "";
}

function timerLine(report: Report): string {
  if (!report.timerLimit.length) return "";
  const s = summarise(report.timerLimit);
  return `What the timers allow on this machine: the same number of ${handlerMs("run.c50.5ms")} ms timers awaited ${runConcurrency("run.c50.5ms")} at a time in the benchmark's process, no queue around them, ran ${range(s)} calls/s (measured before each repetition); Node fires a timer at the earliest on the millisecond after it is due.`;
}

function limitLine(report: Report): string {
  if (!report.sqliteLimit.length) return "";
  const s = summarise(report.sqliteLimit);
  return `SQLite single-row write transactions on this machine (${report.servers.sqlite.settings.driver}, WAL file, synchronous=NORMAL, ${fmt(report.parameters.sqliteLimitTransactions)} INSERTs each in its own BEGIN IMMEDIATE/COMMIT, measured right before each repetition of a SQLite row, ${s.samples.length === 1 ? "once" : `${s.samples.length} times`} in this run): ${range(s)} tx/s.`;
}

function problemLines(report: Report): string[] {
  if (report.problems.size === 0) return ["Warnings and errors the systems reported during the run: none."];
  return ["Warnings and errors the systems reported during the run (figures of these systems may be suspect):", ...[...report.problems].map(([k, n]) => `- ${k}: ${n}`)];
}

function settingsRows(report: Report): string[][] {
  return report.systems.map((s) => [
    rowName(s), s.backend, s.setting,
    JSON.stringify(s.settings(10)).replaceAll('"', "").replaceAll(",", ", "),
    JSON.stringify(s.settings(50)).replaceAll('"', "").replaceAll(",", ", "),
  ]);
}

const SETTINGS_HEADER = ["System", "Backend", "Setting", "Options at concurrency 10", "at concurrency 50"];
const CHECK_HEADER = ["Target", "tickwork row", "Measured (median)", "Needed", "Verdict", "Gap"];

export function terminal(report: Report): string {
  const lines: string[] = [];
  for (const t of tables(report)) lines.push(t.title, textTable(t.header, t.rows), "");
  const limit = limitLine(report);
  if (limit) lines.push(limit, "");
  lines.push("Targets", textTable(CHECK_HEADER, checks(report).map((c) => [c.target, c.row, c.measured, c.needed, c.verdict, c.gap])), "");
  lines.push(...problemLines(report), loadLine(report), `Total time: ${(report.durationSeconds / 60).toFixed(1)} min.`);
  return lines.join("\n");
}

export function markdown(report: Report): string {
  const p = report.parameters;
  const lines = [
    "# tickwork vs graphile-worker, pg-boss and BullMQ",
    "",
    `Machine: ${machineLine(report.machine)}.`,
    "",
    `tickwork: commit ${report.revision}.`,
    "",
    ...serverLines(report).map((l) => `- ${l}`),
    "",
    loadLine(report),
    "",
    `Every system ran in this one run on the same servers (\`npm run bench:peers\`${p.quick ? " --quick: small sizes, a smoke run, not a measurement" : ""}). ` +
      (p.repetitions > 1 ? `Each figure is the median of ${p.repetitions} repetitions with min-max in parentheses; the systems' order alternates between repetitions (forward, then reversed). ` : "Each figure is from one repetition. ") +
      `Every measurement runs on a fresh namespace (its own PostgreSQL schema, SQLite temp file or Redis key prefix), removed after. ` +
      `Handlers are no-ops that record the time; each run checks that the handler ran exactly once per job and that the system recorded every job completed and none failed. ` +
      `"vs best peer" compares with the best row of graphile-worker, pg-boss and BullMQ (defaults or tuned) in the same table. Total time: ${(report.durationSeconds / 60).toFixed(1)} min.`,
    "",
    "## Systems and settings",
    "",
    'Each peer runs with its defaults and with the settings its documentation gives for throughput ("tuned"); see the adapter modules in `bench/peers/` for the reasons behind each setting.',
    "",
    markdownTable(SETTINGS_HEADER, settingsRows(report)),
    "",
  ];
  for (const t of tables(report)) lines.push(`## ${t.title}`, "", t.note, "", markdownTable(t.header, t.rows, t.numeric), "");
  const limit = limitLine(report);
  lines.push("## Targets", "");
  if (limit) lines.push(limit, "");
  lines.push(markdownTable(CHECK_HEADER, checks(report).map((c) => [c.target, c.row, c.measured, c.needed, c.verdict, c.gap])), "", ...problemLines(report), "");
  return lines.join("\n");
}

export function json(report: Report): unknown {
  const results: Record<string, Record<string, unknown>> = {};
  for (const [workload, cells] of Object.entries(report.results)) {
    results[workload] = {};
    for (const [id, cell] of Object.entries(cells as Record<string, Cell<unknown>>)) results[workload]![id] = cell;
  }
  return {
    benchmark: "peers",
    parameters: report.parameters,
    machine: report.machine,
    load: report.load,
    servers: report.servers,
    tickworkRevision: report.revision,
    durationSeconds: Math.round(report.durationSeconds),
    systems: report.systems.map((s) => ({ id: s.id, name: s.name, version: s.version, backend: s.backend, setting: s.setting, peer: s.peer, settingsAtConcurrency10: s.settings(10), settingsAtConcurrency50: s.settings(50) })),
    results,
    summaries: Object.fromEntries(tables(report).map((t) => [t.id, { title: t.title, header: t.header, rows: t.rows }])),
    sqliteWriteLimit: report.sqliteLimit.length ? { transactionsPerSec: summarise(report.sqliteLimit) } : null,
    timerCeiling: report.timerLimit.length ? { callsPerSec: summarise(report.timerLimit) } : null,
    targets: checks(report),
    problems: Object.fromEntries(report.problems),
  };
}
