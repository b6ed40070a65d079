import type { LogEvent } from "../core/logger.js";
import type { ThroughputSnapshot } from "./api/types.js";

/** Job attempts that finished: succeeded, failed with a retry scheduled, or failed for good. */
const FINISHED = new Set(["job.succeeded", "job.retry_scheduled", "job.failed"]);
/** The finished attempts that failed, retried or not: a queue's failure rate is these over all finished. */
const FAILED = new Set(["job.retry_scheduled", "job.failed"]);

/** One queue's counts: a ring of buckets, each slot holding the bucket it counts (-1: none yet). */
interface Ring {
  bucket: Float64Array;
  finished: Uint32Array;
  failed: Uint32Array;
}

/**
 * Per-queue counts of finished job attempts, and of the failed ones among them, in fixed time
 * buckets, in this process's memory, fed by the engine's events: constant cost per event and per
 * read, where asking the store would scan every job finished in the window. Only jobs run by this
 * process are counted; across processes, sum `tickwork_job_succeeded_total` and friends from /metrics.
 */
export class Throughput {
  private readonly perQueue = new Map<string, Ring>();

  constructor(
    readonly bucketMs = 5_000,
    readonly buckets = 120,
  ) {}

  observe(event: LogEvent): void {
    if (!FINISHED.has(event.event) || typeof event.queue !== "string") return;
    const index = Math.floor(event.time / this.bucketMs);
    let ring = this.perQueue.get(event.queue);
    if (!ring) {
      ring = { bucket: new Float64Array(this.buckets).fill(-1), finished: new Uint32Array(this.buckets), failed: new Uint32Array(this.buckets) };
      this.perQueue.set(event.queue, ring);
    }
    const slot = index % this.buckets;
    if (ring.bucket[slot] !== index) {
      ring.bucket[slot] = index;
      ring.finished[slot] = 0;
      ring.failed[slot] = 0;
    }
    ring.finished[slot]! += 1;
    if (FAILED.has(event.event)) ring.failed[slot]! += 1;
  }

  snapshot(now: number): ThroughputSnapshot {
    const last = Math.floor(now / this.bucketMs);
    const first = last - this.buckets + 1;
    const queues: Record<string, number[]> = {};
    const failed: Record<string, number[]> = {};
    const read = (ring: Ring, counts: Uint32Array) =>
      Array.from({ length: this.buckets }, (_, k) => {
        const slot = (first + k) % this.buckets;
        return ring.bucket[slot] === first + k ? counts[slot]! : 0;
      });
    for (const [queue, ring] of this.perQueue) {
      queues[queue] = read(ring, ring.finished);
      failed[queue] = read(ring, ring.failed);
    }
    return { bucketMs: this.bucketMs, start: first * this.bucketMs, queues, failed };
  }
}
