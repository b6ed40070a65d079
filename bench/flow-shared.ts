/**
 * What the flow-control benchmark (`flow.ts`) and its worker processes (`flow-worker.ts`) agree on:
 * the queue's declaration, the jobs' payload and the worker's configuration.
 */
import type { QueueOptions } from "../src/index.js";
import type { Target } from "../test/crash/fixtures/target.js";

/** A job: its number, and the index of the group it belongs to (also carried by ungrouped jobs, for the fairness tally). */
export interface FlowPayload {
  n: number;
  g: number;
}

/** The queue's limits in one variant of a comparison; none at all is the plain queue. */
export interface FlowLimits {
  globalConcurrency?: number;
  /** Set: the queue is grouped (each job's group from its payload) with this many running per group. */
  groupConcurrency?: number;
}

export interface FlowWorkerConfig {
  target: Target;
  instanceId: string;
  queue: string;
  concurrency: number;
  /** How long each handler waits (ms) before returning; 0 returns at once. */
  handlerMs: number;
  limits: FlowLimits;
}

/** Zero-padded, so the groups' key order (the order a grouped claim walks them in) is their numeric order. */
export const groupKey = (g: number): string => `g${String(g).padStart(5, "0")}`;

/** The queue's declaration without its handler: the producer's and every worker's are the same. */
export function flowQueueOptions(concurrency: number, limits: FlowLimits): QueueOptions<FlowPayload> {
  return {
    concurrency,
    ...(limits.globalConcurrency !== undefined ? { globalConcurrency: limits.globalConcurrency } : {}),
    ...(limits.groupConcurrency !== undefined ? { groupConcurrency: limits.groupConcurrency, group: (p: FlowPayload) => groupKey(p.g) } : {}),
  };
}

/** The lines a worker process prints (besides the engine's warnings and errors). */
export interface StartsLine {
  event: "flow.starts";
  /** Each handler call's start, epoch ms with 0.1 ms steps, in this process's order. */
  at: number[];
  /** The group index of each start, in the same order. */
  groups: number[];
  /** `queue.throttled` events by what held the claim (`globalConcurrency`, `groupConcurrency`...). */
  throttled: Record<string, number>;
}
