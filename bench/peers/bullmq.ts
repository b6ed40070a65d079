/**
 * BullMQ in the side-by-side benchmark, on Redis (a dedicated key prefix per measurement, the queue
 * obliterated and every key under the prefix deleted after) and on its PostgreSQL backend (BullMQ 6,
 * `createPostgresBackend`: a schema of its own per measurement, migrated by BullMQ on connect and
 * dropped after).
 *
 * - defaults: `new Worker(name, processor, { concurrency })`, finished jobs kept (BullMQ's default);
 * - tuned: `removeOnComplete: true` (its production guide's advice: a completed job is deleted in
 *   the same step that completes it, instead of piling up among the completed).
 * The worker fetches the next job in the same step that completes the previous one and waits on a
 * blocking call when idle (Redis: a blocking pop; PostgreSQL: LISTEN), so there is no polling
 * setting to tune. Note the durability difference on Redis: it runs without persistence (see the
 * report's server settings), while the PostgreSQL systems commit to disk.
 * Bulk enqueue is `addBulk`; single enqueues are `add`. Completed jobs are counted by the worker's
 * `completed` event (emitted after the job is moved), and with defaults checked against BullMQ's
 * own count of completed jobs.
 */
import { Queue, Worker, createPostgresBackend, type JobProgress, type JobType, type PostgresConnectionOptions, type PostgresQueueBackend } from "bullmq";
import type { Payload, Setting, System } from "./adapter.js";
import { DATABASE_URL, deleteKeys, dropSchema, packageVersion, redisConnection, uniqueName } from "./servers.js";
import { reportProblem } from "./workloads.js";

const QUEUE = "bench";
/** The states of a job not yet completed or failed. */
export const BULLMQ_UNFINISHED: readonly JobType[] = ["waiting", "active", "delayed", "prioritized", "waiting-children"];

/** What a measurement uses of a queue, whichever backend holds it. */
export interface BullQueue<T = Payload> {
  on(event: "error", listener: (error: Error) => void): unknown;
  waitUntilReady(): Promise<unknown>;
  addBulk(jobs: { name: string; data: T }[]): Promise<unknown>;
  add(name: string, data: T): Promise<unknown>;
  getJobCounts(...types: JobType[]): Promise<Record<string, number>>;
  obliterate(opts: { force: boolean }): Promise<void>;
  close(): Promise<void>;
}

