/**
 * The worker process of the workloads with workers in other processes (round trip, producer,
 * scale-out): runs one system's worker on the namespace the benchmark created until SIGTERM. Each
 * job answers `{ n }` (its payload's number); a job whose payload carries `at` (the producer's wall
 * clock at the enqueue call, in ms with a fraction) has its enqueue-to-start latency recorded. The
 * parent reads what it did over IPC: `{ started, calls }` messages as jobs start (at most every
 * 20 ms: jobs carrying `at`, and handler calls in all), and `{ report }` in answer to "report" (the
 * latencies, every job number it ran, the wall clock of its last handler call).
 * Usage: tsx round-trip-worker.ts <tickwork|bullmq|bullmq-postgres|graphile-worker|pg-boss> <schema | key prefix> <concurrency> [now|held]
 * "now" (the default) starts the worker at once; "held" configures it (connections, queue, handler)
 * and starts it when the parent sends "start", answering `{ running: true }` once it runs, so that
 * the scale-out workload starts every process's worker at one moment, after their slow start-up.
 * graphile-worker runs with its defaults (LISTEN/NOTIFY wake-ups); pg-boss with the tuned settings of
 * its adapter (0.5 s polls, batches of 1,000), as at its defaults (one job per 2 s poll per loop) it
 * cannot keep up with the producer's rates.
 * Prints "ready" once the worker runs ("now") or is configured ("held").
 */
import { Worker, createPostgresBackend, type JobProgress, type PostgresConnectionOptions, type PostgresQueueBackend } from "bullmq";
import { run as runGraphile, type Runner } from "graphile-worker";
import { PgBoss } from "pg-boss";
import { createTickwork } from "../../src/index.js";
import { postgres } from "../../src/store/postgres.js";
import { DATABASE_URL } from "../fixtures.js";
import { PGBOSS_TUNED } from "./pg-boss.js";
import { ROUND_TRIP_QUEUE, ROUND_TRIP_TASK, quietGraphileLogger, wallClock, type RoundTripPayload, type WorkerReport } from "./round-trip.js";
import { bullmqPostgresConnection } from "./bullmq.js";
import { redisConnection } from "./servers.js";

const [system, given, concurrencyText, mode = "now"] = process.argv.slice(2);
const concurrency = Number(concurrencyText);
if (!given || !Number.isInteger(concurrency) || concurrency < 1 || (mode !== "now" && mode !== "held")) {
  throw new Error("usage: round-trip-worker.ts <tickwork|bullmq|bullmq-postgres|graphile-worker|pg-boss> <namespace> <concurrency> [now|held]");
}
/** The schema or Redis key prefix the benchmark made for this run. */
const namespace: string = given;

/** Every handler call's job number, for the parent's exactly-once check, and the latencies of the jobs carrying `at`. */
const ran: number[] = [];
const latencies: number[] = [];
let lastCall = 0;
let telling: ReturnType<typeof setTimeout> | undefined;
function tell(): void {
  telling = undefined;
  // The parent may have closed the channel (it stopped, or was killed): a send then fails with EPIPE,
  // which unhandled would crash this process with a trace over the parent's output.
  if (process.connected) process.send?.({ started: latencies.length, calls: ran.length }, undefined, {}, () => {});
}
function run(payload: RoundTripPayload): RoundTripPayload {
  lastCall = wallClock();
  ran.push(payload.n);
  if (payload.at !== undefined) latencies.push(lastCall - payload.at);
  telling ??= setTimeout(tell, 20);
  return { n: payload.n };
}

/** A failure after "ready" (a worker loop that threw): the parent sees the exit instead of an answer. */
function fail(error: unknown): never {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
}

/** The system's worker on the namespace, configured: `start` sets it running, `stop` stops it and closes its connections. */
interface SystemWorker {
  start(): Promise<void>;
  stop(): Promise<void>;
}

async function configure(): Promise<SystemWorker> {
  switch (system) {
    case "tickwork": {
      const tw = await createTickwork({ store: postgres({ url: DATABASE_URL, schema: namespace }), migrate: false, handleSignals: false, logLevel: "warn" });
      tw.queue<RoundTripPayload>(ROUND_TRIP_QUEUE, { concurrency, handler: (job) => run(job.payload) });
      return { start: () => tw.start(), stop: () => tw.stop() };
    }
    case "bullmq": {
      // autorun off, so that `run()` (what the constructor calls otherwise) is the start.
      const worker = new Worker<RoundTripPayload>(ROUND_TRIP_QUEUE, async (job) => run(job.data), { connection: redisConnection(), prefix: namespace, concurrency, autorun: false });
      await worker.waitUntilReady();
      return {
        // run() resolves only when the worker closes.
        start: async () => void worker.run().catch(fail),
        stop: () => worker.close(),
      };
    }
    case "bullmq-postgres": {
      // The producer migrated the schema; autorun off, as on Redis.
      const worker = new Worker<RoundTripPayload, unknown, string, PostgresQueueBackend, JobProgress, PostgresConnectionOptions>(
        ROUND_TRIP_QUEUE,
        async (job) => run(job.data),
        { connection: bullmqPostgresConnection(namespace, false), concurrency, autorun: false },
        createPostgresBackend,
      );
      await worker.waitUntilReady();
      return {
        start: async () => void worker.run().catch(fail),
        stop: () => worker.close(),
      };
    }
    case "graphile-worker": {
      // Nothing to configure ahead: its runner starts working as `run` returns.
      let runner: Runner | undefined;
      return {
        async start() {
          runner = await runGraphile({
            connectionString: DATABASE_URL,
            schema: namespace,
            concurrency,
            taskList: { [ROUND_TRIP_TASK]: async (payload) => void run(payload as RoundTripPayload) },
            parsedCronItems: [],
            noHandleSignals: true,
            logger: quietGraphileLogger,
          });
        },
        stop: async () => runner?.stop(),
      };
    }
    case "pg-boss": {
      const boss = new PgBoss({ connectionString: DATABASE_URL, schema: namespace });
      boss.on("error", () => {});
      await boss.start();
      return {
        async start() {
          // localConcurrency: that many polling loops, each running its batch one job at a time (see pg-boss.ts).
          await boss.work<RoundTripPayload>(ROUND_TRIP_TASK, { ...PGBOSS_TUNED, localConcurrency: concurrency }, async (jobs) => {
            for (const job of jobs) run(job.data);
          });
        },
        stop: () => boss.stop({ graceful: true, timeout: 5_000, close: true }),
      };
    }
    default:
      throw new Error(`unknown system ${system}`);
  }
}

const worker = await configure();
process.on("message", (message) => {
  if (message === "report") process.send?.({ report: { latencies, ran, lastCall } satisfies WorkerReport });
  if (message === "start" && mode === "held") worker.start().then(() => process.send?.({ running: true }), fail);
});
process.once("SIGTERM", () => {
  clearTimeout(telling);
  void worker.stop().then(() => process.exit(0));
});
if (mode === "now") await worker.start();
process.stdout.write("ready\n");
