/**
 * The workloads with workers in other processes, as a web process and worker processes would be
 * deployed: a producer in the benchmark's process, and worker processes of their own
 * (round-trip-worker.ts) on the same namespace. The round trip enqueues a job and awaits its result
 * (tickwork `queue.enqueueAndWait`, BullMQ `job.waitUntilFinished` with QueueEvents); graphile-worker
 * and pg-boss have no way to await a job's result, so they have no row (a caller would poll the job's
 * row). The producer workload only enqueues, at a fixed rate, and the worker process records when
 * each job started. The scale-out workload enqueues a backlog through the bulk API, then starts
 * several worker processes at once and counts what each ran.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { Queue, QueueEvents, createPostgresBackend, type PostgresConnectionOptions, type PostgresQueueBackend } from "bullmq";
import { Logger, makeWorkerUtils } from "graphile-worker";
import { PgBoss } from "pg-boss";
import { createTickwork } from "../../src/index.js";
import { postgres } from "../../src/store/postgres.js";
import { migratedPostgresSchema } from "../fixtures.js";
import type { Counts, RoundTripSystem } from "./adapter.js";
import { BULLMQ_UNFINISHED, bullmqJobs, bullmqPostgresConnection, type BullQueue } from "./bullmq.js";
import { graphileCounts } from "./graphile-worker.js";
import { pgBossCounts } from "./pg-boss.js";
import { DATABASE_URL, deleteKeys, dropSchema, redisConnection, uniqueName } from "./servers.js";

export const ROUND_TRIP_QUEUE = "roundtrip";
/** graphile-worker's task and pg-boss's queue in the worker process. */
export const ROUND_TRIP_TASK = ROUND_TRIP_QUEUE;
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

/** What a worker process says it did, in answer to "report". */
export interface WorkerReport {
  /** Enqueue-to-start latencies (ms) of the jobs carrying `at`. */
  latencies: number[];
  /** The job number of every handler call, in order. */
  ran: number[];
  /** wallClock() at its last handler call (0 before the first). */
  lastCall: number;
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
  /** The worker process's pid (its CPU time is read from /proc). */
  pids(): number[];
  close(): Promise<void>;
}

/** A backlog enqueued here and run by several worker processes of one system, on the one namespace. */
export interface ScaleOut extends Counts {
  /** One call of the system's bulk API. */
  enqueueBatch(payloads: RoundTripPayload[]): Promise<void>;
  /** Tells every worker process to start its workers, one message after another; resolves once each says they run. */
  start(): Promise<void>;
  /** Handler calls of each worker process, as it last said (at most 20 ms old); throws once one of them has exited. */
  calls(): number[];
  /** What each worker process did, asked once the backlog is done. */
  reports(): Promise<WorkerReport[]>;
  /** The worker processes' pids. */
  pids(): number[];
  close(): Promise<void>;
}

/** The messages a worker process sends. */
interface WorkerMessage {
  started?: number;
  calls?: number;
  report?: WorkerReport;
  running?: true;
}

/** A worker process, and what it last said of the jobs it ran. */
interface WorkerProcess {
  child: ChildProcess;
  /** Jobs carrying `at` it started. */
  started: number;
  /** Handler calls it made. */
  calls: number;
  /** Starts a held worker process's workers; resolves once it says they run. */
  start(): Promise<void>;
  report(): Promise<WorkerReport>;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Sends `request` to the worker process and resolves with the first answer `pick` finds a value in;
 * rejects when the process is gone or goes before it answers.
 */
function ask<T>(child: ChildProcess, system: RoundTripSystem, request: string, pick: (message: WorkerMessage) => T | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    const done = () => {
      child.off("message", onMessage);
      child.off("exit", onExit);
    };
    const onExit = () => {
      done();
      reject(new Error(`the ${system} worker process exited before it answered "${request}"`));
    };
    const onMessage = (message: WorkerMessage) => {
      const value = pick(message);
      if (value === undefined) return;
      done();
      resolve(value);
    };
    child.on("message", onMessage);
    child.once("exit", onExit);
    if (!child.connected) return onExit();
    // With a callback, a send on a closed channel rejects here instead of an 'error' event nobody handles.
    child.send(request, (error) => {
      if (!error) return;
      done();
      reject(error);
    });
  });
}

