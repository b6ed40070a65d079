/**
 * `npm run bench:delivery`: how long tickwork's delivery module takes to deliver 10,000 callbacks at
 * a budget of 500 per tick, on SQLite and PostgreSQL, on this machine.
 *
 * For each store, each run on a fresh database (a temp SQLite file in WAL mode, or a new PostgreSQL
 * schema, dropped after): an engine driven by `tw.start()` (real time: the engine's own 100 ms
 * carry-over cadence), one delivery declared with `webhookSender` (signed Standard Webhooks
 * POSTs, budget 500 per tick, retries 50 per tick); CALLBACKS items are emitted in one `emit()`
 * before `start()` (timed apart), and the delivery is timed from `start()` to the last `onDelivered`.
 * The receiver is a plain node:http server in a child process (this file, started with `receiver`):
 * it verifies each signature and answers 200, or 500 for a share of first attempts.
 * Scenarios: no failures; 10% of first attempts answered 500 (their retry succeeds). The retry
 * schedule is seed 000's scaled down 60 times (1s 5s 15s 1m 2m instead of 1m 5m 15m 1h 2h), or the
 * failure scenario would time the one-minute wait. Repeated REPS times, median with min-max.
 * Ticks are counted in `send`: the calls of one pass all start in one turn of the event loop.
 * Results go to the terminal and to bench/results/delivery-latest.{json,md}.
 *
 * BENCH_QUICK=1 shrinks every size (a smoke run of the harness, not a measurement).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createTickwork, schedule, type LogEvent } from "../src/index.js";
import { verifyWebhook, webhookSender } from "../src/delivery/index.js";
import { postgresBackend, sqliteBackend, type Backend } from "./fixtures.js";
import { deferred, fmt, sleep, loadLine, machineInfo, machineLine, markdownTable, now, quantile, repeat, summarise, textTable, watchLoad, within, writeResults, type Load, type MachineInfo, type Summary } from "./support.js";

const QUICK = process.env.BENCH_QUICK === "1";
const OUT = `delivery-${QUICK ? "quick" : "latest"}`;
const CALLBACKS = QUICK ? 1_000 : 10_000;
const BUDGET = 500;
const RETRY_BATCH = 50;
const REPS = QUICK ? 1 : 3;
const FAIL_SHARE = 0.1;
const RETRY_STEPS = ["1s", "5s", "15s", "1m", "2m"];
const SECRET = `whsec_${Buffer.from("tickwork-delivery-benchmark-key!").toString("base64")}`;
const LOAD_NOTE = ["the benchmark keeps about two busy: the engine's process, the receiver's, and PostgreSQL's backends", "wall times"] as const;

// ---- the receiver (a child process) ------------------------------------------------------------

interface ReceiverStats {
  requests: number;
  failed: number;
  /** Distinct webhook ids answered 200. */
  delivered: number;
  /** Requests refused for a bad signature: must stay 0. */
  refused: number;
}

/** `tsx bench/delivery.ts receiver`: verifies, answers, counts; `POST /reset` with `{ failShare }` starts a run. */
async function runReceiver(): Promise<void> {
  let failShare = 0;
  let stats: ReceiverStats = { requests: 0, failed: 0, delivered: 0, refused: 0 };
  let seen = new Set<string>();
  let attempted = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const answer = (status: number, json: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json));
      if (req.url === "/reset") {
        failShare = (JSON.parse(body) as { failShare: number }).failShare;
        stats = { requests: 0, failed: 0, delivered: 0, refused: 0 };
        seen = new Set();
        attempted = new Set();
        return answer(200, {});
      }
      if (req.url === "/stats") return answer(200, stats);
      stats.requests++;
      verifyWebhook({ secret: SECRET, headers: req.headers, body }).then(
        ({ id }) => {
          const first = !attempted.has(id);
          attempted.add(id);
          // A share of first attempts fail, picked by the id's last hex digits (ids are random UUIDs).
          if (first && parseInt(id.slice(-4), 16) / 0x10000 < failShare) {
            stats.failed++;
            return answer(500, { error: "internal_error" });
          }
          if (!seen.has(id)) stats.delivered++;
          seen.add(id);
          answer(200, { ok: true });
        },
        () => {
          stats.refused++;
          answer(401, { error: "invalid_signature" });
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: "127.0.0.1", backlog: 2_048 }, resolve));
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
  process.on("disconnect", () => process.exit(0));
}

interface ReceiverProcess {
  url: string;
  reset(failShare: number): Promise<void>;
  stats(): Promise<ReceiverStats>;
  stop(): void;
}

async function startReceiverProcess(): Promise<ReceiverProcess> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "receiver"], { stdio: ["ignore", "pipe", "inherit", "ipc"] });
  const url = await within(30_000, "the receiver process to start", new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", (line) => resolve((JSON.parse(line) as { url: string }).url));
    child.once("exit", (code) => reject(new Error(`the receiver process ended (${code})`)));
  }));
  const post = async (path: string, body: unknown) => (await fetch(`${url}${path}`, { method: "POST", body: JSON.stringify(body) })).json();
  return {
    url,
    reset: async (failShare) => void (await post("/reset", { failShare })),
    stats: async () => (await post("/stats", {})) as ReceiverStats,
    stop: () => void child.kill(),
  };
}

