import type { Hono } from "hono";
import { z } from "zod";
import type { Tickwork } from "../../tickwork.js";
import { JOB_STATUSES, type Job, type JobStatus } from "../../queue/job.js";
import { ApiError } from "../errors.js";
import { previewOf } from "./preview.js";
import type { JobListItem } from "./types.js";
import { jobId, limit, name, parseParam, parseQuery, text } from "../validation.js";

const JobsQuery = z.object({
  queue: name("queue").optional(),
  status: z.enum(JOB_STATUSES as readonly JobStatus[] as [JobStatus, ...JobStatus[]], { error: `expected one of ${JOB_STATUSES.join(", ")}` }).optional(),
  key: text(255).optional(),
  /** The last id of the previous page. */
  before: jobId.optional(),
  limit: limit(500, 50),
});

export function jobRoutes(api: Hono, tw: Tickwork): void {
  /** Newest first; `next` is the `before` of the following page, null on the last one. */
  api.get("/jobs", async (c) => {
    const filter = parseQuery(c, JobsQuery);
    const jobs = await tw.jobs.list(filter);
    return c.json({ jobs: jobs.map(listItem), next: jobs.length === filter.limit ? jobs.at(-1)!.id : null });
  });

  api.get("/jobs/:id", async (c) => {
    const id = parseParam(c, "id", jobId);
    const job = await tw.jobs.get(id);
    if (!job) throw new ApiError(404, "not_found", `job ${id} does not exist (it may have been pruned by retention)`);
    return c.json({ job });
  });

  api.post("/jobs/:id/retry", async (c) => c.json({ job: await tw.jobs.retry(parseParam(c, "id", jobId)) }));
  api.post("/jobs/:id/cancel", async (c) => c.json({ job: await tw.jobs.cancel(parseParam(c, "id", jobId)) }));
}

function listItem({ payload, ...job }: Job): JobListItem {
  return { ...job, ...previewOf(JSON.stringify(payload)) };
}
