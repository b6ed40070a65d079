// The retries page's 429 example against an upstream that answers 429 with `Retry-After: 120`
// (delay-seconds, as such upstreams send it): the job must come back two minutes after the failure.
import { until, withUpstream, type Answer } from "./upstream.ts";

const RETRY_AFTER_S = 120;

export default function retryAfter(load: () => Promise<unknown>): Promise<string> {
  const answer: Answer = (res) => res.writeHead(429, { "retry-after": String(RETRY_AFTER_S) }).end();
  return withUpstream(answer, {}, async (tw, requests) => {
    await load();
    const { id } = await tw.enqueue("charges", { account: "acct-1" });
    await tw.start();
    const job = await until(
      async () => {
        const job = await tw.jobs.get(id);
        if (job && job.status !== "pending" && job.status !== "running") throw new Error(`the job ended ${job.status} (${job.lastError}) instead of waiting for its retry`);
        return job?.status === "pending" && job.history.some((a) => a.outcome === "failed" && a.finishedAt) ? job : undefined;
      },
      30_000,
      async () => `the job did not fail its first attempt within 30 s: ${JSON.stringify(await tw.jobs.get(id))}`,
    );
    const failedAt = job.history.find((a) => a.outcome === "failed")!.finishedAt!;
    const delayMs = job.runAt - failedAt;
    const seen = requests.map((r) => `${r.method} ${r.url}`);
    if (seen.length !== 1 || seen[0] !== "POST /charge/acct-1") throw new Error(`expected one POST /charge/acct-1 upstream, got ${JSON.stringify(seen)}`);
    if (Math.abs(delayMs - RETRY_AFTER_S * 1000) > 1_000) throw new Error(`the job comes back ${delayMs} ms after its 429, not ${RETRY_AFTER_S} s (Retry-After: ${RETRY_AFTER_S})`);
    return `a 429 with Retry-After: ${RETRY_AFTER_S} brought the job back ${delayMs} ms later (attempt ${job.attempts}: ${job.lastError?.split("\n")[0]})`;
  });
}
