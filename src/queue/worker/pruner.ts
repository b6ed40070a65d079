import type { Logger } from "../../core/logger.js";
import type { JobStatus } from "../job.js";
import type { QueueStore } from "../store/store.js";

/** How long finished jobs are kept, by how they finished; `false` keeps them forever. */
export type Retention = Record<Extract<JobStatus, "succeeded" | "failed" | "cancelled">, number | false>;

/** Rows deleted per statement, so one prune never holds the table for long. */
const PRUNE_BATCH = 1_000;
const BUCKET_IDLE_MS = 3_600_000;

/** Deletes finished jobs past their retention, so the jobs table grows with the live work, not with history. */
export class Pruner {
  constructor(private readonly deps: { store: QueueStore; logger: Logger; retention: Retention }) {}

  /** Deletes, batch after batch until one comes back short, every job that finished longer ago than its status keeps. */
  async prune(now: number): Promise<void> {
    const { store, logger, retention } = this.deps;
    for (const status of ["succeeded", "failed", "cancelled"] as const) {
      const keep = retention[status];
      if (keep === false) continue;
      let pruned = 0;
      for (let n = PRUNE_BATCH; n === PRUNE_BATCH; pruned += n) {
        n = await store.pruneFinished({ status, before: now - keep, limit: PRUNE_BATCH });
      }
      if (pruned) logger.info("jobs.pruned", { status, count: pruned, olderThanMs: keep });
    }
    // A bucket whose every token came back long ago, and that no pause holds, is a full bucket: its
    // row says nothing a missing row does not. An hour's margin keeps the delete well clear of a
    // claim that is about to lock the row (it would then merely find it missing, and full).
    const buckets = await store.pruneBuckets({ before: now - BUCKET_IDLE_MS, limit: PRUNE_BATCH });
    if (buckets) logger.debug("limits.pruned", { count: buckets });
    // A key's period that ended says nothing a missing row does not either.
    const keys = await store.pruneKeys({ before: now, limit: PRUNE_BATCH });
    if (keys) logger.debug("keys.pruned", { count: keys });
    const counters = await store.compactCounts();
    if (counters) logger.debug("counts.compacted", { count: counters });
  }
}
