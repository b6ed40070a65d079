import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunResult, TaskStatus } from "../../src/index.js";
import type { ObjectStatus } from "../../src/runtime/cloudflare/index.js";
import { eventually } from "../../test/support/real-time.js";
import { startFakeHiro, swapTx, transferTx, type FakeHiro } from "../price-refresh/fake-hiro.js";
import { startFakeTenero, type FakeTenero } from "../price-refresh/fake-tenero.js";
import { PRICES_TASK, SWEEP_TASK } from "../price-refresh/tasks.js";
import { startExampleWorker, type ExampleWorker } from "./workerd.js";

/**
 * Seed 003's SchedulerDO, deployed as wrangler.jsonc says, in workerd: the same task code as the Node
 * example against a fake Tenero and a fake chain API over real HTTP on 127.0.0.1; prices in KV, the
 * swaps and the sweep's cursor in D1, events in the worker-logs service.
 */
const TOKEN = "admin-secret";
const AGENT = "SP1AGENTA0000000000000000000000000000";
const OUTSIDER = "SP3SOMEONEELSE0000000000000000000000";

describe("examples/cloudflare: seed 003's SchedulerDO", () => {
  let worker: ExampleWorker;
  let tenero: FakeTenero;
  let hiro: FakeHiro;

  beforeAll(async () => {
    tenero = await startFakeTenero({ prices: { stx: 1.25, sbtc: 97_000, alex: 0.5 } });
    hiro = await startFakeHiro();
    worker = await startExampleWorker({ TENERO_URL: tenero.url, HIRO_URL: hiro.url, BASE_TOKENS: "stx,sbtc,alex", COMPETITION_AGENTS: AGENT, ADMIN_TOKEN: TOKEN });
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([tenero?.close(), hiro?.close()]);
  });

  const refresh = async (task: string) => (await worker.fetch("/api/scheduler/refresh", { body: { task }, token: TOKEN })).body as { results: RunResult[] };
  const status = async () => (await worker.fetch("/api/scheduler/status", { token: TOKEN })).body as ObjectStatus;
  const task = (s: ObjectStatus, name: string) => s.tasks.find((t) => t.name === name) as TaskStatus;

  it("the first call arms the alarm; its first tick runs both tasks (they have never run) and re-arms for the next 5-minute slot", async () => {
    const s = await eventually(async () => {
      const current = await status();
      return current.lastTick !== null && current;
    }, "the first tick", 20_000);
    expect(s.store).toBe("durableObject(SchedulerDO:v1)");
    expect(s.logSink).toBe("workersLogs(landing-page)");
    expect(s.tasks.map((t) => [t.name, t.schedule])).toEqual([
      [SWEEP_TASK, "every 15m"],
      [PRICES_TASK, "every 5m"],
    ]);
    const next = task(s, PRICES_TASK).nextRunAt!;
    expect(next % 300_000).toBe(0);
    expect(next - Date.now()).toBeLessThanOrEqual(300_000);
    expect(s.lastTick!.alarmAt).toBe(next);
    expect(s.alarmAt).toBe(next);
    // Seed 003: a task whose lastRunAt is 0 runs on the first alarm, so KV has prices before any refresh.
    expect(task(s, PRICES_TASK)).toMatchObject({ runs: 1, lastOutcome: "succeeded", lastResult: { succeeded: 3, failed: 0 } });
    expect(task(s, SWEEP_TASK)).toMatchObject({ runs: 1, lastOutcome: "succeeded", lastResult: { scanned: 0, cursor: 0 } });
    // For the tick's own time, not a slot.
    const ranFor = task(s, PRICES_TASK).lastScheduledAt!;
    expect(ranFor).toBeGreaterThanOrEqual(s.lastTick!.at);
    expect(ranFor).toBeLessThanOrEqual(s.lastTick!.at + s.lastTick!.durationMs);
    const kv = await worker.mf.getKVNamespace("PRICES", "app");
    expect(JSON.parse((await kv.get("tenero:price:sbtc", "text"))!)).toMatchObject({ price: 97_000 });
  });

  it("the price refresh puts each token's price in KV, and GET /api/prices reads it from there", async () => {
    const [run] = (await refresh(PRICES_TASK)).results;
    expect(run).toMatchObject({ task: PRICES_TASK, outcome: "succeeded", result: { succeeded: 3, failed: 0, deferred: 0 } });
    const kv = await worker.mf.getKVNamespace("PRICES", "app");
    const stored = await kv.getWithMetadata("tenero:price:stx", "text");
    expect(JSON.parse(stored.value!)).toMatchObject({ price: 1.25, rateLimit: { remaining: expect.any(Number) } });
    expect(stored.metadata).toEqual({ fetchedAt: expect.any(Number) });

    const requestsBefore = tenero.requests.length;
    const { status: code, body } = await worker.fetch("/api/prices?tokens=stx,sbtc,welsh");
    expect(code).toBe(200);
    expect(body).toMatchObject({
      maxAgeMs: 900_000,
      prices: {
        stx: { price: 1.25, status: "fresh" },
        sbtc: { price: 97_000, status: "fresh" },
        welsh: { price: null, fetchedAt: null, status: "missing" },
      },
    });
    // The read path never calls Tenero.
    expect(tenero.requests.length).toBe(requestsBefore);
    expect((await worker.fetch("/api/prices?tokens=")).status).toBe(400);
  });

  it("the sweep records the agents' swaps in D1 and resumes from competition_state's cursor; their tokens join the price set", async () => {
    hiro.addBlock([swapTx(AGENT, { token_in: "welsh", token_out: "stx", amount_in: 500 }), transferTx(OUTSIDER)]);
    hiro.addBlock([swapTx(OUTSIDER, { token_in: "alex", token_out: "stx", amount_in: 7 })]);
    const [first] = (await refresh(SWEEP_TASK)).results;
    expect(first).toMatchObject({ outcome: "succeeded", result: { scanned: 3, found: 1, inserted: 1, cursor: 2 } });
    hiro.addBlock([swapTx(AGENT, { token_in: "usdh", token_out: "stx", amount_in: 9 }, "abort_by_response")]);
    const [second] = (await refresh(SWEEP_TASK)).results;
    expect(second).toMatchObject({ outcome: "succeeded", result: { scanned: 1, found: 1, inserted: 0, rejected: 1, cursor: 3 } });
    const d1 = await worker.mf.getD1Database("DB", "app");
    expect((await d1.prepare("SELECT last_block_height AS h FROM competition_state").first<{ h: number }>())?.h).toBe(3);
    expect((await d1.prepare("SELECT token_in, status FROM swaps ORDER BY token_in").all()).results).toEqual([
      { token_in: "usdh", status: "rejected" },
      { token_in: "welsh", status: "confirmed" },
    ]);
    // The seed's token query: every token an agent swapped from, the rejected swap's too.
    tenero.setPrice("welsh", 0.001);
    const [prices] = (await refresh(PRICES_TASK)).results;
    expect(prices).toMatchObject({ outcome: "succeeded", result: { succeeded: 5 } });
    expect((await worker.fetch("/api/prices?tokens=welsh")).body).toMatchObject({ prices: { welsh: { price: 0.001, status: "fresh" } } });
  });

  it("when Tenero's minute budget is spent the price task backs off (option C) while the sweep runs; nothing is counted as a failure", async () => {
    tenero.spend(tenero.remaining().minute);
    const results = (await refresh("all")).results;
    expect(results.find((r) => r.task === PRICES_TASK)).toMatchObject({ outcome: "backed_off" });
    expect(results.find((r) => r.task === SWEEP_TASK)).toMatchObject({ outcome: "succeeded" });
    const prices = task(await status(), PRICES_TASK);
    expect(prices.nextRunAfter).toBeGreaterThan(Date.now());
    expect(prices.consecutiveFailures).toBe(0);
    const logged = await worker.logs("landing-page");
    expect(logged.find((e) => e.message === "task.backoff")).toMatchObject({ level: "WARN", context: { task: PRICES_TASK, object: "SchedulerDO:v1" } });
    expect(logged.find((e) => e.message === "engine.started")).toMatchObject({ context: { logSink: "workersLogs(landing-page)" } });
  });

  it("pause and resume are ops routes behind the admin token", async () => {
    expect((await worker.fetch("/api/scheduler/status")).status).toBe(401);
    expect((await worker.fetch("/api/scheduler/status", { token: "wrong" })).status).toBe(401);
    const paused = await worker.fetch("/api/scheduler/pause", { body: { until: "1h" }, token: TOKEN });
    expect(paused.status).toBe(200);
    expect((await status()).pausedUntil).toBe((paused.body as { pausedUntil: number }).pausedUntil);
    expect((await worker.fetch("/api/scheduler/pause", { body: { until: "soon" }, token: TOKEN })).status).toBe(400);
    expect((await worker.fetch("/api/scheduler/resume", { method: "POST", token: TOKEN })).status).toBe(200);
    expect((await status()).pausedUntil).toBeNull();
  });
});
