import type { Hono } from "hono";
import * as z from "zod";
import type { Tickwork } from "../../tickwork.js";
import { JOB_STATUSES, type Job, type JobStatus } from "../../queue/job.js";
import { UnknownQueueError } from "../../queue/errors.js";
import { ApiError } from "../errors.js";
import { previewOf } from "./preview.js";
import type { JobAnswer, JobDetail, JobListItem, JobPage, JobPayloadView, JobSummary } from "./types.js";
import { jobId, limit, name, parseParam, parseQuery, text } from "../validation.js";

/** The engine's longest page (`tw.jobs.list`'s limit). */
const MAX_PAGE = 500;

/**
 * Characters of a payload's JSON text a job's own answer carries: a job's page is polled while it is
 * open, and one 20 MB payload must not come with every poll. `GET /api/jobs/:id/payload` has it all.
 */
export const DETAIL_PAYLOAD_CHARS = 64 * 1024;

const JobsQuery = z
  .object({
    queue: name("queue").optional(),
    status: z.enum(JOB_STATUSES as readonly JobStatus[] as [JobStatus, ...JobStatus[]], { error: `expected one of ${JOB_STATUSES.join(", ")}` }).optional(),
    /** Pending jobs due now (`true`) or scheduled for later (`false`). */
    due: z
      .enum(["true", "false"], { error: "expected true (pending jobs due now) or false (pending jobs scheduled for later)" })
      .transform((v) => v === "true")
      .optional(),
    key: text(255).optional(),
    /** A flow parent's (or `tw.batch` completion job's) id: its direct children. */
    parent: jobId.optional(),
    /** One job by its id, if it passes the other filters. */
    id: jobId.optional(),
    order: z.enum(["newest", "oldest"], { error: "expected newest or oldest" }).default("newest"),
    /** Newest first: the last id of the previous page. */
    before: jobId.optional(),
    /** Oldest first: the last id of the previous page. */
    after: jobId.optional(),
    limit: limit(MAX_PAGE, 50),
  })
  .superRefine((q, ctx) => {
    if (q.due !== undefined && q.status !== undefined && q.status !== "pending") {
      ctx.addIssue({ code: "custom", path: ["due"], message: `applies to pending jobs, not to status "${q.status}"` });
    }
    // Refused here rather than by the engine, so the answer is an invalid_query naming the field
    // also when `id` asks for one job (which never reaches tw.jobs.list).
    if (q.before !== undefined && q.order === "oldest") {
      ctx.addIssue({ code: "custom", path: ["before"], message: "pages a newest-first list; an oldest-first list (order=oldest) pages with after" });
    }
    if (q.after !== undefined && q.order === "newest") {
      ctx.addIssue({ code: "custom", path: ["after"], message: "pages an oldest-first list (order=oldest); a newest-first list pages with before" });
    }
  });

type Filter = Omit<z.output<typeof JobsQuery>, "id" | "limit">;

export function jobRoutes(api: Hono, tw: Tickwork): void {
  /**
   * Newest first (`order=newest`, the default) or oldest first; `next` is the last id shown, the
   * `before` (newest first) or `after` (oldest first) of the following page, null on the last one.
   */
  api.get("/jobs", async (c) => {
    const { id, limit, ...filter } = parseQuery(c, JobsQuery);
    const now = tw.clock.now();
    const { jobs, next } = id === undefined ? await page(tw, filter, limit) : await byId(tw, id, filter, now);
    const answer: JobPage = { jobs: jobs.map(listItem), order: filter.order, next, now };
    return c.json(answer);
  });

  api.get("/jobs/:id", async (c) => c.json(answer(tw, await mustGet(tw, parseParam(c, "id", jobId)))));

  /** The job's payload alone, whole, as JSON (its own answer carries the first 64 Ki characters of a larger one). */
  api.get("/jobs/:id/payload", async (c) => {
    const job = await mustGet(tw, parseParam(c, "id", jobId));
    return c.body(jsonText(job.payload), 200, { "content-type": "application/json; charset=utf-8" });
  });

  api.post("/jobs/:id/retry", async (c) => c.json(answer(tw, await tw.jobs.retry(parseParam(c, "id", jobId)))));
  api.post("/jobs/:id/cancel", async (c) => c.json(answer(tw, await tw.jobs.cancel(parseParam(c, "id", jobId)))));
  api.post("/jobs/:id/promote", async (c) => c.json(answer(tw, await tw.jobs.promote(parseParam(c, "id", jobId)))));
  /** A finished job (succeeded, failed, cancelled) is deleted now; the answer is the job as it was. */
  api.post("/jobs/:id/delete", async (c) => c.json(answer(tw, await tw.jobs.delete(parseParam(c, "id", jobId)))));
}

