/**
 * tickwork in the side-by-side benchmark, on PostgreSQL (a fresh schema per measurement) and on a
 * SQLite file in WAL mode (a fresh temp file), through the same fixtures as `npm run bench`.
 *
 * - defaults: `tw.queue(name, { concurrency, handler })`: without a `batchSize` the claim batch
 *   adapts (src/queue/options.ts, QueueWorker): it starts at 2 x concurrency and grows while the
 *   worker starves for jobs;
 * - tuned: a fixed `batchSize` of 500 (jobs claimed per round trip, the rest prefetched), which turns
 *   the adaptation off.
 * Per-job events are debug events, below the default level; warnings and errors are counted.
 * Single enqueues go through the engine that runs the worker, so the enqueue wakes it in memory,
 * as in any process that both enqueues and works.
 */
import { createTickwork } from "../../src/index.js";
import { postgresBackend, sqliteBackend } from "../fixtures.js";
import type { Payload, Setting, System } from "./adapter.js";
import { packageVersion } from "./servers.js";
import { reportProblem } from "./workloads.js";

const QUEUE = "bench";
export const TICKWORK_TUNED_BATCH = 500;

export function tickworkSystem(store: "PostgreSQL" | "SQLite", setting: Setting): System {
  const fixtures = store === "PostgreSQL" ? postgresBackend : sqliteBackend;
  const id = `tickwork.${store === "PostgreSQL" ? "postgres" : "sqlite"}.${setting}`;
  const batchSize = setting === "tuned" ? TICKWORK_TUNED_BATCH : undefined;
  return {
    id,
    name: "tickwork",
    version: packageVersion("tickwork"),
    backend: store === "PostgreSQL" ? "PostgreSQL" : "SQLite (file, WAL)",
    setting,
    peer: false,
    // The worker process of the workloads across processes runs with defaults (round-trip-worker.ts).
    ...(store === "PostgreSQL" && setting === "defaults" ? { workerProcess: "tickwork" as const } : {}),
    settings: (concurrency) => ({ concurrency, ...(batchSize ? { batchSize } : {}) }),

    async open({ concurrency, onJob }) {
      const fx = await fixtures.fresh();
      const tw = await createTickwork({
        store: fx.open(),
        handleSignals: false,
        migrate: false,
        logger: (event) => {
          // The operation and the error text say which statement failed, not only that one did.
          const what = typeof event.operation === "string" ? `${event.event} (${event.operation}: ${String(event.error).slice(0, 120)})` : event.event;
          if (event.level !== "debug" && event.level !== "info") reportProblem(id, what);
        },
      }).catch(async (error: unknown) => {
        await fx.drop();
        throw error;
      });
      const queue = tw.queue<Payload>(QUEUE, { concurrency, ...(batchSize ? { batchSize } : {}), handler: (job) => onJob(job.payload) });
      return {
        async enqueueBatch(payloads) {
          await queue.enqueueMany(payloads.map((payload) => ({ payload })));
        },
        async enqueue(payload) {
          await queue.enqueue(payload);
        },
        startWorkers: () => tw.start(),
        unfinished: () => fx.live(),
        completed: () => fx.countByStatus("succeeded"),
        failed: () => fx.countByStatus("failed"),
        // tw.stop() is terminal and closes the store, so it waits for dispose.
        stopWorkers: async () => {},
        async dispose() {
          try {
            await tw.stop();
          } finally {
            await fx.drop();
          }
        },
      };
    },
  };
}
