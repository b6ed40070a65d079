import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LogEvent, TaskStatus } from "../../src/index.js";
import { fakeClock, type FakeClock } from "../../src/testing/index.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../../test/support/stores.js";
import { createPriceRefreshApp, TENERO_LIMITER, type PriceRefreshApp } from "./app.js";
import type { DatabaseTarget } from "./database.js";
import { startFakeHiro, swapTx, transferTx, type FakeHiro } from "./fake-hiro.js";
import { startFakeTenero, type FakeTenero, type FakeTeneroOptions } from "./fake-tenero.js";
import { priceKey, type CachedPrice } from "./prices.js";
import { listSwaps, reportSwaps, sweepCursor } from "./swaps.js";
import { PRICES_TASK, SWEEP_TASK, type SweepOptions } from "./tasks.js";

/**
 * Seed 003 rebuilt, end to end on real parts: a fake Tenero and a fake chain API over real HTTP on
 * 127.0.0.1, the example's tables and tickwork's on an SQLite file or PostgreSQL, the API on a real
 * listening server. Only the clock is fake: the engine, both HTTP clients and the fake Tenero's
 * budget windows all read it, and `tw.tick()` runs what is due.
 */

const day = "2026-03-02";
const at = (time: string) => Date.parse(`${day}T${time}Z`);
const BASE = ["stx", "sbtc", "alex"];
const AGENT_A = "SP1AGENTA0000000000000000000000000000";
const AGENT_B = "SP2AGENTB0000000000000000000000000000";
const OUTSIDER = "SP3SOMEONEELSE0000000000000000000000";
/**
 * Tenero's budget, but with its tokens there at once: the fake clock stands still during a tick, so
 * a run's 3-5 requests cannot wait for tokens to come back one every 600 ms.
 */
const TENERO_LIMIT = { max: 100, per: "1m", burst: 10 } as const;

