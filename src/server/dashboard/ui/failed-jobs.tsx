import type { JobSummary } from "../../api/types.js";
import { absolute, count, firstLine, relative } from "./format.js";
import { browserHref, jobHref } from "./route.js";

/** The latest failed jobs; the job browser's Failed tab pages through all of them. */
export function FailedJobs(props: { jobs: JobSummary[]; failedCount: number; now: number; busy: boolean; onRetry: (id: string) => void }) {
  if (props.jobs.length === 0) return <p class="empty">No failed jobs.</p>;
  return (
    <>
      <table class="grid stack" aria-label="Failed jobs">
        <thead>
          <tr>
            <th>Job</th>
            <th>Queue</th>
            <th class="num">Attempts</th>
            <th>Failed</th>
            <th>Last error</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {props.jobs.map((job) => (
            <tr key={job.id} data-job={job.id}>
              <td>
                <a href={jobHref(job.id)}>#{job.id}</a>
                {job.key ? <div class="sub">{job.key}</div> : null}
              </td>
              <td data-label="Queue">{job.queue}</td>
              <td class="num" data-label="Attempts">
                {job.attempts}/{job.maxAttempts}
              </td>
              <td data-label="Failed" title={absolute(job.finishedAt)}>{relative(job.finishedAt, props.now)}</td>
              <td class="error" data-label="Last error">
                <details>
                  <summary>{firstLine(job.lastError)}</summary>
                  <pre>{job.lastError}</pre>
                </details>
              </td>
              <td class="actions">
                <button type="button" disabled={props.busy} aria-label={`Retry job ${job.id}`} onClick={() => props.onRetry(job.id)}>
                  Retry
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.failedCount > props.jobs.length ? (
        <p class="more">
          The latest {count(props.jobs.length)} of {count(props.failedCount)}: <a href={browserHref({ state: "failed" })}>browse every failed job</a>
        </p>
      ) : null}
    </>
  );
}