/**
 * One page, and whether another follows: one job more than the page is asked for, so the last page
 * says so itself rather than leading to an empty one. At the engine's largest page there is no room
 * for the extra job: a full page then offers a next one, which may be empty.
 */
async function page(tw: Tickwork, filter: Filter, limit: number): Promise<{ jobs: Job[]; next: string | null }> {
  const jobs = await tw.jobs.list({ ...filter, limit: Math.min(limit + 1, MAX_PAGE) });
  const more = jobs.length > limit || (limit === MAX_PAGE && jobs.length === MAX_PAGE);
  const shown = jobs.slice(0, limit);
  return { jobs: shown, next: more ? shown.at(-1)!.id : null };
}

/** The job with this id, as a page of one when it passes the filter (as `tw.jobs.list` applies it), else none. */
async function byId(tw: Tickwork, id: string, filter: Filter, now: number): Promise<{ jobs: Job[]; next: null }> {
  const { queue, status, due, key, parent, before, after } = filter;
  if (queue !== undefined) {
    const known = tw.status().queues.map((q) => q.name);
    if (!known.includes(queue)) throw new UnknownQueueError(queue, known);
  }
  const job = await tw.jobs.get(id);
  const passes =
    job !== null &&
    (queue === undefined || job.queue === queue) &&
    (status === undefined || job.status === status) &&
    (key === undefined || job.key === key) &&
    (parent === undefined || job.parentId === parent) &&
    (due === undefined || (job.status === "pending" && (due ? job.runAt <= now : job.runAt > now))) &&
    (before === undefined || BigInt(job.id) < BigInt(before)) &&
    (after === undefined || BigInt(job.id) > BigInt(after));
  return { jobs: passes ? [job] : [], next: null };
}

async function mustGet(tw: Tickwork, id: string): Promise<Job> {
  const job = await tw.jobs.get(id);
  if (!job) throw new ApiError(404, "not_found", `job ${id} does not exist (it may have been pruned by retention)`);
  return job;
}

function answer(tw: Tickwork, job: Job): JobAnswer {
  return { job: detail(job), now: tw.clock.now() };
}

/** The engine's job as lists show it, field by field: what the engine adds later is not published by accident. */
export function jobSummary(job: Job): JobSummary {
  return {
    id: job.id,
    queue: job.queue,
    key: job.key,
    group: job.group,
    status: job.status,
    priority: job.priority,
    runAt: job.runAt,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    lastError: job.lastError,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    children: job.children === null ? null : { total: job.children.total, pending: job.children.pending, failed: job.children.failed },
  };
}

function listItem(job: Job): JobListItem {
  return { ...jobSummary(job), ...previewOf(jsonText(job.payload)) };
}

function detail(job: Job): JobDetail {
  return {
    ...jobSummary(job),
    ...payloadView(job.payload),
    snoozes: job.snoozes,
    result: job.result,
    progress: job.progress,
    history: job.history.map((a) => ({ attempt: a.attempt, startedAt: a.startedAt, finishedAt: a.finishedAt, outcome: a.outcome, error: a.error })),
    parentId: job.parentId,
    lease: job.lease === null ? null : { workerId: job.lease.workerId, until: job.lease.until },
  };
}

function payloadView(payload: unknown): JobPayloadView {
  const json = jsonText(payload);
  if (json.length <= DETAIL_PAYLOAD_CHARS) return { payloadTruncated: false, payloadChars: json.length, payload };
  const { payloadPreview } = previewOf(json, DETAIL_PAYLOAD_CHARS);
  return { payloadTruncated: true, payloadChars: json.length, payloadPreview };
}

/** A payload's JSON text (a job's payload is JSON; `undefined` is stored as null). */
function jsonText(payload: unknown): string {
  return JSON.stringify(payload) ?? "null";
}