/**
 * Starts a worker process on `namespace` and resolves once it says it runs, or, `held`, once its
 * worker is configured and waits for `start()`.
 */
async function startWorker(system: RoundTripSystem, namespace: string, concurrency: number, held: boolean): Promise<WorkerProcess> {
  const script = fileURLToPath(new URL("./round-trip-worker.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", script, system, namespace, String(concurrency), held ? "held" : "now"], { stdio: ["ignore", "pipe", "inherit", "ipc"] });
  const worker: WorkerProcess = {
    child,
    started: 0,
    calls: 0,
    start: async () => void (await ask(child, system, "start", (message) => message.running)),
    report: () => ask(child, system, "report", (message) => message.report),
  };
  child.on("message", (message: WorkerMessage) => {
    if (message.started !== undefined) worker.started = message.started;
    if (message.calls !== undefined) worker.calls = message.calls;
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
  if (exited(child)) return;
  const exit = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exit;
  clearTimeout(timer);
}

function check(n: number, result: unknown): void {
  if ((result as RoundTripPayload | undefined)?.n !== n) throw new Error(`job ${n} came back with ${JSON.stringify(result)}`);
}

/**
 * A system's producer in the benchmark's process, on a fresh namespace of its own made ready for its
 * worker processes (tables, queue), with the system's own counts of its jobs.
 */
interface Producer extends Counts {
  /** The schema or Redis key prefix the worker processes work on. */
  namespace: string;
  /** Enqueues job `n` and resolves once its result is back (the systems that can await one, opened for results). */
  call?(n: number): Promise<void>;
  enqueue(payload: RoundTripPayload): Promise<void>;
  /** One call of the system's bulk API. */
  enqueueBatch(payloads: RoundTripPayload[]): Promise<void>;
  /** Closes the producer's connections and removes the namespace (the worker processes are stopped first). */
  close(): Promise<void>;
}

/** `results`: the producer awaits jobs' results (the round trip), which BullMQ needs an events reader for. */
function openProducer(system: RoundTripSystem, results: boolean): Promise<Producer> {
  switch (system) {
    case "tickwork":
      return tickworkProducer();
    case "bullmq":
      return bullmqProducer(results);
    case "bullmq-postgres":
      return bullmqPostgresProducer();
    case "graphile-worker":
      return graphileProducer();
    case "pg-boss":
      return pgBossProducer();
  }
}

/** Runs `open`; when it throws, `close` removes what it had made before the error goes on. */
async function orClose<T>(close: () => Promise<void>, open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}

/**
 * `system`'s producer with `processes` worker processes on its namespace, started together (their
 * start-up is slow: tsx and four systems' modules each); if one fails to start, the others are
 * stopped and the namespace removed before the error goes on.
 */
async function withWorkers(system: RoundTripSystem, processes: number, concurrency: number, { results, held }: { results: boolean; held: boolean }) {
  const producer = await openProducer(system, results);
  const started = await Promise.allSettled(Array.from({ length: processes }, () => startWorker(system, producer.namespace, concurrency, held)));
  const workers = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const close = async () => {
    try {
      await Promise.all(workers.map(stopWorker));
    } finally {
      await producer.close();
    }
  };
  const failed = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) {
    await close().catch(() => {});
    throw failed.reason;
  }
  return { producer, workers, close };
}

export async function openRoundTrip(system: RoundTripSystem, concurrency: number): Promise<RoundTrip> {
  const { producer, workers, close } = await withWorkers(system, 1, concurrency, { results: true, held: false });
  const worker = workers[0]!;
  return {
    call: (n) => (producer.call ? producer.call(n) : Promise.reject(new Error(`${system} cannot await a job's result`))),
    enqueue: (payload) => producer.enqueue(payload),
    started: () => worker.started,
    latencies: async () => (await worker.report()).latencies,
    pids: () => [worker.child.pid!],
    close,
  };
}

export async function openScaleOut(system: RoundTripSystem, processes: number, concurrency: number): Promise<ScaleOut> {
  // No events reader: nothing awaits a result, and reading every job's events would load this process.
  const { producer, workers, close } = await withWorkers(system, processes, concurrency, { results: false, held: true });
  return {
    enqueueBatch: (payloads) => producer.enqueueBatch(payloads),
    unfinished: () => producer.unfinished(),
    completed: () => producer.completed(),
    failed: () => producer.failed(),
    start: async () => void (await Promise.all(workers.map((worker) => worker.start()))),
    calls() {
      // A process that died mid-run is an error, not a run that merely did not finish in its budget.
      const gone = workers.find((worker) => exited(worker.child));
      if (gone) throw new Error(`a ${system} worker process exited (${gone.child.exitCode ?? gone.child.signalCode}) during the run`);
      return workers.map((worker) => worker.calls);
    },
    reports: () => Promise.all(workers.map((worker) => worker.report())),
    pids: () => workers.map((worker) => worker.child.pid!),
    close,
  };
}

/** graphile-worker: the schema migrated here, its runner in the worker processes, `addJob`/`addJobs` here. */
async function graphileProducer(): Promise<Producer> {
  const schema = uniqueName("gw_rt");
  const utils = await makeWorkerUtils({ connectionString: DATABASE_URL, schema, logger: quietGraphileLogger });
  let enqueued = 0;
  const close = async () => {
    try {
      await utils.release();
    } finally {
      await dropSchema(schema);
    }
  };
  return orClose(close, async () => {
    await utils.migrate();
    return {
      namespace: schema,
      async enqueue(payload) {
        await utils.addJob(ROUND_TRIP_TASK, payload);
        enqueued++;
      },
      async enqueueBatch(payloads) {
        await utils.addJobs(payloads.map((payload) => ({ identifier: ROUND_TRIP_TASK, payload })));
        enqueued += payloads.length;
      },
      ...graphileCounts(utils, schema, () => enqueued),
      close,
    };
  });
}

/** pg-boss: the schema and queue created here, its `work()` loops in the worker processes, `send`/`insert` here. */
async function pgBossProducer(): Promise<Producer> {
  const schema = uniqueName("pgboss_rt");
  const boss = new PgBoss({ connectionString: DATABASE_URL, schema });
  boss.on("error", () => {});
  const close = async () => {
    try {
      await boss.stop({ graceful: true, timeout: 5_000, close: true });
    } finally {
      await dropSchema(schema);
    }
  };
  return orClose(close, async () => {
    await boss.start();
    await boss.createQueue(ROUND_TRIP_TASK);
    return {
      namespace: schema,
      enqueue: async (payload) => void (await boss.send(ROUND_TRIP_TASK, payload)),
      enqueueBatch: async (payloads) => void (await boss.insert(ROUND_TRIP_TASK, payloads.map((data) => ({ data })))),
      ...pgBossCounts(boss, schema, ROUND_TRIP_TASK),
      close,
    };
  });
}

/** tickwork: the schema migrated here, enqueue-only here (the handler is the worker processes'). */
async function tickworkProducer(): Promise<Producer> {
  const { schema, side, count } = await migratedPostgresSchema("tw_rt");
  let stop = async () => {};
  const close = async () => {
    try {
      await stop();
    } finally {
      try {
        await side.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await side.end();
      }
    }
  };
  return orClose(close, async () => {
    const tw = await createTickwork({ store: postgres({ url: DATABASE_URL, schema }), migrate: false, handleSignals: false, logLevel: "warn" });
    stop = () => tw.stop();
    const queue = tw.queue<RoundTripPayload>(ROUND_TRIP_QUEUE, {});
    return {
      namespace: schema,
      async call(n) {
        check(n, await queue.enqueueAndWait({ n }, { timeout: CALL_TIMEOUT_MS }));
      },
      enqueue: async (payload) => void (await queue.enqueue(payload)),
      enqueueBatch: async (payloads) => void (await queue.enqueueMany(payloads.map((payload) => ({ payload })))),
      // tickwork's rows by status, as the in-process instances count them (bench/fixtures.ts `live`, `countByStatus`).
      unfinished: () => count(`SELECT (SELECT count(*) FROM tickwork_jobs WHERE status = 'pending') + (SELECT count(*) FROM tickwork_jobs WHERE status = 'running') AS n`),
      completed: () => count(`SELECT count(*) AS n FROM tickwork_jobs WHERE status = $1`, ["succeeded"]),
      failed: () => count(`SELECT count(*) AS n FROM tickwork_jobs WHERE status = $1`, ["failed"]),
      close,
    };
  });
}

/** BullMQ: the queue here (and, for results, a QueueEvents reader), its Worker in the worker processes. */
async function bullmqProducer(results: boolean): Promise<Producer> {
  const prefix = uniqueName("twbench_rt");
  const queue = new Queue<RoundTripPayload>(ROUND_TRIP_QUEUE, { connection: redisConnection(), prefix });
  const events = results ? new QueueEvents(ROUND_TRIP_QUEUE, { connection: redisConnection(), prefix }) : undefined;
  const close = async () => {
    try {
      await events?.close();
      await queue.obliterate({ force: true });
      await queue.close();
    } finally {
      await deleteKeys(prefix);
    }
  };
  return orClose(close, async () => {
    await Promise.all([queue.waitUntilReady(), events?.waitUntilReady()]);
    return {
      namespace: prefix,
      ...(events
        ? {
            async call(n: number) {
              const job = await queue.add("roundtrip", { n });
              check(n, await job.waitUntilFinished(events, CALL_TIMEOUT_MS));
            },
          }
        : {}),
      ...bullmqQueueSide(queue),
      close,
    };
  });
}

/** A BullMQ producer's enqueues and counts, whichever backend holds its queue. */
function bullmqQueueSide(queue: BullQueue<RoundTripPayload>): Pick<Producer, "enqueue" | "enqueueBatch" | "unfinished" | "completed" | "failed"> {
  return {
    enqueue: async (payload) => void (await queue.add("roundtrip", payload)),
    enqueueBatch: async (payloads) => void (await queue.addBulk(payloads.map((data) => ({ name: "roundtrip", data })))),
    unfinished: () => bullmqJobs(queue, ...BULLMQ_UNFINISHED),
    // The worker processes run at BullMQ's defaults, which keep completed jobs among the completed.
    completed: () => bullmqJobs(queue, "completed"),
    failed: () => bullmqJobs(queue, "failed"),
  };
}

/** BullMQ on its PostgreSQL backend: the schema migrated here, its workers in the worker processes. No events reader: it has no round-trip row. */
async function bullmqPostgresProducer(): Promise<Producer> {
  const schema = uniqueName("twbench_bullpg_rt");
  const queue = new Queue<RoundTripPayload, unknown, string, RoundTripPayload, unknown, string, PostgresQueueBackend, PostgresConnectionOptions>(
    ROUND_TRIP_QUEUE,
    { connection: bullmqPostgresConnection(schema, true) },
    createPostgresBackend,
  );
  const close = async () => {
    try {
      await queue.obliterate({ force: true });
      await queue.close();
    } finally {
      await dropSchema(schema);
    }
  };
  return orClose(close, async () => {
    await queue.waitUntilReady();
    return {
      namespace: schema,
      ...bullmqQueueSide(queue),
      close,
    };
  });
}
