import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import type { LogEvent } from "../../src/core/logger.js";
import { createHttpClient } from "../../src/http/client.js";
import { sqlite } from "../../src/store/sqlite.js";
import { fakeClock, type FakeClock } from "../../src/testing/fake-clock.js";
import { scriptedServer } from "./support/scripted-server.js";

/**
 * Seed 003, option C end to end: Tenero answers 429, the client's RateLimitedError carries the
 * Retry-After time, and the scheduler records the run as backed off (not failed) with
 * `nextRunAfter` at that time. The engine and the client share one fake clock, so the client's own
 * waits between attempts run on it too.
 */

const server = scriptedServer();
const Price = z.object({ price_usd: z.number() });
let engines: Tickwork[] = [];
afterEach(async () => {
  await Promise.all(engines.map((tw) => tw.stop()));
  engines = [];
});

async function engine(clock: FakeClock, path: string, retry: { maxAttempts: number }) {
  const events: LogEvent[] = [];
  const tw = await createTickwork({ store: sqlite(":memory:"), clock, logger: (e) => events.push(e), handleSignals: false });
  engines.push(tw);
  const tenero = createHttpClient({ baseUrl: server.current.url, clock, logger: tw.logger, name: "tenero", retry: { ...retry, backoff: () => 5 } });
  tw.task("tenero-prices", {
    every: "5m",
    run: async (ctx) => (await tenero.get(path, { schema: Price, signal: ctx.signal })).data.price_usd,
  });
  const status = async () => (await tw.scheduler.status()).tasks.find((t) => t.name === "tenero-prices")!;
  return { tw, events, status };
}

describe("a task whose upstream answers 429", () => {
  it("ends backed_off with nextRunAfter at the Retry-After time, not as a failure", async () => {
    server.current.script("/tenero/price", { status: 429, headers: { "retry-after": "120", "x-ratelimit-type": "web-ui-ip", "x-ratelimit-minute-remaining": "0" } });
    const clock = fakeClock("2026-01-01T00:00:00Z");
    const { tw, events, status } = await engine(clock, "/tenero/price", { maxAttempts: 3 });
    await clock.set("2026-01-01T00:05:00Z");
    await tw.tick();
    const slot = Date.parse("2026-01-01T00:05:00Z");
    expect(await status()).toMatchObject({ lastOutcome: "backed_off", nextRunAfter: slot + 120_000, consecutiveFailures: 0, lastError: expect.stringContaining("RateLimitedError") });
    // 120 s is beyond maxRetryAfter (60 s): the client gave up at once instead of holding the run.
    expect(server.current.received("/tenero/price")).toHaveLength(1);
    expect(events.filter((e) => e.event === "task.backoff")).toEqual([expect.objectContaining({ task: "tenero-prices", nextRunAfter: slot + 120_000 })]);
    expect(events.filter((e) => e.event === "http.rate_limited")).toEqual([expect.objectContaining({ client: "tenero", type: "web-ui-ip" })]);
  });

  it("retries within the run on the shared clock, then backs off when the retries are used up", async () => {
    server.current.script("/tenero/busy", { status: 429, headers: { "retry-after": "30" } });
    const clock = fakeClock("2026-01-01T00:00:00Z");
    const { tw, events, status } = await engine(clock, "/tenero/busy", { maxAttempts: 2 });
    await clock.set("2026-01-01T00:05:00Z");
    const ticked = tw.tick();
    await expect.poll(() => events.filter((e) => e.event === "http.retry").length).toBe(1);
    expect(server.current.received("/tenero/busy")).toHaveLength(1);
    await clock.advance("30s"); // the client's wait runs on the engine's clock
    await ticked;
    expect(server.current.received("/tenero/busy")).toHaveLength(2);
    expect(await status()).toMatchObject({ lastOutcome: "backed_off", nextRunAfter: Date.parse("2026-01-01T00:06:00Z"), consecutiveFailures: 0 });
  });
});
