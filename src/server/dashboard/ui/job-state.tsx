import type { JobSummary } from "../../api/types.js";
import { relative } from "./format.js";

const TONE: Record<JobSummary["status"], string> = { pending: "", running: "ok", succeeded: "ok", failed: "bad", cancelled: "warn" };

/** A pending flow parent (or batch completion job) whose children have not all ended: it runs once they have. */
export function isWaiting(job: JobSummary): boolean {
  return job.status === "pending" && job.children !== null && job.children.pending > 0;
}

/** A pending job is due (its runAt has come) or scheduled for later; one waiting for its children is neither. */
export function isScheduled(job: JobSummary, now: number): boolean {
  return job.status === "pending" && !isWaiting(job) && job.runAt > now;
}

/** The job's state as a tag: pending jobs say whether they wait for children, are due or scheduled. */
export function JobState(props: { job: JobSummary; now: number }) {
  const { job, now } = props;
  const text = job.status === "pending" ? (isWaiting(job) ? "waiting" : isScheduled(job, now) ? "scheduled" : "due") : job.status;
  return (
    <span class={`tag ${TONE[job.status]}`} data-job-state={text}>
      {text}
    </span>
  );
}

/** The moment that matters for the job's state, in words: when it runs, ran or ended. */
export function jobTime(job: JobSummary, now: number): { text: string; at: number | null } {
  switch (job.status) {
    case "pending":
      // A waiting parent's run time is the end of time until its last child ends: say what it waits for.
      if (isWaiting(job)) return { text: `waiting for ${job.children!.pending} of ${job.children!.total} ${job.children!.total === 1 ? "child" : "children"}`, at: null };
      return { text: isScheduled(job, now) ? `runs ${relative(job.runAt, now)}` : `due ${relative(job.runAt, now)}`, at: job.runAt };
    case "running":
      return { text: `started ${relative(job.startedAt, now)}`, at: job.startedAt };
    default:
      return { text: `${job.status} ${relative(job.finishedAt, now)}`, at: job.finishedAt };
  }
}
