// The shared upstream budget recipe against a local upstream that answers a job's request with 429
// and `Retry-After: 120`: the client pauses the named limiter for every caller until then, nothing
// else reaches the upstream meanwhile, and the jobs wait for the reset. (Past the client's
// maxRetryAfter of 60 s, so no call sleeps inside its handler: each job is put back until the reset.)
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createTickwork } from "tickwork";
import { sqlite } from "tickwork/sqlite";

const RETRY_AFTER_S = 120;

export default async function sharedBudget(load: () => Promise<unknown>): Promise<string> {
  const requests: string[] = [];
  const upstream = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(429, { "retry-after": String(RETRY_AFTER_S) }).end();
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const { port } = upstream.address() as AddressInfo;
  const realFetch = globalThis.fetch;
  // The page calls https://api.tenero.io: its requests go to the local upstream instead.
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    return realFetch(new Request(`http://127.0.0.1:${port}${url.pathname}${url.search}`, request));
  };
  const tw = await createTickwork({ store: sqlite(":memory:"), logger: () => {}, handleSignals: false });
  // The recipe's task would call refresh() at its slot, five minutes away: never within this run.
  Object.assign(globalThis, { tw, refresh: async () => ({ refreshed: 0 }) });
  try {
    await load();
    const budget = tw.limiters().find((l) => l.name === "tenero");
    if (!budget) throw new Error(`the recipe defined no limiter "tenero" (limiters: ${tw.limiters().map((l) => l.name).join(", ")})`);
    const first = await tw.enqueue("token-details", { id: "t1" });
    const second = await tw.enqueue("token-details", { id: "t2" });
    const sent = Date.now();
    await tw.start();
    const deadline = Date.now() + 30_000;
    for (;;) {
      const state = await budget.state();
      const [a, b] = [await tw.jobs.get(first.id), await tw.jobs.get(second.id)];
      if (state.pausedUntil !== null && a?.status === "pending" && b?.status === "pending" && requests.length > 0) {
        const pausedFor = state.pausedUntil - sent;
        if (pausedFor < (RETRY_AFTER_S - 5) * 1000 || pausedFor > (RETRY_AFTER_S + 5) * 1000) throw new Error(`the limiter is paused for ${pausedFor} ms, not the upstream's ${RETRY_AFTER_S} s`);
        if (requests.length !== 1) throw new Error(`the upstream got ${requests.length} requests (${requests.join(", ")}) after its 429: the pause let callers through`);
        const late = [a, b].filter((j) => j.runAt < state.pausedUntil! - 1_000);
        if (late.length) throw new Error(`job(s) ${late.map((j) => j.id).join(", ")} due before the pause ends`);
        return `a 429 with Retry-After: ${RETRY_AFTER_S} paused "tenero" for ${Math.round(pausedFor / 1000)} s; the other job never reached the upstream; both wait for the reset (attempts ${a.attempts}, ${b.attempts})`;
      }
      if (Date.now() > deadline) throw new Error(`no pause within 30 s: limiter ${JSON.stringify(state)}, requests ${JSON.stringify(requests)}, jobs ${JSON.stringify([a?.status, b?.status])}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    globalThis.fetch = realFetch;
    await tw.stop();
    upstream.close();
  }
}
