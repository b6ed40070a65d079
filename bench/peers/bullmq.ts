/**
 * BullMQ on Redis in the side-by-side benchmark: a dedicated key prefix per measurement, the queue
 * obliterated and every key under the prefix deleted after.
 *
 * - defaults: `new Worker(name, processor, { concurrency })`, finished jobs kept (BullMQ's default);
 * - tuned: `removeOnComplete: true` (its production guide's advice: a completed job is deleted in
 *   the same script that completes it, instead of piling up in the completed set).
 * The worker fetches the next job in the same script that completes the previous one and waits on
 * a blocking Redis call when idle, so there is no polling setting to tune. Note the durability
 * difference: this Redis runs without persistence (see the report's server settings), while the
 * PostgreSQL systems commit to disk.
 * Bulk enqueue is `addBulk` (one MULTI per call); single enqueues are `add`. Completed jobs are
 * counted by the worker's `completed` event (emitted after the job is moved in Redis), and with
 * defaults checked against the completed set.
 */
import { Queue, Worker, type JobType } from "bullmq";
import type { Payload, Setting, System } from "./adapter.js";
import { deleteKeys, packageVersion, redisConnection, uniqueName } from "./servers.js";
import { reportProblem } from "./workloads.js";

const QUEUE = "bench";
/** The states of a job not yet completed or failed. */
export const BULLMQ_UNFINISHED: readonly JobType[] = ["waiting", "active", "delayed", "prioritized", "waiting-children"];

/** Jobs of the queue in these states, summed from BullMQ's own counts (here and in round-trip.ts). */
export async function bullmqJobs(queue: Pick<Queue, "getJobCounts">, ...types: JobType[]): Promise<number> {
  return Object.values(await queue.getJobCounts(...types)).reduce((a, b) => a + b, 0);
}

export function bullmqSystem(setting: Setting): System {
  const id = `BullMQ.${setting}`;
  const tuned = setting === "tuned";
  return {
    id,
    name: "BullMQ",
    version: packageVersion("bullmq"),
    backend: "Redis",
    setting,
    peer: true,
    // The worker process of the workloads across processes runs with defaults (round-trip-worker.ts).
    ...(tuned ? {} : { workerProcess: "bullmq" as const }),
    settings: (concurrency) => ({ concurrency, ...(tuned ? { removeOnComplete: true } : {}) }),

    async open({ concurrency, onJob }) {
      const prefix = uniqueName("twbench_bull");
      const queue = new Queue<Payload>(QUEUE, { connection: redisConnection(), prefix, ...(tuned ? { defaultJobOptions: { removeOnComplete: true } } : {}) });
      queue.on("error", (error) => reportProblem(id, `queue error: ${error.message.slice(0, 80)}`));
      await queue.waitUntilReady();
      let worker: Worker<Payload> | undefined;
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
          worker = new Worker<Payload>(
            QUEUE,
            async (job) => {
              await onJob(job.data);
            },
            { connection: redisConnection(), prefix, concurrency },
          );
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
            await deleteKeys(prefix);
          }
        },
      };
    },
  };
}
