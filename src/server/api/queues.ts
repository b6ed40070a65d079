import type { Hono } from "hono";
import * as z from "zod";
import type { Tickwork } from "../../tickwork.js";
import type { QueueFlowStatus } from "../../queue/controls.js";
import { ApiError } from "../errors.js";
import { countsOf } from "../shared-counts.js";
import { name, parseBody, parseParam, parseQuery, text } from "../validation.js";
import type { JobStatusName, PendingSplit, QueueControlResult, QueueFlowView, QueueSummary } from "./types.js";

const ZERO: Record<JobStatusName, number> = { pending: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };

/** Groups the listing shows per queue: the busiest few; `GET /api/queues/:queue/flow` gives more. */
const LISTED_GROUPS = 5;
/** The engine's bound on a group name (`tw.queues.pause(queue, { group })`). */
const MAX_GROUP_LENGTH = 255;
const GROUPS = "an integer from 0 to 1000";
const FlowQuery = z.object({
  groups: z.string().regex(/^[0-9]{1,4}$/, GROUPS).transform(Number).pipe(z.number().max(1_000, GROUPS)).default(20),
});
/** No body, `{}`, or one group of the queue. */
const ControlBody = z
  .object({ group: text(MAX_GROUP_LENGTH).optional() }, { error: (issue) => (issue.code === "invalid_type" ? 'expected an object such as {"group":"tenant-1"}, or no body' : undefined) })
  .strict();

/**
 * Every queue the store has jobs of or this process declares, by name, with counts by status, its
 * pending jobs split into due now and scheduled later, and its flow control.
 */
export async function queueSummaries(tw: Tickwork): Promise<QueueSummary[]> {
  const declared = new Map(tw.status().queues.map((q) => [q.name, q]));
  const [stored, flows] = await Promise.all([countsOf(tw).get(), tw.queues.status(undefined, { groups: LISTED_GROUPS })]);
  const counts = new Map(stored.map((c) => [c.queue, { ...c.counts }]));
  // A declared queue's live counts come with its flow control, read in the same moment as its limits.
  for (const f of flows) {
    const c = counts.get(f.name);
    if (c) Object.assign(c, { pending: f.pending, running: f.running });
    else if (f.pending || f.running) counts.set(f.name, { ...ZERO, pending: f.pending, running: f.running });
  }
  const flowOf = new Map(flows.map((f) => [f.name, flowView(f)]));
  const names = [...new Set([...declared.keys(), ...counts.keys()])].sort();
  const now = tw.clock.now();
  const pending = (queue: string) => counts.get(queue)?.pending ?? 0;
  const waiting = names.filter((queue) => pending(queue) > 0);
  const [scheduled, earliest] = await Promise.all([
    tw.store.queue.countScheduled({ queues: waiting, now }),
    // The earliest pending run time: an index probe per queue, as /metrics reads its oldest due job.
    Promise.all(waiting.map(async (queue) => [queue, await tw.store.queue.nextWakeAt({ queues: [queue], leases: false })] as const)),
  ]);
  const earliestOf = new Map(earliest);
  const splits = names.map((queue) => pendingSplit(pending(queue), scheduled[queue] ?? 0, earliestOf.get(queue) ?? null, now));
  return names.map((queue, i) => {
    const q = declared.get(queue);
    return {
      name: queue,
      declared: q !== undefined,
      hasHandler: q?.hasHandler ?? false,
      concurrency: q?.concurrency ?? null,
      runningHere: q?.running ?? 0,
      counts: counts.get(queue) ?? { ...ZERO },
      pending: splits[i]!,
      flow: flowOf.get(queue) ?? null,
    };
  });
}

/** A queue's pending jobs split by run time against `now`, from its pending count and the scheduled ones counted. */
function pendingSplit(pending: number, scheduled: number, earliest: number | null, now: number): PendingSplit {
  return { due: Math.max(0, pending - scheduled), scheduled, oldestDueAt: earliest !== null && earliest <= now ? earliest : null };
}

/** The engine's status as the API shows it, field by field: what the engine adds later is not published by accident. */
export function flowView(s: QueueFlowStatus): QueueFlowView {
  return {
    name: s.name,
    paused: s.paused,
    pausedAt: s.pausedAt,
    pausedGroups: s.pausedGroups,
    globalConcurrency: s.globalConcurrency,
    groupConcurrency: s.groupConcurrency,
    running: s.running,
    held: s.held,
    pending: s.pending,
    buckets: s.buckets.map((b) => ({ bucket: b.bucket, intervalMs: b.intervalMs, burst: b.burst, tokens: b.tokens, pausedUntil: b.pausedUntil, nextTokenAt: b.nextTokenAt })),
    groups: s.groups.map((g) => ({ group: g.group, pending: g.pending, running: g.running })),
    heldBy: s.heldBy,
  };
}

/**
 * A queue named in a path must be declared here: 404 otherwise, with the engine's code for it (in a
 * filter it is a 400).
 */
export function declaredQueue(tw: Tickwork, queue: string): string {
  const known = tw.status().queues.map((q) => q.name);
  if (!known.includes(queue)) {
    const message = `queue "${queue}" is not declared in this process` + (known.length ? ` (declared: ${known.join(", ")})` : " (no queue is declared)");
    throw new ApiError(404, "not_found", message, undefined, "TW_UNKNOWN_QUEUE");
  }
  return queue;
}

export function queueRoutes(api: Hono, tw: Tickwork): void {
  api.get("/queues", async (c) => c.json({ queues: await queueSummaries(tw) }));

  api.post("/queues/:queue/retry-failed", async (c) => {
    const queue = declaredQueue(tw, parseParam(c, "queue", name("queue")));
    return c.json({ queue, retried: await tw.jobs.retryFailed(queue) });
  });

  /** Every pending job of the queue (due or scheduled) is cancelled; running ones go on. */
  api.post("/queues/:queue/cancel-pending", async (c) => {
    const queue = declaredQueue(tw, parseParam(c, "queue", name("queue")));
    return c.json({ queue, cancelled: await tw.jobs.cancelPending(queue) });
  });

  /** The queue's flow control; `?groups=n` (0 to 1000, default 20) bounds the busiest groups listed. */
  api.get("/queues/:queue/flow", async (c) => {
    const queue = declaredQueue(tw, parseParam(c, "queue", name("queue")));
    const { groups } = parseQuery(c, FlowQuery);
    const [status] = await tw.queues.status(queue, { groups });
    return c.json({ flow: flowView(status!) });
  });

  /**
   * Pauses or resumes the queue, or one group of it (`{ "group": "..." }`), in every process and
   * durably; jobs already running go on. `changed` is false when it already was paused (resumed).
   */
  for (const action of ["pause", "resume"] as const) {
    api.post(`/queues/:queue/${action}`, async (c) => {
      const queue = declaredQueue(tw, parseParam(c, "queue", name("queue")));
      const { group } = await parseBody(c, ControlBody, '{"group":"tenant-1"}, or no body for the whole queue');
      const changed = await tw.queues[action](queue, group === undefined ? {} : { group });
      const result: QueueControlResult = { queue, group: group ?? null, changed };
      return c.json(result);
    });
  }
}
