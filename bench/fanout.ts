/**
 * `npm run bench:fanout`: how long seed 001's fan-out takes to bring all 77 receivers (7 collectors,
 * 70 alert receivers) to a new symbol list when 20% of pushes fail.
 *
 * Each repetition starts afresh: a new database (a temp SQLite file, or a new PostgreSQL schema,
 * dropped after), the symbol-fanout example's app on a fake clock, and its 77 receivers as real HTTP
 * servers on 127.0.0.1 with empty storage. A push fails (answers 500) when a hash of (repetition,
 * receiver, n-th push) falls under 20%, so repetition i fails the same pushes on both stores. Rounds
 * run until every receiver has acknowledged the list (examples/symbol-fanout/rounds.ts): the first
 * round pushes to all 77, each retry only to the receivers behind, on the seed's backoff 30s, 1m,
 * 2m, 5m, 15m.
 *
 * Reported:
 * 1. simulated convergence time: the fake clock from the first round to the round that left nobody
 *    behind, which is the sum of the backoff steps waited, median / p90 / max; and the rounds
 *    needed, next to what independent 20% failures predict: P(rounds <= k) = (1 - 0.2^k)^77;
 * 2. wall time per round against the real HTTP receivers (the tick: read the registry, push in
 *    parallel, record every target's outcome), for the first round and for retry rounds, and per push.
 * The real convergence time is (1) plus the rounds' wall time in (2).
 *
 * BENCH_QUICK=1 runs a few repetitions (a smoke run of the harness, not a measurement).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fakeClock } from "../src/testing/index.js";
import { DATABASE_URL, dropSchema } from "../test/support/stores.js";
import { createSymbolFanoutApp } from "../examples/symbol-fanout/app.js";
import type { DatabaseTarget } from "../examples/symbol-fanout/database.js";
import { randomFailures } from "../examples/symbol-fanout/failures.js";
import { startFleet } from "../examples/symbol-fanout/fleet.js";
import { PushLog, runUntilConverged, type Round } from "../examples/symbol-fanout/rounds.js";
import { DEMO_SYMBOLS } from "../examples/symbol-fanout/symbols.js";
import { fmt, loadLine, machineInfo, machineLine, markdownTable, quantile, textTable, watchLoad, writeResults } from "./support.js";

const QUICK = process.env.BENCH_QUICK === "1";
const OUT = `fanout-${QUICK ? "quick" : "latest"}`;
const FAIL_RATE = 0.2;
const TARGETS = 77;
const REPS = { SQLite: QUICK ? 5 : 50, PostgreSQL: QUICK ? 3 : 20 } as const;
/** The seed's steps; the time at which round k runs is the sum of the first k-1 steps. */
const STEPS_MS = [30_000, 60_000, 120_000, 300_000, 900_000];
const LOAD_NOTE = ["the benchmark keeps about one core busy: the engine and the 77 receivers share one Node process", "wall times"] as const;

type StoreName = keyof typeof REPS;

interface Repetition {
  seed: number;
  rounds: number;
  simulatedMs: number;
  pushes: number;
  failed: number;
  /** Wall ms of each round, with how many pushes it made. */
  roundWall: { pushes: number; ms: number }[];
  pushMs: number[];
}

/** Warnings are expected (every failed push is one); errors would mean a broken figure. */
const problems = new Map<string, number>();

async function repetition(store: StoreName, seed: number): Promise<Repetition> {
  const dir = mkdtempSync(join(tmpdir(), "tickwork-bench-fanout-"));
  const schema = `bench_fanout_${process.pid}_${seed}`;
  const database: DatabaseTarget = store === "SQLite" ? { kind: "sqlite", path: join(dir, "registry.db") } : { kind: "postgres", url: DATABASE_URL, schema };
  const fleet = await startFleet({ storageDir: join(dir, "receivers"), failure: randomFailures({ seed, rate: FAIL_RATE }) });
  try {
    const clock = fakeClock("2026-03-02T09:00:00Z");
    const log = new PushLog();
    const app = await createSymbolFanoutApp({
      database,
      targets: fleet.targets,
      clock,
      onPush: log.record,
      logger: (event) => {
        if (event.level === "error" || event.level === "critical") problems.set(`${store}: ${event.event}`, (problems.get(`${store}: ${event.event}`) ?? 0) + 1);
      },
    });
    try {
      await app.registry.upsert(DEMO_SYMBOLS);
      const rounds: Round[] = await runUntilConverged({ app, clock, log }, { maxRounds: 30 });
      if (rounds[0]!.pushes.length !== TARGETS) throw new Error(`the first round pushed to ${rounds[0]!.pushes.length} receivers, not ${TARGETS}`);
      const views = await fleet.views();
      if (views.some((v) => v.source !== "pushed")) throw new Error("a receiver is not on the pushed list after convergence");
      return {
        seed,
        rounds: rounds.length,
        simulatedMs: rounds.at(-1)!.at - rounds[0]!.at,
        pushes: log.outcomes.length,
        failed: log.outcomes.filter((o) => o.result !== "ok").length,
        roundWall: rounds.map((r) => ({ pushes: r.pushes.length, ms: r.wallMs })),
        pushMs: log.outcomes.map((o) => o.ms),
      };
    } finally {
      await app.stop();
    }
  } finally {
    await fleet.close();
    rmSync(dir, { recursive: true, force: true });
    if (store === "PostgreSQL") await dropSchema(schema);
  }
}


