/**
 * `npm run bench:idempotency`: what `tw.idempotency.run()` adds to each call, on SQLite and
 * PostgreSQL, on this machine.
 *
 * For each store (a fresh temp SQLite file in WAL mode, or a new PostgreSQL schema, dropped after),
 * one engine (not started) calls, one call at a time, CALLS times after WARMUP discarded calls:
 * - direct: `await fn()`, fn a no-op async function (the baseline);
 * - no key: `run({ scope, operation }, fn)` without a key (passes straight to fn);
 * - new key: `run()` with a key never seen (claim: one INSERT; complete: one UPDATE; the heartbeat
 *   timer set and cleared);
 * - replay: `run()` with a completed key (the conditional INSERT finds the row, then one SELECT).
 * Each call is timed alone (performance.now() around the await); p50, p99 and mean per call in µs,
 * and the overhead over the direct call at p50 and p99. Repeated REPS times (a new key prefix each
 * round); the median over the rounds is reported, with min-max.
 * Results go to the terminal and to bench/results/idempotency-latest.{json,md}. Only a scenario
 * that errors sets a non-zero exit code.
 *
 * BENCH_QUICK=1 shrinks every size (a smoke run of the harness, not a measurement).
 */
import { createTickwork, type LogEvent, type Tickwork } from "../src/index.js";
import { postgresBackend, sqliteBackend, type Backend } from "./fixtures.js";
import { fmt, fmtSummary, machineInfo, markdownTable, now, quantile, repeat, summarise, textTable, watchLoad, type Summary, loadLine, machineLine, writeResults } from "./support.js";

const QUICK = process.env.BENCH_QUICK === "1";
/** A smoke run writes beside the measured results, never over them. */
/** What the load line says about this benchmark: how busy it keeps the machine, which figures suffer. */
const LOAD_NOTE = ["the benchmark keeps about one busy, plus PostgreSQL's backend", "p99 figures"] as const;
const OUT = `idempotency-${QUICK ? "quick" : "latest"}`;
const CALLS = QUICK ? 200 : 2_000;
const WARMUP = QUICK ? 20 : 200;
const REPS = QUICK ? 1 : 3;
const SCOPE = "acct-bench";
const OPERATION = "OPEN_POSITION";

type Scenario = "direct" | "no key" | "new key" | "replay";
const SCENARIOS: Scenario[] = ["direct", "no key", "new key", "replay"];

/** One round of one scenario: per-call figures in µs. */
interface Round {
  p50: number;
  p99: number;
  mean: number;
}

interface ScenarioFigures {
  store: Backend["name"];
  scenario: Scenario;
  calls: number;
  p50: Summary;
  p99: Summary;
  mean: Summary;
}

// ---- engine warnings -------------------------------------------------------------------------

/** Warnings and errors by store: a clean run has none (a `store.error` would taint the figures). */
const problems = new Map<string, number>();
let current = "setup";
const note = (event: LogEvent) => {
  if (event.level === "debug" || event.level === "info") return;
  const key = `${current}: ${event.event}`;
  problems.set(key, (problems.get(key) ?? 0) + 1);
};

// ---- measurement -----------------------------------------------------------------------------

/** The operation under measurement: does nothing, asynchronously. */
const noop = async (): Promise<void> => {};

/** Times `call(i)` for i in [0, count), one call at a time; returns µs per call. */
async function timeCalls(count: number, call: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = new Array<number>(count);
  for (let i = 0; i < count; i++) {
    const start = now();
    await call(i);
    samples[i] = (now() - start) * 1_000;
  }
  return samples;
}

function figures(samples: number[]): Round {
  return { p50: quantile(samples, 0.5), p99: quantile(samples, 0.99), mean: samples.reduce((a, b) => a + b, 0) / samples.length };
}

/** One round of every scenario on one engine; `prefix` keeps each round's keys new. */
async function round(tw: Tickwork, prefix: string): Promise<Record<Scenario, Round>> {
  const run = (key: string | undefined) => tw.idempotency.run({ scope: SCOPE, key, operation: OPERATION }, noop);
  const measure = async (call: (i: number) => Promise<unknown>) => {
    await timeCalls(WARMUP, (i) => call(-1 - i));
    return figures(await timeCalls(CALLS, call));
  };
  const key = (i: number) => (i < 0 ? `${prefix}-warm${-i}` : `${prefix}-${i}`);
  const direct = await measure(() => noop());
  const noKey = await measure(() => run(undefined));
  const newKey = await measure((i) => run(key(i)));
  // The keys the new-key scenario completed (its warm-up keys included) are replayed.
  const replay = await measure((i) => run(key(i)));
  return { direct, "no key": noKey, "new key": newKey, replay };
}

async function benchStore(backend: Backend): Promise<ScenarioFigures[]> {
  const fixture = await backend.fresh();
  const tw = await createTickwork({ store: fixture.open(), logger: note, handleSignals: false });
  try {
    const rounds = await repeat(REPS, (r) => round(tw, `r${r}`));
    // Every new key ran and was kept: nothing was released or lost on the way.
    const kept = await tw.idempotency.list(SCOPE, REPS * (CALLS + WARMUP) + 1);
    if (kept.length !== REPS * (CALLS + WARMUP) || kept.some((k) => k.status !== "completed")) {
      throw new Error(`expected ${REPS * (CALLS + WARMUP)} completed keys, found ${kept.length}`);
    }
    return SCENARIOS.map((scenario) => ({
      store: backend.name,
      scenario,
      calls: CALLS,
      p50: summarise(rounds.map((r) => r[scenario].p50)),
      p99: summarise(rounds.map((r) => r[scenario].p99)),
      mean: summarise(rounds.map((r) => r[scenario].mean)),
    }));
  } finally {
    await tw.stop();
    await fixture.drop();
  }
}