// ---- one run ------------------------------------------------------------------------------------

interface RunFigures {
  /** From start() to the last onDelivered, ms. */
  wallMs: number;
  /** The emit() call (10,000 items into the outbox, before start()), ms. */
  emitMs: number;
  ticks: number;
  largestTick: number;
  /** Median time from one tick's first call to the next tick's: the pass plus the 100 ms wait. */
  tickIntervalMs: number;
  /** HTTP calls made (first sends and retries). */
  calls: number;
  retries: number;
}

const problems = new Map<string, number>();
let scenario = "setup";

async function run(backend: Backend, receiver: ReceiverProcess, failShare: number, callbacks = CALLBACKS): Promise<RunFigures> {
  const fx = await backend.fresh();
  await receiver.reset(failShare);
  const tw = await createTickwork({
    store: fx.open(),
    handleSignals: false,
    migrate: false,
    tickBudget: BUDGET,
    logger: (event: LogEvent) => {
      // Failed sends are the scenario's own; anything else at warn or above taints the figures.
      if (event.level === "debug" || event.level === "info" || event.event === "delivery.failed") return;
      const key = `${scenario}: ${event.event}`;
      problems.set(key, (problems.get(key) ?? 0) + 1);
    },
  });
  try {
    const sender = webhookSender<{ n: number }>({ url: `${receiver.url}/callbacks`, secret: SECRET });
    const batchStarts: number[] = [];
    const batchSizes: number[] = [];
    let inBatch = false;
    let calls = 0;
    let delivered = 0;
    const done = deferred<number>();
    const delivery = tw.delivery<{ n: number }>("bench", {
      budget: BUDGET,
      retryBatch: RETRY_BATCH,
      retry: schedule(RETRY_STEPS),
      send: (message, ctx) => {
        calls++;
        // Every call of one pass starts in the same turn of the event loop.
        if (!inBatch) {
          inBatch = true;
          batchStarts.push(now());
          batchSizes.push(0);
          setImmediate(() => (inBatch = false));
        }
        batchSizes[batchSizes.length - 1]!++;
        return sender(message, ctx);
      },
      onDelivered: () => {
        if (++delivered === callbacks) done.resolve(now());
      },
    });
    // Emitted before start(), so every tick finds the outbox full: the figure is the delivery's own.
    const items = Array.from({ length: callbacks }, (_, n) => ({ key: `callback-${n}`, payload: { n } }));
    const tEmit = now();
    const { emitted } = await delivery.emit(items);
    const emitMs = now() - tEmit;
    if (emitted !== callbacks) throw new Error(`emitted ${emitted} of ${callbacks}`);
    const t0 = now();
    await tw.start();
    const tLast = await within(600_000, `delivering ${callbacks} callbacks on ${backend.name}`, done.promise);
    // The last pass removes its delivered items from the outbox after their onDelivered calls.
    const status = await within(30_000, `the outbox to empty on ${backend.name}`, (async () => {
      for (;;) {
        const s = await delivery.status();
        if (s.pending + s.retrying === 0) return s;
        await sleep(5);
      }
    })());
    const stats = await receiver.stats();
    if (status.dropped) throw new Error(`dropped: ${JSON.stringify(status)}`);
    if (stats.delivered !== callbacks || stats.refused) throw new Error(`receiver: ${JSON.stringify(stats)}`);
    const intervals = batchStarts.slice(1).map((t, i) => t - batchStarts[i]!);
    return {
      wallMs: tLast - t0,
      emitMs,
      ticks: batchStarts.length,
      largestTick: Math.max(...batchSizes),
      tickIntervalMs: quantile(intervals, 0.5),
      calls,
      retries: calls - callbacks,
    };
  } finally {
    await tw.stop();
    await fx.drop();
  }
}

// ---- the report --------------------------------------------------------------------------------

interface ScenarioReport {
  store: Backend["name"];
  failures: string;
  runs: RunFigures[];
  wallMs: Summary;
  ticks: Summary;
  callsPerSecond: Summary;
  error?: string;
}

const HEADER = ["Store", "Failures", "Wall time (s)", "Range", "Ticks", "Largest tick", "Tick interval (ms)", "Calls", "Calls/s", "Emit before (s)"];

function rows(reports: ScenarioReport[]): string[][] {
  return reports.map((r) => {
    if (r.error) return [r.store, r.failures, "ERROR", r.error, "", "", "", "", "", ""];
    const mid = r.runs[r.runs.length >> 1]!;
    return [
      r.store,
      r.failures,
      fmt(r.wallMs.median / 1000),
      r.runs.length > 1 ? `${fmt(r.wallMs.min / 1000)}-${fmt(r.wallMs.max / 1000)}` : "",
      fmt(r.ticks.median),
      String(Math.max(...r.runs.map((x) => x.largestTick))),
      fmt(quantile(r.runs.map((x) => x.tickIntervalMs), 0.5)),
      fmt(mid.calls),
      fmt(r.callsPerSecond.median),
      fmt(quantile(r.runs.map((x) => x.emitMs), 0.5) / 1000),
    ];
  });
}