// ---- the figures -----------------------------------------------------------------------------

/** Fake-clock time at which round k (1-based) runs, after the first at 0. */
const roundAt = (k: number) => STEPS_MS.slice(0, k - 1).reduce((a, b) => a + b, 0) + Math.max(0, k - 1 - STEPS_MS.length) * STEPS_MS.at(-1)!;
/** P(all 77 done within k rounds) with independent failures at FAIL_RATE. */
const within = (k: number) => (1 - FAIL_RATE ** k) ** TARGETS;

function minutes(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : s % 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s / 60}m`;
}

interface StoreFigures {
  store: StoreName;
  reps: number;
  failShare: number;
  simulated: { median: number; p90: number; max: number };
  rounds: { median: number; p90: number; max: number; histogram: Record<number, number> };
  firstRoundMs: { median: number; p90: number; max: number };
  retryRoundMs: { median: number; p90: number; max: number; rounds: number };
  pushMs: { median: number; p90: number; max: number };
  wallToConvergeMs: { median: number; p90: number; max: number };
}

const stats = (values: number[]) => ({ median: quantile(values, 0.5), p90: quantile(values, 0.9), max: Math.max(...values) });

function figures(store: StoreName, reps: Repetition[]): StoreFigures {
  const histogram: Record<number, number> = {};
  for (const r of reps) histogram[r.rounds] = (histogram[r.rounds] ?? 0) + 1;
  const retries = reps.flatMap((r) => r.roundWall.slice(1).map((w) => w.ms));
  return {
    store,
    reps: reps.length,
    failShare: reps.reduce((a, r) => a + r.failed, 0) / reps.reduce((a, r) => a + r.pushes, 0),
    simulated: stats(reps.map((r) => r.simulatedMs)),
    rounds: { ...stats(reps.map((r) => r.rounds)), histogram },
    firstRoundMs: stats(reps.map((r) => r.roundWall[0]!.ms)),
    retryRoundMs: { ...stats(retries), rounds: retries.length },
    pushMs: stats(reps.flatMap((r) => r.pushMs)),
    wallToConvergeMs: stats(reps.map((r) => r.roundWall.reduce((a, w) => a + w.ms, 0))),
  };
}

// ---- the run ---------------------------------------------------------------------------------

const machine = machineInfo();
const load = watchLoad();
console.log(`Fan-out convergence: ${TARGETS} receivers over real HTTP, ${FAIL_RATE * 100}% of pushes failing, seed 001's backoff ${STEPS_MS.map(minutes).join(", ")}${QUICK ? " (BENCH_QUICK: a smoke run)" : ""}`);
console.log(machineLine(machine));
const results = new Map<StoreName, Repetition[]>();
let failedScenario = false;
for (const store of Object.keys(REPS) as StoreName[]) {
  const reps: Repetition[] = [];
  try {
    for (let seed = 1; seed <= REPS[store]; seed++) reps.push(await repetition(store, seed));
    results.set(store, reps);
    console.log(`  ${store}: ${reps.length} repetitions done`);
  } catch (error) {
    failedScenario = true;
    console.error(`  ${store}: FAILED: ${error instanceof Error ? error.message : String(error)}`);
  }
}
const loadSeen = load.stop();
const all = [...results].map(([store, reps]) => figures(store, reps));

// Repetition i fails the same pushes on both stores, so the rounds must agree.
const sqliteReps = results.get("SQLite") ?? [];
const pgReps = results.get("PostgreSQL") ?? [];
const sameRounds = pgReps.every((r, i) => sqliteReps[i] === undefined || (sqliteReps[i]!.rounds === r.rounds && sqliteReps[i]!.simulatedMs === r.simulatedMs));

