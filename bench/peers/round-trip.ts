/**
 * The two halves of the workloads with the worker in another process, as a web process and a worker
 * process would be deployed: a producer in the benchmark's process, and a worker in a child process
 * of its own (round-trip-worker.ts). The round trip enqueues a job and awaits its result (tickwork
 * `queue.enqueueAndWait`, BullMQ `job.waitUntilFinished` with QueueEvents); graphile-worker and
 * pg-boss have no way to await a job's result, so they have no row (a caller would poll the job's
 * row). The producer workload only enqueues, at a fixed rate, and the worker process records when
 * each job started.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { Queue, QueueEvents } from "bullmq";
import { Logger, makeWorkerUtils } from "graphile-worker";
import { PgBoss } from "pg-boss";
import { createTickwork } from "../../src/index.js";
import { postgres } from "../../src/store/postgres.js";
import { migratedPostgresSchema } from "../fixtures.js";
import type { RoundTripSystem } from "./adapter.js";
import { DATABASE_URL, deleteKeys, dropSchema, redisConnection, uniqueName } from "./servers.js";

export const ROUND_TRIP_QUEUE = "roundtrip";
/** graphile-worker's info lines (worker started...) say nothing the benchmark needs. */
export const quietGraphileLogger = new Logger(() => () => {});

/** Longest a single round trip may take before the measurement fails. */
const CALL_TIMEOUT_MS = 15_000;

export interface RoundTripPayload {
  n: number;
  /** The producer's wallClock() at the enqueue call: the worker process records the job's enqueue-to-start latency. */
  at?: number;
}

/**
 * Milliseconds since the epoch with a fraction, comparable between processes of one machine (each
 * process's time origin is read from the same system clock), unlike performance.now().
 */
export function wallClock(): number {
  return performance.timeOrigin + performance.now();
}

/** A producer with a worker in another process. */
export interface RoundTrip {
  /** Enqueues job `n` and resolves once its result (`{ n }`) is back. */
  call(n: number): Promise<void>;
  /** Enqueues a job and resolves once the enqueue call returns. */
  enqueue(payload: RoundTripPayload): Promise<void>;
  /** Jobs carrying `at` the worker process started, as it last said (at most 20 ms old). */
  started(): number;
  /** The enqueue-to-start latencies (ms) the worker process recorded. */
  latencies(): Promise<number[]>;
  close(): Promise<void>;
}

/** The worker process, and what it said of the jobs it started. */
interface WorkerProcess {
  child: ChildProcess;
  started: number;
  latencies(): Promise<number[]>;
}


/** graphile-worker's task and pg-boss's queue in the worker process. */
export const ROUND_TRIP_TASK = ROUND_TRIP_QUEUE;

/** Starts the worker process on `namespace` and resolves once it says it runs. */
async function startWorker(system: RoundTripSystem, namespace: string, concurrency: number): Promise<WorkerProcess> {
  const script = fileURLToPath(new URL("./round-trip-worker.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", script, system, namespace, String(concurrency)], { stdio: ["ignore", "pipe", "inherit", "ipc"] });
  const worker: WorkerProcess = {
    child,
    started: 0,
    latencies: () =>
      new Promise((resolve, reject) => {
        const onMessage = (message: { latencies?: number[] }) => {
          if (!message.latencies) return;
          child.off("message", onMessage);
          resolve(message.latencies);
        };
        child.on("message", onMessage);
        child.once("exit", () => reject(new Error(`the ${system} worker process exited before it reported`)));
        child.send("report");
      }),
  };
  child.on("message", (message: { started?: number }) => {
    if (message.started !== undefined) worker.started = message.started;
  });
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
  return worker;
}

async function stopWorker({ child }: WorkerProcess): Promise<void> {
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
  switch (system) {
    case "tickwork":
      return tickworkRoundTrip(concurrency);
    case "bullmq":
      return bullmqRoundTrip(concurrency);
    case "graphile-worker":
      return graphileRoundTrip(concurrency);
    case "pg-boss":
      return pgBossRoundTrip(concurrency);
  }
}

/** A peer's producer here, on a schema of its own, as enqueueOnly's workload needs it. */
interface PeerProducer {
  /** Creates what the worker process expects on the schema (tables, queue). */
  prepare(): Promise<void>;
  enqueue(payload: RoundTripPayload): Promise<void>;
  /** Closes the producer's connections (the worker process is stopped first). */
  close(): Promise<void>;
}

/**
 * A producer that can only enqueue (its system has no way to await a job's result), with the
 * system's worker process on a fresh schema; the schema is dropped when it closes or fails to start.
 */
async function enqueueOnly(system: "graphile-worker" | "pg-boss", concurrency: number, open: (schema: string) => PeerProducer): Promise<RoundTrip> {
  const schema = uniqueName(system === "pg-boss" ? "pgboss_rt" : "gw_rt");
  const producer = open(schema);
  let child: WorkerProcess | undefined;
  const close = async () => {
    try {
      if (child) await stopWorker(child);
      await producer.close();
    } finally {
      await dropSchema(schema);
    }
  };
  try {
    await producer.prepare();
    child = await startWorker(system, schema, concurrency);
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
  const worker = child;
  return {
    call: () => Promise.reject(new Error(`${system} cannot await a job's result`)),
    enqueue: (payload) => producer.enqueue(payload),
    started: () => worker.started,
    latencies: () => worker.latencies(),
    close,
  };
}

/** graphile-worker: the schema migrated here, its runner in the worker process, `addJob` here. */
function graphileRoundTrip(concurrency: number): Promise<RoundTrip> {
  return enqueueOnly("graphile-worker", concurrency, (schema) => {
    const utils = makeWorkerUtils({ connectionString: DATABASE_URL, schema, logger: quietGraphileLogger });
    return {
      prepare: async () => (await utils).migrate(),
      enqueue: async (payload) => void (await (await utils).addJob(ROUND_TRIP_TASK, payload)),
      close: async () => (await utils).release(),
    };
  });
}

/** pg-boss: the schema and queue created here, its `work()` loops in the worker process, `send` here. */
function pgBossRoundTrip(concurrency: number): Promise<RoundTrip> {
  return enqueueOnly("pg-boss", concurrency, (schema) => {
    const boss = new PgBoss({ connectionString: DATABASE_URL, schema });
    boss.on("error", () => {});
    return {
      async prepare() {
        await boss.start();
        await boss.createQueue(ROUND_TRIP_TASK);
      },
      enqueue: async (payload) => void (await boss.send(ROUND_TRIP_TASK, payload)),
      close: () => boss.stop({ graceful: true, timeout: 5_000, close: true }),
    };
  });
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
  let child: WorkerProcess | undefined;
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
      async enqueue(payload) {
        await queue.enqueue(payload);
      },
      started: () => worker.started,
      latencies: () => worker.latencies(),
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
  const close = async (child: WorkerProcess | undefined) => {
    try {
      await events.close();
      if (child) await stopWorker(child);
      await queue.obliterate({ force: true });
      await queue.close();
    } finally {
      await deleteKeys(prefix);
    }
  };
  let child: WorkerProcess | undefined;
  try {
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
    child = await startWorker("bullmq", prefix, concurrency);
    const worker = child;
    return {
      async call(n) {
        const job = await queue.add("roundtrip", { n });
        check(n, await job.waitUntilFinished(events, CALL_TIMEOUT_MS));
      },
      async enqueue(payload) {
        await queue.add("roundtrip", payload);
      },
      started: () => worker.started,
      latencies: () => worker.latencies(),
      close: () => close(worker),
    };
  } catch (error) {
    await close(child);
    throw error;
  }
}
