import { parseExposition } from "../../server/support/prometheus-text.js";
import type { Admin } from "../../server/support/admin.js";

/**
 * Declares one of every kind of unit on an engine (a queue with limits and groups, a task, a
 * delivery, a fan-out, a limiter), runs a tick of work, and scrapes `/metrics` over HTTP: the names
 * of every sample it holds (a histogram's `_bucket`, `_sum` and `_count` included), families
 * without samples left out.
 */
export async function scrapedNames(a: Admin): Promise<Set<string>> {
  const quotes = a.tw.queue<string>("quotes", { globalConcurrency: 2, rateLimit: { max: 10, per: "1m", scope: "global" }, group: (symbol) => symbol, handler: () => {} });
  a.tw.task("report", { every: "5m", run: () => "ok" });
  const hooks = a.tw.delivery("hooks", { send: () => {} });
  a.tw.fanout("symbols", { groups: { collectors: { targets: ["collector-1"] } }, send: () => {} });
  a.tw.limiter("prices-api", { max: 10, per: "1m" });
  await quotes.enqueueMany([{ payload: "BTC" }, { payload: "ETH" }, { payload: "ETH", delay: "1h" }]);
  await hooks.emit([{ payload: { user: "u-1" } }]);
  await a.clock.advance("5m");
  await a.tw.tick();
  const names = new Set<string>();
  for (const family of parseExposition((await a.get("/metrics")).text).values()) for (const sample of family.samples) names.add(sample.name);
  return names;
}
