// The shared upstream budget recipe against a local upstream that answers a job's request with 429
// and `Retry-After: 120`: the client pauses the named limiter for every caller until then, nothing
// else reaches the upstream meanwhile, and the jobs wait for the reset. (Past the client's
// maxRetryAfter of 60 s, so no call sleeps inside its handler: each job is put back until the reset.)
import { until, withUpstream, type Answer } from "./upstream.ts";

const RETRY_AFTER_S = 120;

export default function sharedBudget(load: () => Promise<unknown>): Promise<string> {
  const answer: Answer = (res) => res.writeHead(429, { "retry-after": String(RETRY_AFTER_S) }).end();
  // The recipe's task would call refresh() at its slot, five minutes away: never within this run.
  return withUpstream(answer, { refresh: async () => ({ refreshed: 0 }) }, async (tw, requests) => {
    await load();
    const budget = tw.limiters().find((l) => l.name === "tenero");
    if (!budget) throw new Error(`the recipe defined no limiter "tenero" (limiters: ${tw.limiters().map((l) => l.name).join(", ")})`);
    const ids = [(await tw.enqueue("token-details", { id: "t1" })).id, (await tw.enqueue("token-details", { id: "t2" })).id];
    const sent = Date.now();
    await tw.start();
    const look = async () => ({ state: await budget.state(), jobs: await Promise.all(ids.map((id) => tw.jobs.get(id))) });
    const { state, jobs } = await until(
      async () => {
        const seen = await look();
        return seen.state.pausedUntil !== null && seen.jobs.every((j) => j?.status === "pending") && requests.length > 0 ? seen : undefined;
      },
      30_000,
      async () => {
        const seen = await look();
        return `no pause within 30 s: limiter ${JSON.stringify(seen.state)}, requests ${requests.length}, jobs ${JSON.stringify(seen.jobs.map((j) => j?.status))}`;
      },
    );
    const pausedUntil = state.pausedUntil!;
    const pausedFor = pausedUntil - sent;
    if (pausedFor < (RETRY_AFTER_S - 5) * 1000 || pausedFor > (RETRY_AFTER_S + 5) * 1000) throw new Error(`the limiter is paused for ${pausedFor} ms, not the upstream's ${RETRY_AFTER_S} s`);
    if (requests.length !== 1) throw new Error(`the upstream got ${requests.length} requests after its 429: the pause let callers through`);
    const early = jobs.filter((j) => j!.runAt < pausedUntil - 1_000);
    if (early.length) throw new Error(`job(s) ${early.map((j) => j!.id).join(", ")} due before the pause ends`);
    return `a 429 with Retry-After: ${RETRY_AFTER_S} paused "tenero" for ${Math.round(pausedFor / 1000)} s; the other job never reached the upstream; both wait for the reset (attempts ${jobs.map((j) => j!.attempts).join(", ")})`;
  });
}
