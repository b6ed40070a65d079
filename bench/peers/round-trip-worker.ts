/**
 * The worker process of the round-trip and producer workloads: runs one system's worker on the
 * namespace the benchmark created until SIGTERM. Each job answers `{ n }` (its payload's number); a
 * job whose payload carries `at` (the producer's wall clock at the enqueue call, in ms with a
 * fraction) has its enqueue-to-start latency recorded, and the parent reads them over IPC:
 * `{ started }` messages as jobs start (at most every 20 ms), `{ latencies }` in answer to "report".
 * Usage: tsx round-trip-worker.ts <tickwork|bullmq|graphile-worker|pg-boss> <schema | key prefix> <concurrency>
 * graphile-worker runs with its defaults (LISTEN/NOTIFY wake-ups); pg-boss with the tuned settings of
 * its adapter (0.5 s polls, batches of 1,000), as at its defaults (one job per 2 s poll per loop) it
 * cannot keep up with the producer's rates.
 * Prints "ready" once the worker runs.
 */
import { Worker } from "bullmq";
import { run as runGraphile } from "graphile-worker";
import { PgBoss } from "pg-boss";
import { createTickwork } from "../../src/index.js";
import { postgres } from "../../src/store/postgres.js";
import { DATABASE_URL } from "../fixtures.js";
import { PGBOSS_TUNED } from "./pg-boss.js";
import { ROUND_TRIP_QUEUE, ROUND_TRIP_TASK, quietGraphileLogger, wallClock, type RoundTripPayload } from "./round-trip.js";
import { redisConnection } from "./servers.js";

const [system, namespace, concurrencyText] = process.argv.slice(2);
const concurrency = Number(concurrencyText);
if (!namespace || !Number.isInteger(concurrency) || concurrency < 1) throw new Error("usage: round-trip-worker.ts <tickwork|bullmq|graphile-worker|pg-boss> <namespace> <concurrency>");

const latencies: number[] = [];
let told = 0;
let telling: ReturnType<typeof setTimeout> | undefined;
function tell(): void {
  telling = undefined;
  told = latencies.length;
  process.send?.({ started: told });
}
function run(payload: RoundTripPayload): RoundTripPayload {
  if (payload.at !== undefined) {
    latencies.push(wallClock() - payload.at);
    telling ??= setTimeout(tell, 20);
  }
  return { n: payload.n };
}
process.on("message", (message) => {
  if (message === "report") process.send?.({ latencies });
});

let stop: () => Promise<void>;
if (system === "tickwork") {
  const tw = await createTickwork({ store: postgres({ url: DATABASE_URL, schema: namespace }), migrate: false, handleSignals: false, logLevel: "warn" });
  tw.queue<RoundTripPayload>(ROUND_TRIP_QUEUE, { concurrency, handler: (job) => run(job.payload) });
  await tw.start();
  stop = () => tw.stop();
} else if (system === "bullmq") {
  const worker = new Worker<RoundTripPayload>(ROUND_TRIP_QUEUE, async (job) => run(job.data), { connection: redisConnection(), prefix: namespace, concurrency });
  await worker.waitUntilReady();
  stop = () => worker.close();
} else if (system === "graphile-worker") {
  const runner = await runGraphile({
    connectionString: DATABASE_URL,
    schema: namespace,
    concurrency,
    taskList: { [ROUND_TRIP_TASK]: async (payload) => void run(payload as RoundTripPayload) },
    parsedCronItems: [],
    noHandleSignals: true,
    logger: quietGraphileLogger,
  });
  stop = () => runner.stop();
} else if (system === "pg-boss") {
  const boss = new PgBoss({ connectionString: DATABASE_URL, schema: namespace });
  boss.on("error", () => {});
  await boss.start();
  // localConcurrency: that many polling loops, each running its batch one job at a time (see pg-boss.ts).
  await boss.work<RoundTripPayload>(ROUND_TRIP_TASK, { ...PGBOSS_TUNED, localConcurrency: concurrency }, async (jobs) => {
    for (const job of jobs) run(job.data);
  });
  stop = () => boss.stop({ graceful: true, timeout: 5_000, close: true });
} else {
  throw new Error(`unknown system ${system}`);
}
process.once("SIGTERM", () => {
  clearTimeout(telling);
  void stop().then(() => process.exit(0));
});
process.stdout.write("ready\n");