function problemLines(): string[] {
  if (problems.size === 0) return ["Engine warnings and errors during the run: none."];
  return ["Engine warnings and errors during the run (these scenarios' figures are suspect):", ...[...problems].map(([key, n]) => `- ${key}: ${n}`)];
}

function markdown(machine: MachineInfo, load: Load, reports: ScenarioReport[], versions: Record<string, string>): string {
  return [
    "# Delivery benchmark",
    "",
    `Machine: ${machineLine(machine)}.`,
    "",
    loadLine(machine, load, ...LOAD_NOTE),
    "",
    `${fmt(CALLBACKS)} callbacks emitted in one \`emit()\`, then delivered by the engine once started (\`tw.start()\`, real time) at a budget of ${BUDGET} calls per tick, retries ${RETRY_BATCH} per tick;`,
    "each call a signed Standard Webhooks POST (`webhookSender`) to a node:http receiver in another process that verifies the signature.",
    "Wall time: from `start()` to the last `onDelivered`. Emit before: the `emit()` call that filled the outbox before `start()`, timed apart.",
    "Ticks: passes that made calls. Tick interval: the median time from one tick's first call to the next's (the pass, then the engine's 100 ms carry-over wait). Calls/s: HTTP calls (first sends and retries) over the wall time.",
    `Failures: ${FAIL_SHARE * 100}% of first attempts answered 500, each retried once after 1 s (seed 000's schedule scaled down 60 times: ${RETRY_STEPS.join(" ")}); the retries share each tick's budget.`,
    `Each figure is the median of ${REPS} runs, each on a fresh database, with the range. Stores: ${Object.entries(versions).map(([k, v]) => `${k} ${v}`).join("; ")}.`,
    "Regenerate with `npm run bench:delivery`.",
    "",
    markdownTable(HEADER, rows(reports), [2, 4, 5, 6, 7, 8, 9]),
    "",
    ...problemLines(),
    "",
  ].join("\n");
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const loadWatch = watchLoad();
  console.log(`tickwork delivery benchmark${QUICK ? " (BENCH_QUICK: sizes shrunk, not a measurement)" : ""}`);
  console.log(machineLine(machine));
  console.log(`The machine may be shared: the load average during the run is reported at the end.`);
  console.log();

  const receiver = await startReceiverProcess();
  const reports: ScenarioReport[] = [];
  const versions: Record<string, string> = {};
  try {
    for (const backend of [sqliteBackend, postgresBackend]) {
      const described = await backend.describe();
      versions[backend.name] = `${described.version} (${Object.entries(described.settings).map(([k, v]) => `${k}=${v}`).join(", ")})`;
      scenario = `${backend.name}, warm-up`;
      process.stdout.write(`  ${backend.name}: warm-up\n`);
      await run(backend, receiver, 0, Math.min(1_000, CALLBACKS));
      for (const failShare of [0, FAIL_SHARE]) {
        const failures = failShare ? `${failShare * 100}% of first attempts` : "none";
        scenario = `${backend.name}, failures ${failures}`;
        process.stdout.write(`  ${backend.name}: ${fmt(CALLBACKS)} callbacks, failures ${failures}, x${REPS}\n`);
        try {
          const runs = await repeat(REPS, () => run(backend, receiver, failShare));
          for (const r of runs) process.stdout.write(`    ${fmt(r.wallMs / 1000)} s, ${r.ticks} ticks (largest ${r.largestTick}), ${r.calls} calls; emit before start ${fmt(r.emitMs / 1000)} s\n`);
          reports.push({
            store: backend.name,
            failures,
            runs,
            wallMs: summarise(runs.map((r) => r.wallMs)),
            ticks: summarise(runs.map((r) => r.ticks)),
            callsPerSecond: summarise(runs.map((r) => (r.calls / r.wallMs) * 1000)),
          });
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          process.stdout.write(`    ERROR: ${message}\n`);
          process.exitCode = 1;
          reports.push({ store: backend.name, failures, runs: [], wallMs: summarise([0]), ticks: summarise([0]), callsPerSecond: summarise([0]), error: message });
        }
      }
    }
  } finally {
    receiver.stop();
  }

  const load = loadWatch.stop();
  console.log();
  console.log(textTable(HEADER, rows(reports)));
  console.log(problemLines().join("\n"));
  console.log(loadLine(machine, load, ...LOAD_NOTE));
  const json = {
    benchmark: "delivery",
    quick: QUICK,
    machine,
    load,
    parameters: { callbacks: CALLBACKS, budget: BUDGET, retryBatch: RETRY_BATCH, failShare: FAIL_SHARE, retrySteps: RETRY_STEPS, repetitions: REPS },
    stores: versions,
    scenarios: reports,
    engineWarnings: Object.fromEntries(problems),
  };
  writeResults(OUT, json, markdown(machine, load, reports, versions));
}

if (process.argv[2] === "receiver") await runReceiver();
else await main();
