/**
 * The round-trip workload's two halves: a producer in the benchmark's process that enqueues a job
 * and awaits its result (tickwork `queue.enqueueAndWait`, BullMQ `job.waitUntilFinished` with
 * QueueEvents), and a worker in a child process of its own (round-trip-worker.ts), as a web process
 * and a worker process would be deployed. graphile-worker and pg-boss have no way to await a job's
 * result, so they have no row (a caller would poll the job's row).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { Queue, QueueEvents } from "bullmq";
import { createTickwork } from "../../src/index.js";
import { postgres } from "../../src/store/postgres.js";
import { migratedPostgresSchema } from "../fixtures.js";
import { DATABASE_URL, deleteKeys, redisConnection, uniqueName } from "./servers.js";

export const ROUND_TRIP_QUEUE = "roundtrip";
/** Longest a single round trip may take before the measurement fails. */
const CALL_TIMEOUT_MS = 15_000;

export interface RoundTripPayload {
  n: number;
}

/** A producer awaiting results computed by a worker in another process. */
export interface RoundTrip {
  /** Enqueues job `n` and resolves once its result (`{ n }`) is back. */
  call(n: number): Promise<void>;
  close(): Promise<void>;
}

export type RoundTripSystem = "tickwork" | "bullmq";

/** Starts the worker process on `namespace` and resolves once it says it runs. */
async function startWorker(system: RoundTripSystem, namespace: string, concurrency: number): Promise<ChildProcess> {
  const script = fileURLToPath(new URL("./round-trip-worker.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", script, system, namespace, String(concurrency)], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("ready\n")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the ${system} worker process exited (${code}) before it was ready`)));
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  try {
    await ready;
  } finally {
    clearTimeout(timer);
  }
  return child;
}

async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

function check(n: number, result: unknown): void {
  if ((result as RoundTripPayload | undefined)?.n !== n) throw new Error(`job ${n} came back with ${JSON.stringify(result)}`);
}

export async function openRoundTrip(system: RoundTripSystem, concurrency: number): Promise<RoundTrip> {
  return system === "tickwork" ? tickworkRoundTrip(concurrency) : bullmqRoundTrip(concurrency);
}

async function tickworkRoundTrip(concurrency: number): Promise<RoundTrip> {
  const { schema, side } = await migratedPostgresSchema("tw_rt");
  const drop = async () => {
    try {
      await side.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await side.end();
    }
  };
  let child: ChildProcess | undefined;
  try {
    child = await startWorker("tickwork", schema, concurrency);
    const tw = await createTickwork({ store: postgres({ url: DATABASE_URL, schema }), migrate: false, handleSignals: false, logLevel: "warn" });
    // Enqueue-only here: the handler is the worker process's.
    const queue = tw.queue<RoundTripPayload>(ROUND_TRIP_QUEUE, {});
    const worker = child;
    return {
      async call(n) {
        check(n, await queue.enqueueAndWait({ n }, { timeout: CALL_TIMEOUT_MS }));
      },
      async close() {
        try {
          await tw.stop();
          await stopWorker(worker);
        } finally {
          await drop();
        }
      },
    };
  } catch (error) {
    if (child) await stopWorker(child);
    await drop();
    throw error;
  }
}

async function bullmqRoundTrip(concurrency: number): Promise<RoundTrip> {
  const prefix = uniqueName("twbench_rt");
  const queue = new Queue<RoundTripPayload>(ROUND_TRIP_QUEUE, { connection: redisConnection(), prefix });
  const events = new QueueEvents(ROUND_TRIP_QUEUE, { connection: redisConnection(), prefix });
  const close = async (child: ChildProcess | undefined) => {
    try {
      await events.close();
      if (child) await stopWorker(child);
      await queue.obliterate({ force: true });
      await queue.close();
    } finally {
      await deleteKeys(prefix);
    }
  };
  let child: ChildProcess | undefined;
  try {
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
    child = await startWorker("bullmq", prefix, concurrency);
    const worker = child;
    return {
      async call(n) {
        const job = await queue.add("roundtrip", { n });
        check(n, await job.waitUntilFinished(events, CALL_TIMEOUT_MS));
      },
      close: () => close(worker),
    };
  } catch (error) {
    await close(child);
    throw error;
  }
}
