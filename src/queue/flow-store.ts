import type { FlowSql } from "./flow-sql.js";
import type { KeyedSql } from "./keyed-sql.js";
import type { Job } from "./job.js";
import type { ClaimParams, ClaimResult, QueueStore } from "./store.js";

type FlowOperations = "claim" | "takeTokens" | "pauseBucket" | "resumeBucket" | "pruneBuckets" | "bucketStates" | "setPaused" | "pauses" | "groupCounts" | "holdSlots";

/**
 * The flow-control half of a queue store (and its keyed enqueues with a mode), the same on both dialects: each dialect's store extends it
 * with its own plain claim (`claimDue`), which a queue without shared limits keeps using unchanged.
 */
export abstract class FlowControlledStore implements Pick<QueueStore, FlowOperations | "insertKeyed" | "pruneKeys"> {
  constructor(
    protected readonly flow: FlowSql,
    private readonly keyed: KeyedSql,
  ) {}

  insertKeyed(params: Parameters<QueueStore["insertKeyed"]>[0]) {
    return this.keyed.insertKeyed(params);
  }

  pruneKeys(params: Parameters<QueueStore["pruneKeys"]>[0]) {
    return this.keyed.pruneKeys(params);
  }

  abstract claimDue(params: Parameters<QueueStore["claimDue"]>[0]): Promise<Job[]>;

  async claim(params: ClaimParams): Promise<ClaimResult> {
    const { limits } = params;
    if (limits) return this.flow.claim({ ...params, limits });
    const jobs = await this.claimDue(params);
    // The plain claim skips a paused queue; only an empty answer needs telling apart from an empty queue.
    const paused = jobs.length === 0 && (await this.flow.isPaused(params.queue));
    return { jobs, paused, held: paused ? "paused" : null, retryAt: null, cursor: null };
  }

  takeTokens(params: Parameters<QueueStore["takeTokens"]>[0]) {
    return this.flow.takeTokens(params);
  }

  pauseBucket(params: Parameters<QueueStore["pauseBucket"]>[0]) {
    return this.flow.pauseBucket(params);
  }

  resumeBucket(params: Parameters<QueueStore["resumeBucket"]>[0]) {
    return this.flow.resumeBucket(params);
  }

  pruneBuckets(params: Parameters<QueueStore["pruneBuckets"]>[0]) {
    return this.flow.pruneBuckets(params);
  }

  bucketStates(params: Parameters<QueueStore["bucketStates"]>[0]) {
    return this.flow.bucketStates(params);
  }

  setPaused(params: Parameters<QueueStore["setPaused"]>[0]) {
    return this.flow.setPaused(params);
  }

  pauses(params: Parameters<QueueStore["pauses"]>[0]) {
    return this.flow.pauses(params);
  }

  holdSlots(params: Parameters<QueueStore["holdSlots"]>[0]) {
    return this.flow.holdSlots(params);
  }

  groupCounts(params: Parameters<QueueStore["groupCounts"]>[0]) {
    return this.flow.groupCounts(params);
  }
}
