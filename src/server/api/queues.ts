import type { Hono } from "hono";
import type { Tickwork } from "../../tickwork.js";
import { ApiError } from "../errors.js";
import { name, parseParam } from "../validation.js";
import type { JobStatusName, QueueSummary } from "./types.js";

const ZERO: Record<JobStatusName, number> = { pending: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };

/** Every queue the store has jobs of or this process declares, by name, with counts by status. */
export async function queueSummaries(tw: Tickwork): Promise<QueueSummary[]> {
  const declared = new Map(tw.status().queues.map((q) => [q.name, q]));
  const counts = new Map((await tw.jobs.counts()).map((c) => [c.queue, c.counts]));
  const names = [...new Set([...declared.keys(), ...counts.keys()])].sort();
  return names.map((queue) => {
    const q = declared.get(queue);
    return {
      name: queue,
      declared: q !== undefined,
      hasHandler: q?.hasHandler ?? false,
      concurrency: q?.concurrency ?? null,
      runningHere: q?.running ?? 0,
      counts: counts.get(queue) ?? { ...ZERO },
    };
  });
}

/** A queue named in a path must be declared here: 404 otherwise (in a filter it is a 400). */
export function declaredQueue(tw: Tickwork, queue: string): string {
  const known = tw.status().queues.map((q) => q.name);
  if (!known.includes(queue)) {
    throw new ApiError(404, "not_found", `queue "${queue}" is not declared in this process` + (known.length ? ` (declared: ${known.join(", ")})` : " (no queue is declared)"));
  }
  return queue;
}

export function queueRoutes(api: Hono, tw: Tickwork): void {
  api.get("/queues", async (c) => c.json({ queues: await queueSummaries(tw) }));

  api.post("/queues/:queue/retry-failed", async (c) => {
    const queue = declaredQueue(tw, parseParam(c, "queue", name("queue")));
    return c.json({ queue, retried: await tw.jobs.retryFailed(queue) });
  });
}