const databases: { name: string; open(): { target: DatabaseTarget; cleanup(): Promise<void> } }[] = [
  {
    name: "sqlite-file",
    open() {
      const dir = mkdtempSync(join(tmpdir(), "tickwork-price-refresh-"));
      return { target: { kind: "sqlite", path: join(dir, "prices.db") }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: "postgres",
    open() {
      const schema = uniqueSchema();
      return { target: { kind: "postgres", url: DATABASE_URL, schema }, cleanup: () => dropSchema(schema) };
    },
  },
];

describe.each(databases)("price-refresh example on $name", (database) => {
  let cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    // In reverse: apps stop before their servers close and their database is dropped.
    for (const cleanup of cleanups.reverse()) await cleanup();
    cleanups = [];
  });

  interface World {
    clock: FakeClock;
    tenero: FakeTenero;
    hiro: FakeHiro;
    target: DatabaseTarget;
    events: LogEvent[];
    app: PriceRefreshApp;
    /** Another engine on the same database (a restart, or a second process). */
    restart(): Promise<PriceRefreshApp>;
    status(task: string): Promise<TaskStatus>;
    named(event: string): LogEvent[];
  }

  async function world(options: { tenero?: Omit<FakeTeneroOptions, "now">; sweep?: SweepOptions; adminToken?: string } = {}): Promise<World> {
    const opened = database.open();
    cleanups.push(opened.cleanup);
    const clock = fakeClock(at("10:00:00"));
    const tenero = await startFakeTenero({ ...options.tenero, now: () => clock.now() });
    cleanups.push(() => tenero.close());
    const hiro = await startFakeHiro();
    cleanups.push(() => hiro.close());
    const events: LogEvent[] = [];
    const make = async () => {
      const app = await createPriceRefreshApp({
        database: opened.target,
        teneroUrl: tenero.url,
        hiroUrl: hiro.url,
        agents: [AGENT_A, AGENT_B],
        baseTokens: BASE,
        clock,
        logger: (e) => events.push(e),
        logLevel: "debug",
        // The fake clock stands still during a tick, so a wait between attempts would never end:
        // one attempt per request here (production retries a 5xx once).
        retry: { maxAttempts: 1 },
        teneroLimit: TENERO_LIMIT,
        ...(options.sweep ? { sweep: options.sweep } : {}),
        ...(options.adminToken ? { adminToken: options.adminToken } : {}),
      });
      let stopped = false;
      const stop = app.stop.bind(app);
      app.stop = async () => {
        if (stopped) return;
        stopped = true;
        await stop();
      };
      cleanups.push(() => app.stop());
      return app;
    };
    const w: World = {
      clock,
      tenero,
      hiro,
      target: opened.target,
      events,
      app: await make(),
      async restart() {
        await w.app.stop();
        w.app = await make();
        return w.app;
      },
      async status(task) {
        const { tasks } = await w.app.tw.scheduler.status();
        return tasks.find((t) => t.name === task)!;
      },
      named: (event) => events.filter((e) => e.event === event),
    };
    return w;
  }

  const price = async (w: World, token: string) => w.app.tw.cache.get<CachedPrice>(priceKey(token));
  /** Tenero requests answered at or after `from` (the fake clock's time), as `token status`. */
  const teneroSince = (w: World, from: number) => w.tenero.requests.filter((r) => r.at >= from).map((r) => `${r.token} ${r.status}`);

  it("caches tenero:price:{id} with fetchedAt and the rate-limit info, for the base tokens and the agents' swap tokens", async () => {
    const w = await world();
    await reportSwaps(
      w.app.db,
      [
        { txId: "0xa1", agent: AGENT_A, tokenIn: "leo", tokenOut: "stx", amountIn: 5_000 },
        { txId: "0xa2", agent: AGENT_B, tokenIn: "stx", tokenOut: "sbtc", amountIn: 7 },
        // An operator's row: outside the competition's price set.
        { txId: "0xm1", agent: OUTSIDER, tokenIn: "odin", tokenOut: "stx", amountIn: 1, source: "manual" },
      ],
      w.clock.now(),
    );

    await w.clock.set(at("10:05:00"));
    await w.app.tw.tick();

    for (const token of ["stx", "sbtc", "alex", "leo"]) {
      const entry = await price(w, token);
      expect(entry, token).toMatchObject({
        fetchedAt: at("10:05:00"),
        value: {
          price: w.tenero.priceOf(token, at("10:05:00")),
          rateLimit: {
            type: "web-ui-ip",
            scope: "minute",
            limit: 100,
            exhausted: false,
            resetAt: at("10:06:00"),
            scopes: { minute: { limit: 100, resetAt: at("10:06:00") }, month: { limit: 50_000 } },
          },
        },
      });
    }
    expect((await price(w, "stx"))!.value.rateLimit!.scopes!.month!.remaining).toBeGreaterThanOrEqual(49_996);
    expect(await price(w, "odin")).toBeNull();
    expect(w.tenero.requests.map((r) => r.token).sort()).toEqual(["alex", "leo", "sbtc", "stx"]);
    expect(await w.status(PRICES_TASK)).toMatchObject({
      lastOutcome: "succeeded",
      lastResult: { succeeded: 4, failed: 0, deferred: 0, rateLimitRemaining: 96 },
      nextRunAt: at("10:10:00"),
    });
    // The sweep had never run, so it ran at this first tick too (immediately); then it keeps its own cadence.
    expect(await w.status(SWEEP_TASK)).toMatchObject({ lastRunAt: at("10:05:00"), lastScheduledAt: at("10:05:00"), nextRunAt: at("10:15:00") });
  });

  it("fills the price cache at the first tick of a first start, not a slot later; after a restart both tasks keep to their slots", async () => {
    const w = await world();
    await w.clock.set(at("10:00:20"));
    await w.app.tw.tick();
    for (const token of BASE) expect((await price(w, token))?.fetchedAt, token).toBe(at("10:00:20"));
    expect(await w.status(PRICES_TASK)).toMatchObject({ lastOutcome: "succeeded", lastScheduledAt: at("10:00:20"), nextRunAt: at("10:05:00"), runs: 1 });
    expect(await w.status(SWEEP_TASK)).toMatchObject({ lastOutcome: "succeeded", lastScheduledAt: at("10:00:20"), nextRunAt: at("10:15:00"), runs: 1 });
    expect(w.named("task.succeeded").map((e) => e.task).sort()).toEqual([SWEEP_TASK, PRICES_TASK].sort());

    // A restart: the new engine finds runs recorded, so nothing runs before the next slots.
    const app = await w.restart();
    await w.clock.set(at("10:01:00"));
    await app.tw.tick();
    expect(w.tenero.requests).toHaveLength(BASE.length);
    expect(w.hiro.requests).toHaveLength(1);
    expect(await w.status(PRICES_TASK)).toMatchObject({ runs: 1, nextRunAt: at("10:05:00") });
    await w.clock.set(at("10:05:00"));
    await app.tw.tick();
    expect(await w.status(PRICES_TASK)).toMatchObject({ runs: 2, lastScheduledAt: at("10:05:00") });
    expect(await w.status(SWEEP_TASK)).toMatchObject({ runs: 1 });
  });

  it("backs the price task off until the minute's reset when the budget runs out mid-run, while the sweep runs at its slot; prices refresh after the reset", async () => {
    const w = await world({ tenero: { minuteLimit: 10 } });
    await reportSwaps(
      w.app.db,
      [
        { txId: "0xa1", agent: AGENT_A, tokenIn: "leo", tokenOut: "stx", amountIn: 5_000 },
        { txId: "0xa2", agent: AGENT_B, tokenIn: "odin", tokenOut: "stx", amountIn: 9 },
      ],
      w.clock.now(),
    );

    await w.clock.set(at("10:10:00"));
    await w.app.tw.tick();
    expect((await w.status(PRICES_TASK)).lastResult).toEqual({ succeeded: 5, failed: 0, deferred: 0, rateLimitRemaining: 5 });
    // The sweep's first run (immediately) found no blocks; these land before its 10:15 slot.
    w.hiro.addBlock([swapTx(AGENT_A, { token_in: "leo", token_out: "stx", amount_in: 100 }, "success", "0xb1"), transferTx(AGENT_A)]);
    w.hiro.addBlock([swapTx(OUTSIDER, { token_in: "stx", token_out: "leo", amount_in: 3 })]);
    w.hiro.addBlock([swapTx(AGENT_B, { token_in: "odin", token_out: "stx", amount_in: 50 }, "abort_by_response", "0xb3")]);

    // 10:15, a new minute: other tenants behind the same egress IP have already used 7 of its 10 requests.
    await w.clock.set(at("10:15:00"));
    w.tenero.spend(7);
    await w.app.tw.tick();

    const prices = await w.status(PRICES_TASK);
    expect(prices).toMatchObject({
      lastOutcome: "backed_off",
      nextRunAfter: at("10:16:00"),
      consecutiveFailures: 0,
      lastResult: { succeeded: 3, failed: 0, deferred: 2, rateLimitRemaining: 0 },
    });
    // It stopped at the answer that said nothing was left, instead of spending requests on 429s.
    expect(teneroSince(w, at("10:15:00"))).toEqual(["stx 200", "sbtc 200", "alex 200"]);
    expect((await price(w, "leo"))!.fetchedAt).toBe(at("10:10:00"));
    expect(w.named("task.backoff")).toEqual([expect.objectContaining({ task: PRICES_TASK, nextRunAfter: at("10:16:00") })]);

    // The sweep ran at its 10:15 slot regardless, and moved its cursor to the tip.
    expect(await w.status(SWEEP_TASK)).toMatchObject({
      lastOutcome: "succeeded",
      lastScheduledAt: at("10:15:00"),
      lastResult: { scanned: 4, found: 2, inserted: 1, alreadyKnown: 0, pending: 2, rejected: 1, cursor: 3 },
    });
    expect(await sweepCursor(w.app.db)).toBe(3);
    expect(w.named("task.failed")).toEqual([]);

    // 10:20: a fresh minute. The two tokens left over go first, and every price is refreshed.
    await w.clock.set(at("10:20:00"));
    await w.app.tw.tick();
    expect(teneroSince(w, at("10:20:00"))).toEqual(["leo 200", "odin 200", "stx 200", "sbtc 200", "alex 200"]);
    expect(await w.status(PRICES_TASK)).toMatchObject({ lastOutcome: "succeeded", nextRunAfter: null, lastResult: { succeeded: 5, deferred: 0, rateLimitRemaining: 5 } });
    for (const token of ["stx", "sbtc", "alex", "leo", "odin"]) expect((await price(w, token))!.fetchedAt, token).toBe(at("10:20:00"));
  });

  it("backs off until Retry-After when the budget is already spent (429), without counting a failure", async () => {
    const w = await world();
    await w.clock.set(at("10:05:30"));
    w.tenero.spend(100);
    await w.app.tw.tick();

    expect(teneroSince(w, 0)).toEqual(["stx 429"]);
    expect(await w.status(PRICES_TASK)).toMatchObject({
      lastOutcome: "backed_off",
      nextRunAfter: at("10:06:00"),
      consecutiveFailures: 0,
      lastResult: { succeeded: 0, failed: 0, deferred: 3, rateLimitRemaining: 0 },
    });
    expect(w.named("http.failed")).toEqual([expect.objectContaining({ client: "tenero", status: 429, code: "TW_HTTP_RATE_LIMITED", requestId: expect.stringMatching(/-IAD$/) })]);
  });

  it("backs off without a request while another process has paused the shared Tenero budget, until the pause ends", async () => {
    const w = await world();
    // Another process's client got a 429 with Retry-After: 90 at 10:04:30; the pause is in the database.
    await w.clock.set(at("10:04:30"));
    await w.app.tw.limiter(TENERO_LIMITER, TENERO_LIMIT).pause(at("10:06:00"), "tenero answered 429");
    await w.clock.set(at("10:05:00"));
    await w.app.tw.tick();
    expect(w.tenero.requests).toEqual([]);
    expect(await w.status(PRICES_TASK)).toMatchObject({ lastOutcome: "backed_off", nextRunAfter: at("10:06:00"), consecutiveFailures: 0, lastResult: { succeeded: 0, failed: 0, deferred: 3 } });

    await w.clock.set(at("10:10:00"));
    await w.app.tw.tick();
    expect(teneroSince(w, 0)).toEqual(["stx 200", "sbtc 200", "alex 200"]);
    expect(await w.status(PRICES_TASK)).toMatchObject({ lastOutcome: "succeeded", nextRunAfter: null });
  });

  it("skips the slots inside a long backoff (a spent month budget), bounded by maxBackoff; the run after it spends no request while the budget is paused", async () => {
    const w = await world({ tenero: { monthLimit: 2 } });
    await w.clock.set(at("10:05:00"));
    await w.app.tw.tick();
    // The second answer leaves the month at 0: its reset (1 April) is weeks away, so the backoff is capped at 1h.
    expect(teneroSince(w, 0)).toEqual(["stx 200", "sbtc 200"]);
    expect(await w.status(PRICES_TASK)).toMatchObject({ lastOutcome: "backed_off", nextRunAfter: at("11:05:00"), lastResult: { succeeded: 2, deferred: 1, rateLimitRemaining: 0 } });

    for (const time of ["10:10:00", "10:30:00", "11:00:00"]) {
      await w.clock.set(at(time));
      await w.app.tw.tick();
    }
    expect(w.tenero.requests).toHaveLength(2);
    expect((await w.status(PRICES_TASK)).runs).toBe(1);

    // The answer that spent the month also paused the shared Tenero budget until 1 April, for every
    // process: the next run finds it paused and backs off again without asking Tenero for a 429.
    expect((await w.app.tw.limiter(TENERO_LIMITER, TENERO_LIMIT).state()).pausedUntil).toBe(Date.UTC(2026, 3, 1));
    await w.clock.set(at("11:05:00"));
    await w.app.tw.tick();
    expect(teneroSince(w, at("11:05:00"))).toEqual([]);
    expect(await w.status(PRICES_TASK)).toMatchObject({ lastOutcome: "backed_off", nextRunAfter: at("12:05:00"), lastResult: { succeeded: 0, failed: 0, deferred: 3 } });
  });

  it("counts a failing token against that token only; a run where every fetch fails is a failure", async () => {
    const w = await world();
    w.tenero.setFailure({ status: 503, tokens: ["sbtc"] });
    await w.clock.set(at("10:05:00"));
    await w.app.tw.tick();
    expect(await w.status(PRICES_TASK)).toMatchObject({ lastOutcome: "succeeded", lastResult: { succeeded: 2, failed: 1, deferred: 0 } });
    expect(await price(w, "sbtc")).toBeNull();
    expect(w.named("prices.token_failed")).toEqual([expect.objectContaining({ token: "sbtc", error: expect.stringContaining("503") })]);

    w.tenero.setFailure({ status: 503 });
    await w.clock.set(at("10:10:00"));
    await w.app.tw.tick();
    expect(await w.status(PRICES_TASK)).toMatchObject({ lastOutcome: "failed", consecutiveFailures: 1, lastError: expect.stringContaining("every price fetch failed (3)") });
    // The last good prices stay in the cache; readers judge their age.
    expect((await price(w, "stx"))!.fetchedAt).toBe(at("10:05:00"));
  });

  it("gives up on a slow answer after the per-attempt timeout (on the engine's clock) and goes on with the next token", async () => {
    const w = await world();
    // sbtc's answer would take a minute of real time; the client's 10 s timeout runs on the fake clock.
    w.tenero.setDelay(60_000, ["sbtc"]);
    await w.clock.set(at("10:05:00"));
    const ticked = w.app.tw.tick();
    await expect.poll(() => w.tenero.inFlight).toBe(1);
    await w.clock.advance("10s");
    await ticked;
    expect(await w.status(PRICES_TASK)).toMatchObject({ lastOutcome: "succeeded", lastResult: { succeeded: 2, failed: 1, deferred: 0 } });
    expect(w.named("http.failed")).toEqual([expect.objectContaining({ client: "tenero", code: "TW_HTTP_TIMEOUT", url: expect.stringContaining("/v1/tokens/sbtc/price") })]);
    // stx before the slow answer, alex after the 10 s it cost.
    expect((await price(w, "stx"))!.fetchedAt).toBe(at("10:05:00"));
    expect((await price(w, "alex"))!.fetchedAt).toBe(at("10:05:10"));
    expect(await price(w, "sbtc")).toBeNull();
  });

  it("serves GET /api/prices from the cache: fresh prices, and stale or missing tokens as null with their age", async () => {
    const w = await world();
    await w.clock.set(at("10:05:00"));
    await w.app.tw.tick();
    // A token whose refreshes have been failing for a while.
    await w.app.tw.cache.put(priceKey("old"), { price: 0.5, rateLimit: null } satisfies CachedPrice, { fetchedAt: at("09:40:00") });
    await w.clock.set(at("10:06:00"));
    const server = await w.app.listen();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const requestsBefore = w.tenero.requests.length;

    const res = await fetch(`${server.url}/api/prices?tokens=stx,alex,old,ghost,stx`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=30");
    const body = (await res.json()) as { asOf: number; maxAgeMs: number; prices: Record<string, unknown> };
    expect(body).toEqual({
      asOf: at("10:06:00"),
      maxAgeMs: 15 * 60_000,
      prices: {
        stx: { price: w.tenero.priceOf("stx", at("10:05:00")), fetchedAt: at("10:05:00"), ageMs: 60_000, status: "fresh" },
        alex: { price: w.tenero.priceOf("alex", at("10:05:00")), fetchedAt: at("10:05:00"), ageMs: 60_000, status: "fresh" },
        old: { price: null, fetchedAt: at("09:40:00"), ageMs: 26 * 60_000, status: "stale" },
        ghost: { price: null, fetchedAt: null, ageMs: null, status: "missing" },
      },
    });
    // Reading prices never calls Tenero.
    expect(w.tenero.requests).toHaveLength(requestsBefore);
  });

  it("answers a bad tokens query with 400 and a JSON error that says what is wrong", async () => {
    const w = await world();
    const server = await w.app.listen();
    const cases: [string, RegExp][] = [
      ["/api/prices", /tokens is required/],
      ["/api/prices?tokens=", /tokens\.0: a token id is/],
      ["/api/prices?tokens=stx,,sbtc", /tokens\.1: a token id is/],
      [`/api/prices?tokens=${encodeURIComponent("<script>")}`, /tokens\.0: a token id is/],
      [`/api/prices?tokens=${Array.from({ length: 51 }, (_, i) => `t${i}`).join(",")}`, /at most 50 tokens/],
    ];
    for (const [path, message] of cases) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status, path).toBe(400);
      expect(res.headers.get("content-type"), path).toMatch(/application\/json/);
      const body = (await res.json()) as { error: string; message: string; issues: unknown[] };
      expect(body.error, path).toBe("invalid_query");
      expect(body.message, path).toMatch(message);
      expect(body.issues.length, path).toBeGreaterThan(0);
    }
  });

  it("serves the scheduler's status, and refresh runs a task now (clearing its backoff) behind the admin token", async () => {
    const w = await world({ adminToken: "s3cret" });
    await w.clock.set(at("10:05:00"));
    w.tenero.spend(100);
    await w.app.tw.tick();
    // After the sweep's first run (immediately, at that tick): the manual refresh below finds this block.
    w.hiro.addBlock([swapTx(AGENT_A, { token_in: "leo", token_out: "stx", amount_in: 1 })]);
    const server = await w.app.listen();
    const post = (body: unknown, token: string | null = "s3cret") =>
      fetch(`${server.url}/api/scheduler/refresh`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });

    const status = (await (await fetch(`${server.url}/api/scheduler/status`)).json()) as { pausedUntil: number | null; tasks: TaskStatus[] };
    expect(status.tasks.map((t) => t.name)).toEqual([SWEEP_TASK, PRICES_TASK]);
    expect(status.tasks[1]).toMatchObject({ lastOutcome: "backed_off", nextRunAfter: at("10:06:00"), schedule: "every 5m" });

    expect((await post({ task: "all" }, null)).status).toBe(401);
    expect((await post({ task: "all" }, "wrong")).status).toBe(401);
    const unknown = await post({ task: "tenero" });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: string }).error).toBe("invalid_body");

    const swept = await post({ task: SWEEP_TASK });
    expect(swept.status).toBe(200);
    expect(await swept.json()).toMatchObject({ results: [{ task: SWEEP_TASK, outcome: "succeeded", result: { scanned: 1, found: 1, inserted: 1, cursor: 1 } }] });

    // A new minute, and a manual refresh does not wait for the backoff or the next slot.
    await w.clock.set(at("10:06:00"));
    const refreshed = await post({ task: PRICES_TASK });
    expect(await refreshed.json()).toMatchObject({ results: [{ task: PRICES_TASK, outcome: "succeeded", result: { succeeded: 4, failed: 0, deferred: 0 } }] });
    expect(await w.status(PRICES_TASK)).toMatchObject({ nextRunAfter: null, lastOutcome: "succeeded" });
    expect((await price(w, "leo"))!.fetchedAt).toBe(at("10:06:00"));
  });

  it("keeps the sweep's cursor in competition_state: after a restart a new engine scans only the blocks above it", async () => {
    const w = await world({ sweep: { blocksPerPage: 2 } });
    await reportSwaps(w.app.db, [{ txId: "0xreported", agent: AGENT_A, tokenIn: "leo", tokenOut: "stx", amountIn: 42 }], w.clock.now());
    for (let i = 0; i < 3; i++) w.hiro.addBlock([transferTx(OUTSIDER), swapTx(AGENT_B, { token_in: "odin", token_out: "stx", amount_in: i + 1 })]);

    await w.clock.set(at("10:15:00"));
    await w.app.tw.tick();
    expect((await w.status(SWEEP_TASK)).lastResult).toEqual({ scanned: 6, found: 3, inserted: 3, alreadyKnown: 0, pending: 1, rejected: 0, cursor: 3 });
    // Two blocks a page: the run paged through the cursor.
    expect(w.hiro.requests).toEqual(["after_height=0&limit=2", "after_height=2&limit=2"]);

    // The process restarts; meanwhile the agent's reported swap lands in block 4.
    const app = await w.restart();
    w.hiro.addBlock([swapTx(AGENT_A, { token_in: "leo", token_out: "stx", amount_in: 42 }, "success", "0xreported"), transferTx(AGENT_A)]);
    w.hiro.addBlock([swapTx(AGENT_A, { token_in: "sbtc", token_out: "stx", amount_in: 1 }, "success", "0xnew")]);
    expect(await sweepCursor(app.db)).toBe(3);

    await w.clock.set(at("10:30:00"));
    await app.tw.tick();
    // One page: it reached the tip.
    expect(w.hiro.requests.slice(2)).toEqual(["after_height=3&limit=2"]);
    expect(await w.status(SWEEP_TASK)).toMatchObject({
      lastOutcome: "succeeded",
      lastScheduledAt: at("10:30:00"),
      lastResult: { scanned: 3, found: 2, inserted: 1, alreadyKnown: 1, pending: 0, rejected: 0, cursor: 5 },
    });
    const swaps = await listSwaps(app.db);
    expect(swaps.find((s) => s.txId === "0xreported")).toMatchObject({ status: "confirmed", blockHeight: 4, source: "agent" });
    expect(swaps.filter((s) => s.status === "confirmed")).toHaveLength(5);
    expect(await sweepCursor(app.db)).toBe(5);
  });
});
