import type { Clock } from "../../core/clock.js";
import type { Logger } from "../../core/logger.js";
import { runOnFailed } from "./executor.js";
import type { QueueStore } from "../store/store.js";
import type { QueueWorker } from "./worker.js";

/** Jobs rescued per pass; a larger backlog of lapsed leases is taken over the following passes. */
const RESCUE_BATCH = 1_000;

/**
 * Returns the jobs of dead or hung workers to the queue: a running job whose lease lapsed goes back to
 * pending with its attempt counted, or to failed when that was its last attempt. A process rescues
 * only the queues it has handlers for: the one that rescues a job can run it again and run its
 * `onFailed` hook.
 */
export class Rescuer {
  constructor(
    private readonly deps: {
      store: QueueStore;
      clock: Clock;
      logger: Logger;
      /** This process's workers by queue: the queues it rescues, their hooks, and whom to wake. */
      workers: ReadonlyMap<string, QueueWorker>;
    },
  ) {}

  /** One pass: rescues what lapsed, logs each job, runs the hook of each that failed, wakes the workers of the rest. */
  async rescue(): Promise<void> {
    const { store, clock, logger, workers } = this.deps;
    const rescued = await store.rescueExpired({ queues: [...workers.keys()], now: clock.now(), limit: RESCUE_BATCH });
    for (const job of rescued) {
      logger.warn("job.lease_expired", { queue: job.queue, id: job.id, attempt: job.attempts, attempts: job.attempts, maxAttempts: job.maxAttempts, status: job.status });
      if (job.status !== "failed") continue;
      logger.error("job.failed", { queue: job.queue, id: job.id, attempt: job.attempts, attempts: job.attempts, maxAttempts: job.maxAttempts, error: "lease expired on the last attempt" });
      const worker = workers.get(job.queue);
      const failed = worker?.config.onFailed ? await store.get({ id: job.id }) : null;
      if (worker && failed) await runOnFailed(worker.config, logger, failed, failed.lastError ?? "lease expired");
    }
    for (const queue of new Set(rescued.filter((j) => j.status === "pending").map((j) => j.queue))) workers.get(queue)?.wake();
  }
}
