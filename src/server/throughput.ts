import type { LogEvent } from "../core/logger.js";
import type { ThroughputSnapshot } from "./api/types.js";

/** Job attempts that finished: succeeded, failed with a retry scheduled, or failed for good. */
const FINISHED = new Set(["job.succeeded", "job.retry_scheduled", "job.failed"]);

/**
 * Per-queue counts of finished job attempts in fixed time buckets, in this process's memory, fed by
 * the engine's events: constant cost per event and per read, where asking the store would scan every
 * job finished in the window. Only jobs run by this process are counted; across processes, sum
 * `tickwork_jobs_succeeded_total` and friends from /metrics.
 */
export class Throughput {
  private readonly perQueue = new Map<string, { bucket: Float64Array; count: Uint32Array }>();

  constructor(
    readonly bucketMs = 5_000,
    readonly buckets = 120,
  ) {}

  observe(event: LogEvent): void {
    if (!FINISHED.has(event.event) || typeof event.queue !== "string") return;
    const index = Math.floor(event.time / this.bucketMs);
    let ring = this.perQueue.get(event.queue);
    if (!ring) this.perQueue.set(event.queue, (ring = { bucket: new Float64Array(this.buckets).fill(-1), count: new Uint32Array(this.buckets) }));
    const slot = index % this.buckets;
    if (ring.bucket[slot] !== index) {
      ring.bucket[slot] = index;
      ring.count[slot] = 0;
    }
    ring.count[slot]! += 1;
  }

  snapshot(now: number): ThroughputSnapshot {
    const last = Math.floor(now / this.bucketMs);
    const first = last - this.buckets + 1;
    const queues: Record<string, number[]> = {};
    for (const [queue, ring] of this.perQueue) {
      queues[queue] = Array.from({ length: this.buckets }, (_, k) => {
        const slot = (first + k) % this.buckets;
        return ring.bucket[slot] === first + k ? ring.count[slot]! : 0;
      });
    }
    return { bucketMs: this.bucketMs, start: first * this.bucketMs, queues };
  }
}