// ---- report ----------------------------------------------------------------------------------

const HEADER = ["Store", "Call", "p50 µs", "p99 µs", "mean µs", "overhead p50 µs", "overhead p99 µs"];

function rows(results: (ScenarioFigures | { store: string; error: string })[]): string[][] {
  return results.map((r) => {
    if ("error" in r) return [r.store, "ERROR", r.error, "", "", "", ""];
    const base = results.find((d): d is ScenarioFigures => !("error" in d) && d.store === r.store && d.scenario === "direct");
    const over = (s: Summary, b: Summary | undefined) => (r.scenario === "direct" || !b ? "-" : fmt(s.median - b.median));
    return [r.store, r.scenario, fmtSummary(r.p50), fmtSummary(r.p99), fmtSummary(r.mean), over(r.p50, base?.p50), over(r.p99, base?.p99)];
  });
}

/** The sentence the issue's closing note asks for: the overhead of run() per call on each store. */
function summaryLines(results: (ScenarioFigures | { store: string; error: string })[]): string[] {
  const ok = results.filter((r): r is ScenarioFigures => !("error" in r));
  const lines: string[] = [];
  for (const store of ["SQLite", "PostgreSQL"] as const) {
    const get = (s: Scenario) => ok.find((r) => r.store === store && r.scenario === s);
    const direct = get("direct");
    const fresh = get("new key");
    const replay = get("replay");
    if (!direct || !fresh || !replay) continue;
    const ms = (us: number) => `${fmt(us / 1_000)} ms`;
    lines.push(
      `- ${store}: run() adds ${ms(fresh.p50.median - direct.p50.median)} at p50 and ${ms(fresh.p99.median - direct.p99.median)} at p99 per call for a new key (claim + complete), ` +
        `${ms(replay.p50.median - direct.p50.median)} / ${ms(replay.p99.median - direct.p99.median)} for a replay; fn alone takes ${fmt(direct.p50.median)} µs.`,
    );
  }
  return lines;
}

function problemLines(): string[] {
  if (problems.size === 0) return ["Engine warnings and errors during the run: none."];
  return ["Engine warnings and errors during the run (these stores' figures are suspect):", ...[...problems].map(([key, n]) => `- ${key}: ${n}`)];
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const loadWatch = watchLoad();
  console.log(`tickwork idempotency benchmark${QUICK ? " (BENCH_QUICK: sizes shrunk, not a measurement)" : ""}`);
  console.log(machineLine(machine));

  const versions: Record<string, string> = {};
  for (const backend of [sqliteBackend, postgresBackend]) {
    const d = await backend.describe();
    versions[backend.name] = `${d.version} (${Object.entries(d.settings).map(([k, v]) => `${k}=${v}`).join(", ")})`;
  }

  const results: (ScenarioFigures | { store: string; error: string })[] = [];
  for (const backend of [sqliteBackend, postgresBackend]) {
    current = backend.name;
    console.log(`  ${backend.name}: ${REPS} x (${WARMUP} warm-up + ${CALLS} calls) per scenario`);
    try {
      results.push(...(await benchStore(backend)));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      console.log(`    ERROR: ${message}`);
      results.push({ store: backend.name, error: message });
      process.exitCode = 1;
    }
  }

  const load = loadWatch.stop();
  const summary = summaryLines(results);
  console.log();
  console.log(`Per call, sequential, fn a no-op async function; median of ${REPS} rounds (min-max)`);
  console.log(textTable(HEADER, rows(results)));
  console.log();
  console.log(summary.join("\n"));
  console.log(problemLines().join("\n"));
  console.log(loadLine(machine, load, ...LOAD_NOTE));

  const json = {
    benchmark: "idempotency",
    quick: QUICK,
    machine,
    load,
    versions,
    parameters: { calls: CALLS, warmup: WARMUP, reps: REPS, unit: "µs per call", fn: "async () => {}" },
    results,
    summary,
    engineWarnings: Object.fromEntries(problems),
  };
  const md = [
    "# Idempotency benchmark",
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
    "## Per call",
    "",
    `One engine per store (not started), one call at a time: ${CALLS} timed calls after ${WARMUP} discarded, per scenario, ${REPS} rounds; the median over the rounds with min-max. fn is \`async () => {}\`.`,
    "- direct: `await fn()`, the baseline;",
    "- no key: `run()` without a key, which calls fn without touching the store;",
    "- new key: `run()` with a key never seen: the claim (a conditional INSERT), fn, the completion (an UPDATE fenced by the claim id);",
    "- replay: `run()` with a completed key: the conditional INSERT finds the row, one SELECT reads the stored result, fn is not called.",
    "",
    "Overhead is the scenario's figure minus the direct call's, at the same percentile.",
    "",
    markdownTable(HEADER, rows(results), [2, 3, 4, 5, 6]),
    "",
    ...problemLines(),
    "",
    "Regenerate with `npm run bench:idempotency` (under a minute; `BENCH_QUICK=1` for a smoke run of the harness).",
    "",
  ].join("\n");
  writeResults(OUT, json, md);
}

await main();