const maxRounds = Math.max(0, ...all.map((f) => f.rounds.max), 6);
const expectedRows = Array.from({ length: maxRounds }, (_, i) => i + 1).map((k) => [
  String(k),
  minutes(roundAt(k)),
  `${fmt((within(k) - within(k - 1)) * 100)}%`,
  ...all.map((f) => `${fmt(((f.rounds.histogram[k] ?? 0) / f.reps) * 100)}%`),
]);
const expectedHeader = ["Rounds", "Converged at (clock)", "Expected share", ...all.map((f) => `${f.store} share (${f.reps} reps)`)];
const summaryHeader = ["Store", "Reps", "Failed pushes", "Convergence on the clock: median / p90 / max", "Rounds: median / p90 / max", "First round (77 pushes) ms: median / p90 / max", "Retry round ms: median / p90 / max", "Push ms: median / p90", "Wall time of all rounds ms: median / max"];
const summaryRows = all.map((f) => [
  f.store,
  String(f.reps),
  `${fmt(f.failShare * 100)}%`,
  `${minutes(f.simulated.median)} / ${minutes(f.simulated.p90)} / ${minutes(f.simulated.max)}`,
  `${f.rounds.median} / ${f.rounds.p90} / ${f.rounds.max}`,
  `${fmt(f.firstRoundMs.median)} / ${fmt(f.firstRoundMs.p90)} / ${fmt(f.firstRoundMs.max)}`,
  `${fmt(f.retryRoundMs.median)} / ${fmt(f.retryRoundMs.p90)} / ${fmt(f.retryRoundMs.max)}`,
  `${fmt(f.pushMs.median)} / ${fmt(f.pushMs.p90)}`,
  `${fmt(f.wallToConvergeMs.median)} / ${fmt(f.wallToConvergeMs.max)}`,
]);

const expectedMedian = Array.from({ length: 30 }, (_, i) => i + 1).find((k) => within(k) >= 0.5)!;
const expectedP90 = Array.from({ length: 30 }, (_, i) => i + 1).find((k) => within(k) >= 0.9)!;
const loadText = loadLine(machine, loadSeen, ...LOAD_NOTE);

console.log("");
console.log(textTable(summaryHeader, summaryRows));
console.log("");
console.log(textTable(expectedHeader, expectedRows));
console.log("");
console.log(`Expected with independent ${FAIL_RATE * 100}% failures: median ${expectedMedian} rounds (${minutes(roundAt(expectedMedian))} on the clock), p90 ${expectedP90} rounds (${minutes(roundAt(expectedP90))}).`);
if (pgReps.length) console.log(`Same seeds on both stores gave the same rounds and clock times: ${sameRounds ? "yes" : "NO"}.`);
console.log(loadText);
for (const [what, n] of problems) console.log(`PROBLEM: ${what} x${n}`);

const markdown = [
  "# Fan-out convergence benchmark",
  "",
  `Machine: ${machineLine(machine)}.`,
  "",
  loadText,
  "",
  `Seed 001's fan-out (\`examples/symbol-fanout\`): ${TARGETS} receivers (7 collectors, 70 alert receivers) as real HTTP servers on 127.0.0.1 in the benchmark's process, ${FAIL_RATE * 100}% of pushes answered 500 (a hash of repetition, receiver and push number, so repetition i fails the same pushes on both stores), backoff ${STEPS_MS.map(minutes).join(", ")}, a fresh database and fresh receivers per repetition. The clock is fake: the waits between rounds are skipped and reported as clock time; each round's tick is real and timed.`,
  "",
  "## Summary",
  "",
  markdownTable(summaryHeader, summaryRows, [1, 2, 3, 4, 5, 6, 7, 8]),
  "",
  `Convergence on the clock is the backoff waited: round k runs ${Array.from({ length: 6 }, (_, i) => minutes(roundAt(i + 1))).join(", ")} after the first. With independent ${FAIL_RATE * 100}% failures, P(all ${TARGETS} within k rounds) = (1 - ${FAIL_RATE}^k)^${TARGETS}: median ${expectedMedian} rounds (${minutes(roundAt(expectedMedian))}), p90 ${expectedP90} rounds (${minutes(roundAt(expectedP90))}).${pgReps.length ? ` Same seeds on both stores gave the same rounds and clock times: ${sameRounds ? "yes" : "no"}.` : ""}`,
  "",
  "## Rounds needed",
  "",
  markdownTable(expectedHeader, expectedRows, [1, 2, 3, 4]),
  "",
  "A round's wall time is one `tick()`: read the enabled symbols, push to the receivers behind in parallel, record every target's outcome, end the round. The receivers share the benchmark's process and CPU, so the figures include their side of every request.",
  ...(problems.size ? ["", "Problems reported by the engines:", ...[...problems].map(([what, n]) => `- ${what} x${n}`)] : []),
  "",
].join("\n");

writeResults(OUT, { machine, load: loadSeen, failRate: FAIL_RATE, targets: TARGETS, backoffMs: STEPS_MS, stores: all, sameRoundsOnBothStores: sameRounds, expected: { medianRounds: expectedMedian, p90Rounds: expectedP90 }, repetitions: Object.fromEntries([...results].map(([store, reps]) => [store, reps.map(({ pushMs: _pushMs, ...r }) => r)])), problems: Object.fromEntries(problems) }, markdown);
if (failedScenario) process.exitCode = 1;
