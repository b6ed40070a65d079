/**
 * Small helpers for the benchmarks: clocks, order statistics, repetition, tables and machine facts.
 * Nothing here knows about tickwork; `queue.ts` holds the scenarios.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, platform, release, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";

export const now = (): number => performance.now();

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The q-quantile (0..1) of `values` by the nearest-rank method: p99 of 500 samples is the 495th. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1]!;
}

/** A figure measured several times: the median is reported, min and max show the spread. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  samples: number[];
}

export function summarise(samples: readonly number[]): Summary {
  return { median: quantile(samples, 0.5), min: Math.min(...samples), max: Math.max(...samples), samples: [...samples] };
}

/** Runs `measure` `times` times, one after another (never concurrently: they would share the CPU). */
export async function repeat<T>(times: number, measure: (round: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let round = 0; round < times; round++) results.push(await measure(round));
  return results;
}

/** Rejects if `promise` has not settled after `ms`, so a stalled scenario ends the run instead of hanging it. */
export async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A promise with its resolve function outside, for "the last job started" and the like. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

// ---- formatting ------------------------------------------------------------------------------

/** 12345.6 -> "12,346"; 3.456 -> "3.46"; small values keep two significant decimals. */
export function fmt(value: number): string {
  if (!Number.isFinite(value)) return "n/a";
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString("en-US");
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** "12,346 (11,900-12,500)": the median, then the range over the repetitions. */
export function fmtSummary(s: Summary): string {
  return s.samples.length > 1 ? `${fmt(s.median)} (${fmt(s.min)}-${fmt(s.max)})` : fmt(s.median);
}

/** A fixed-width text table for the terminal. */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

/** The same table in Markdown; `right` marks the columns to right-align (numbers). */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[], right: readonly number[] = []): string {
  const escape = (c: string) => c.replaceAll("|", "\\|");
  return [
    `| ${header.map(escape).join(" | ")} |`,
    `| ${header.map((_, i) => (right.includes(i) ? "---:" : "---")).join(" | ")} |`,
    ...rows.map((r) => `| ${r.map(escape).join(" | ")} |`),
  ].join("\n");
}

// ---- the machine -----------------------------------------------------------------------------

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  platform: string;
  node: string;
  /** 1, 5 and 15 minute load averages when the run started: other work on the machine skews figures. */
  loadAverage: number[];
  date: string;
}

/**
 * Samples the 1-minute load average every second while the benchmark runs. The benchmark itself
 * keeps about one to two cores busy (Node, plus PostgreSQL's backends), so a maximum well above
 * the core count means other work competed for the CPU and the figures, latency above all, suffer.
 */
export function watchLoad(): { stop(): { max: number; mean: number } } {
  const samples: number[] = [loadavg()[0]!];
  const timer = setInterval(() => samples.push(loadavg()[0]!), 1_000);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      const max = Math.max(...samples);
      const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
      return { max: Math.round(max * 100) / 100, mean: Math.round(mean * 100) / 100 };
    },
  };
}

export function machineInfo(): MachineInfo {
  const cpu = cpus();
  return {
    cpuModel: cpu[0]?.model.trim() ?? "unknown",
    cores: cpu.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    platform: `${platform()} ${release()}`,
    node: process.version,
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
    date: new Date().toISOString(),
  };
}

export type Load = { max: number; mean: number };

/** The machine, as every results file states it. */
export function machineLine(m: MachineInfo): string {
  return `${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.platform}, Node ${m.node}, load average ${m.loadAverage.join(" / ")} at start, ${m.date}`;
}

/**
 * The load during the run, with a warning when other work competed for the CPU. `keepsBusy` says how
 * much of the machine the benchmark itself uses; `inflated` which of its figures suffer.
 */
export function loadLine(machine: MachineInfo, load: Load, keepsBusy: string, inflated: string): string {
  const busy = machine.loadAverage[0]! >= 0.5 || load.max > machine.cores + 0.5;
  return (
    `Load average (1 min) during the run: mean ${load.mean}, max ${load.max} on ${machine.cores} cores (${keepsBusy}).` +
    (busy ? ` WARNING: other work competed for the CPU; ${inflated} are inflated. Rerun on a quiet machine.` : "")
  );
}

/** Writes `bench/results/<name>.json` and `.md`, and says so. */
export function writeResults(name: string, json: unknown, markdown: string): void {
  const dir = join(dirname(fileURLToPath(import.meta.url)), "results");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(join(dir, `${name}.md`), markdown);
  console.log(`\nWrote ${join("bench", "results", `${name}.json`)} and ${join("bench", "results", `${name}.md`)}`);
}

const bodies = new Map<number, unknown>();

/**
 * A JSON value of about `bytes` bytes (serialised) shaped like real work, an order with lines of
 * strings, numbers and nested objects (quotes and backslashes included, which a driver may have to
 * escape), or undefined for 0. Built once per size and shared: every job still serialises it whole.
 */
export function payloadBody(bytes: number): unknown {
  if (bytes <= 0) return undefined;
  let body = bodies.get(bytes);
  if (!body) {
    const lines: unknown[] = [];
    const order = { customer: { id: "cus_4711", email: "ada@example.com", country: "DE" }, currency: "EUR", lines, note: 'rush, "fragile"' };
    for (let k = 0; JSON.stringify(order).length < bytes - 110; k++) {
      lines.push({ sku: `SKU-${1000 + k}`, name: `Item ${k} "deluxe" \\ edition`, qty: (k % 5) + 1, price: 19.99 + k, tags: ["gift", "eu"], taxed: k % 2 === 0 });
    }
    bodies.set(bytes, (body = order));
  }
  return body;
}