/** What a measurement uses of a worker, whichever backend holds its jobs. */
interface BullWorker {
  on(event: "completed" | "failed", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  waitUntilReady(): Promise<unknown>;
  close(): Promise<void>;
}

/** Jobs of the queue in these states, summed from BullMQ's own counts (here and in round-trip.ts). */
export async function bullmqJobs(queue: Pick<BullQueue<unknown>, "getJobCounts">, ...types: JobType[]): Promise<number> {
  return Object.values(await queue.getJobCounts(...types)).reduce((a, b) => a + b, 0);
}

/** Where BullMQ keeps its jobs: the machine's Redis, or its PostgreSQL backend on the shared server. */
export type BullmqStore = "Redis" | "PostgreSQL";

/**
 * BullMQ's PostgreSQL backend on the shared server, in `schema` (the schema rides on the connection
 * config); `migrate` creates BullMQ's tables there on connect.
 */
export function bullmqPostgresConnection(schema: string, migrate: boolean) {
  return { connectionString: DATABASE_URL, schema, migrate };
}

/** One measurement's namespace on `store`: how its queue and worker connect, and how it is removed. */
function namespace(store: BullmqStore): {
  queue(opts: { removeOnComplete?: boolean }): BullQueue;
  worker(processor: (data: Payload) => Promise<void>, concurrency: number): BullWorker;
  remove(): Promise<void>;
} {
  const defaults = (opts: { removeOnComplete?: boolean }) => (opts.removeOnComplete ? { defaultJobOptions: { removeOnComplete: true } } : {});
  if (store === "Redis") {
    const prefix = uniqueName("twbench_bull");
    return {
      queue: (opts: { removeOnComplete?: boolean }) => new Queue<Payload>(QUEUE, { connection: redisConnection(), prefix, ...defaults(opts) }),
      worker: (processor: (data: Payload) => Promise<void>, concurrency: number) =>
        new Worker<Payload>(QUEUE, async (job) => processor(job.data), { connection: redisConnection(), prefix, concurrency }),
      remove: async () => void (await deleteKeys(prefix)),
    };
  }
  // The queue, opened first, migrates the schema; the worker, started inside the timed span, does not.
  const schema = uniqueName("twbench_bullpg");
  return {
    queue: (opts: { removeOnComplete?: boolean }) =>
      new Queue<Payload, unknown, string, Payload, unknown, string, PostgresQueueBackend, PostgresConnectionOptions>(
        QUEUE,
        { connection: bullmqPostgresConnection(schema, true), ...defaults(opts) },
        createPostgresBackend,
      ),
    worker: (processor: (data: Payload) => Promise<void>, concurrency: number) =>
      new Worker<Payload, unknown, string, PostgresQueueBackend, JobProgress, PostgresConnectionOptions>(QUEUE, async (job) => processor(job.data), { connection: bullmqPostgresConnection(schema, false), concurrency }, createPostgresBackend),
    remove: () => dropSchema(schema),
  };
}

export function bullmqSystem(setting: Setting, store: BullmqStore = "Redis"): System {
  // The Redis rows keep the ids of every earlier run's results.
  const id = store === "Redis" ? `BullMQ.${setting}` : `BullMQ.postgres.${setting}`;
  const tuned = setting === "tuned";
  return {
    id,
    name: "BullMQ",
    version: packageVersion("bullmq"),
    backend: store,
    setting,
    peer: true,
    // The worker process of the workloads across processes runs with defaults (round-trip-worker.ts).
    ...(tuned ? {} : { workerProcess: store === "Redis" ? ("bullmq" as const) : ("bullmq-postgres" as const) }),
    settings: (concurrency) => ({ concurrency, ...(tuned ? { removeOnComplete: true } : {}) }),

    async open({ concurrency, onJob }) {
      const space = namespace(store);
      const queue = space.queue({ removeOnComplete: tuned });
      queue.on("error", (error) => reportProblem(id, `queue error: ${error.message.slice(0, 80)}`));
      try {
        await queue.waitUntilReady();
      } catch (error) {
        await queue.close().catch(() => {});
        await space.remove();
        throw error;
      }
      let worker: BullWorker | undefined;
      let completedEvents = 0;
      let failedEvents = 0;

      return {
        async enqueueBatch(payloads) {
          await queue.addBulk(payloads.map((data) => ({ name: "noop", data })));
        },
        async enqueue(payload) {
          await queue.add("noop", payload);
        },
        async startWorkers() {
          worker = space.worker(async (data) => {
            await onJob(data);
          }, concurrency);
          worker.on("completed", () => completedEvents++);
          worker.on("failed", () => failedEvents++);
          worker.on("error", (error) => reportProblem(id, `worker error: ${error.message.slice(0, 80)}`));
          await worker.waitUntilReady();
        },
        unfinished: () => bullmqJobs(queue, ...BULLMQ_UNFINISHED),
        async completed() {
          if (tuned) return completedEvents;
          const stored = await bullmqJobs(queue, "completed");
          if (stored !== completedEvents) throw new Error(`BullMQ: ${completedEvents} completed events but ${stored} jobs in the completed set`);
          return stored;
        },
        failed: async () => Math.max(failedEvents, await bullmqJobs(queue, "failed")),
        async stopWorkers() {
          const w = worker;
          worker = undefined;
          if (w) await w.close();
        },
        async dispose() {
          try {
            await queue.obliterate({ force: true });
            await queue.close();
          } finally {
            await space.remove();
          }
        },
      };
    },
  };
}
