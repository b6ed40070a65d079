// The retries page's 429 example against an upstream that answers 429 with `Retry-After: 120`
// (delay-seconds, as such upstreams send it): the job must come back two minutes after the failure.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createTickwork } from "tickwork";
import { sqlite } from "tickwork/sqlite";

const RETRY_AFTER_S = 120;

export default async function retryAfter(load: () => Promise<unknown>): Promise<string> {
  const requests: string[] = [];
  const upstream = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(429, { "retry-after": String(RETRY_AFTER_S) }).end();
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const { port } = upstream.address() as AddressInfo;
  const realFetch = globalThis.fetch;
  // The page calls https://payments.example: its requests go to the local upstream instead.
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    return realFetch(`http://127.0.0.1:${port}${url.pathname}${url.search}`, init);
  };
  const tw = await createTickwork({ store: sqlite(":memory:"), logger: () => {}, handleSignals: false });
  Object.assign(globalThis, { tw });
  try {
    await load();
    const { id } = await tw.enqueue("charges", { account: "acct-1" });
    await tw.start();
    const deadline = Date.now() + 30_000;
    for (;;) {
      const job = await tw.jobs.get(id);
      const failed = job?.history.find((a) => a.outcome === "failed");
      if (job && job.status === "pending" && failed?.finishedAt) {
        const delayMs = job.runAt - failed.finishedAt;
        if (requests.length !== 1 || requests[0] !== "POST /charge/acct-1") throw new Error(`expected one POST /charge/acct-1 upstream, got ${JSON.stringify(requests)}`);
        if (Math.abs(delayMs - RETRY_AFTER_S * 1000) > 1_000) throw new Error(`the job comes back ${delayMs} ms after its 429, not ${RETRY_AFTER_S} s (Retry-After: ${RETRY_AFTER_S})`);
        return `a 429 with Retry-After: ${RETRY_AFTER_S} brought the job back ${delayMs} ms later (attempt ${job.attempts}: ${job.lastError?.split("\n")[0]})`;
      }
      if (job && job.status !== "pending" && job.status !== "running") throw new Error(`the job ended ${job.status} (${job.lastError}) instead of waiting for its retry`);
      if (Date.now() > deadline) throw new Error(`the job did not fail its first attempt within 30 s: ${JSON.stringify(job)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    globalThis.fetch = realFetch;
    await tw.stop();
    upstream.close();
  }
}
