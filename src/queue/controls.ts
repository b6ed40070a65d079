import { checkText } from "../core/bounds.js";
import { InvalidInputError, describe } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { tokens, nextTokenAt, type BucketSpec } from "./flow-control/bucket.js";
import { UnknownQueueError } from "./errors.js";
import { MAX_GROUP_LENGTH, type QueueConfig } from "./options.js";
import type { GroupCounts, QueueStore } from "./store/store.js";
import type { QueueWorker } from "./worker/worker.js";

export interface ControlsDeps {
  store: QueueStore;
  logger: Logger;
  now: () => number;
  config: (queue: string) => QueueConfig | undefined;
  names: () => string[];
  worker: (queue: string) => QueueWorker | undefined;
}

/** A shared budget's state as status reports show it. */
export interface BucketStatus {
  bucket: string;
  intervalMs: number;
  burst: number;
  tokens: number;
  pausedUntil: number | null;
  nextTokenAt: number;
}

/** A queue's flow control as every process sees it (read from the store). */
export interface QueueFlowStatus {
  name: string;
  paused: boolean;
  pausedAt: number | null;
  /** Paused groups of the queue. */
  pausedGroups: string[];
  globalConcurrency: number | null;
  groupConcurrency: number | null;
  /**
   * Jobs running in every process: started by a handler (a job whose lease lapsed counts until the
   * rescue hands it back).
   */
  running: number;
  /** Jobs claimed by a worker in some process that has not started them yet: prefetched, or handed over and not begun. */
  held: number;
  pending: number;
  /** The shared buckets every start draws from (a global rateLimit, a limiter). */
  buckets: BucketStatus[];
  /**
   * The busiest groups (at most `groups` of them, default 20) with their pending and running jobs.
   * Under groupConcurrency 1 a group's running may exceed 1: a worker of fast jobs holds up to 4 of
   * a group, which it runs one after another.
   */
  groups: GroupCounts[];
  /** What held this process's worker back at its last claim, if it runs the queue here. */
  heldBy: string | null;
}


/**
 * `tw.queues`: pause and resume queues (or one group of a queue) for every process, durably, and read
 * their flow-control state.
 */
export class QueueControls {
  constructor(private readonly deps: ControlsDeps) {}

  /** No job of `queue` (or of its `group`) starts in any process until `resume`; running jobs go on. Returns whether it was running. */
  async pause(queue: string, options: { group?: string } = {}): Promise<boolean> {
    const group = this.target(queue, options, "pause");
    const changed = await this.deps.store.setPaused({ queue, group, paused: true, now: this.deps.now() });
    this.deps.worker(queue)?.pausedHere(group);
    if (changed) this.deps.logger.warn("queue.paused", { queue, ...(group !== null ? { group } : {}) });
    return changed;
  }

  /** Lets `queue` (or its `group`) start jobs again, in every process. Returns whether it was paused. */
  async resume(queue: string, options: { group?: string } = {}): Promise<boolean> {
    const group = this.target(queue, options, "resume");
    const changed = await this.deps.store.setPaused({ queue, group, paused: false, now: this.deps.now() });
    this.deps.worker(queue)?.wake();
    if (changed) this.deps.logger.info("queue.resumed", { queue, ...(group !== null ? { group } : {}) });
    return changed;
  }

  /** Each declared queue's flow-control state, or only `queue`'s. */
  async status(queue?: string, options: { groups?: number } = {}): Promise<QueueFlowStatus[]> {
    if (queue !== undefined) this.known(queue, "status");
    const groups = options.groups ?? 20;
    if (!Number.isInteger(groups) || groups < 0 || groups > 1_000) throw new InvalidInputError(`queues.status: groups must be an integer from 0 to 1000, got ${describe(groups)}`);
    const names = queue !== undefined ? [queue] : this.deps.names();
    const { store } = this.deps;
    const now = this.deps.now();
    const [pauses, counts, held] = await Promise.all([store.pauses({ queues: names }), store.countByStatus({ queues: names }), store.countHeld({ queues: names })]);
    const specs = new Map<string, BucketSpec>();
    for (const name of names) for (const spec of this.deps.config(name)?.limits?.buckets ?? []) specs.set(spec.bucket, spec);
    const states = await store.bucketStates({ buckets: [...specs.keys()] });
    return Promise.all(
      names.map(async (name): Promise<QueueFlowStatus> => {
        const config = this.deps.config(name);
        const limits = config?.limits;
        const whole = pauses.find((p) => p.queue === name && p.group === null);
        const c = counts.find((x) => x.queue === name)?.counts;
        return {
          name,
          paused: whole !== undefined,
          pausedAt: whole?.pausedAt ?? null,
          pausedGroups: pauses.filter((p) => p.queue === name && p.group !== null).map((p) => p.group!),
          globalConcurrency: limits?.globalConcurrency ?? null,
          groupConcurrency: limits?.groupConcurrency ?? null,
          // The counts see a status; a claimed job is running by status before its handler starts.
          running: Math.max(0, (c?.running ?? 0) - (held[name] ?? 0)),
          held: held[name] ?? 0,
          pending: c?.pending ?? 0,
          buckets: (limits?.buckets ?? []).map((spec) => {
            const state = states[spec.bucket];
            return {
              bucket: spec.bucket, intervalMs: spec.intervalMs, burst: spec.burst, tokens: tokens(spec, state, now),
              pausedUntil: state?.pausedUntil != null && state.pausedUntil > now ? state.pausedUntil : null, nextTokenAt: nextTokenAt(spec, state, now),
            };
          }),
          groups: limits?.grouped && groups > 0 ? await store.groupCounts({ queue: name, now, limit: groups }) : [],
          heldBy: this.deps.worker(name)?.stats.heldBy ?? null,
        };
      }),
    );
  }

  private known(queue: string, method: string): void {
    if (typeof queue !== "string") throw new InvalidInputError(`queues.${method}: queue must be a queue name, got ${describe(queue)}`);
    if (!this.deps.config(queue)) throw new UnknownQueueError(queue, this.deps.names());
  }

  private target(queue: string, options: { group?: string }, method: string): string | null {
    this.known(queue, method);
    if (options === null || typeof options !== "object") throw new InvalidInputError(`queues.${method}: options must be an object { group? }, got ${describe(options)}`);
    const unknown = Object.keys(options).filter((k) => k !== "group");
    if (unknown.length) throw new InvalidInputError(`queues.${method}: unknown option "${unknown[0]}" (expected group)`);
    if (options.group === undefined) return null;
    const group = checkText(options.group, `queues.${method}: group`, { max: MAX_GROUP_LENGTH });
    // As enqueue refuses a group on such a queue: a pause of a group it can never have would be
    // written, shown by status() and hold nothing.
    if (!this.deps.config(queue)!.limits?.grouped) {
      throw new InvalidInputError(`queues.${method}: group needs a grouped queue: declare "${queue}" with group, groupConcurrency or groupRateLimit`);
    }
    return group;
  }
}
