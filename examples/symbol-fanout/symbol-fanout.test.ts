import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidInputError, createTickwork, toMs, type LogEvent } from "../../src/index.js";
import { EmptyStateError } from "../../src/fanout/index.js";
import { fakeClock, type FakeClock } from "../../src/testing/index.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../../test/support/stores.js";
import { openDatabase as openSharedDatabase } from "../support/database.js";
import { CRAWL_TASK, FANOUT_NAME, RECONCILE_EVERY, RETRY_STEPS, createSymbolFanoutApp, type SymbolFanoutApp } from "./app.js";
import type { DatabaseTarget } from "./database.js";
import { randomFailures, type FailureDecider } from "./failures.js";
import { ALERTS_PER_LOCATION, LOCATIONS, startFleet, type Fleet } from "./fleet.js";
import { LastEnabledSymbolError } from "./registry.js";
import { PushLog, runRound, runUntilConverged, type Round } from "./rounds.js";
import { DEMO_SYMBOLS, STATIC_SYMBOL_INFO, symbolNames, type SymbolMetadata } from "./symbols.js";

/**
 * Seed 001 rebuilt, end to end on real parts: 77 receivers as real HTTP servers on 127.0.0.1 (7
 * collectors, 70 alert receivers, each keeping its state in a JSON file), the registry's table and
 * tickwork's on an SQLite file or PostgreSQL. Only the clock is fake: `runRound` jumps it to the
 * fan-out's next wake-up and runs one `tick()`.
 */

const START = Date.parse("2026-03-02T09:00:00Z");
const TARGETS = LOCATIONS.length * (1 + ALERTS_PER_LOCATION);

const databases: { name: string; open(): { target: DatabaseTarget; cleanup(): Promise<void> } }[] = [
  {
    name: "sqlite-file",
    open() {
      const dir = mkdtempSync(join(tmpdir(), "tickwork-symbol-fanout-"));
      return { target: { kind: "sqlite", path: join(dir, "registry.db") }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
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

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  // In reverse: the app stops before the receivers close and the database goes.
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

interface World {
  clock: FakeClock;
  fleet: Fleet;
  app: SymbolFanoutApp;
  log: PushLog;
  events: LogEvent[];
  storageDir: string;
  round(): Promise<Round>;
  converge(): Promise<Round[]>;
}

async function world(database: (typeof databases)[number], options: { failure?: FailureDecider; hangMs?: number } = {}): Promise<World> {
  const opened = database.open();
  cleanups.push(opened.cleanup);
  const dir = mkdtempSync(join(tmpdir(), "tickwork-symbol-receivers-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const fleet = await startFleet({ storageDir: dir, hangMs: options.hangMs ?? 20, ...(options.failure ? { failure: options.failure } : {}) });
  cleanups.push(() => fleet.close());
  const clock = fakeClock(START);
  const log = new PushLog();
  const events: LogEvent[] = [];
  const app = await createSymbolFanoutApp({ database: opened.target, targets: fleet.targets, clock, logger: (e) => events.push(e), logLevel: "debug", onPush: log.record });
  cleanups.push(() => app.stop());
  await app.registry.upsert(DEMO_SYMBOLS);
  const driver = { app, clock, log };
  return {
    clock,
    fleet,
    app,
    log,
    events,
    storageDir: dir,
    async round() {
      const round = await runRound(driver);
      if (!round) throw new Error("nothing scheduled");
      return round;
    },
    converge: () => runUntilConverged(driver),
  };
}

const enabledMetadata = (): SymbolMetadata[] =>
  DEMO_SYMBOLS.filter((s) => s.enabled)
    .map(({ enabled: _enabled, ...m }) => m)
    .sort((a, b) => (a.symbol < b.symbol ? -1 : 1));
const ids = (round: Round, which: "pushes" | "failed") => round[which].map((p) => p.target).sort();

async function postJson(url: string, body: string): Promise<{ status: number; body: { error?: string } }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  return { status: res.status, body: (await res.json()) as { error?: string } };
}

describe.each(databases)("symbol-fanout on $name", (database) => {
  it("all 77 receivers converge after 20% of pushes fail, each retry going only to the receivers behind, on the seed's backoff", async () => {
    const failure = randomFailures({ seed: 7, rate: 0.2, modes: ["error", "hang"] });
    const w = await world(database, { failure });
    const rounds = await w.converge();

    expect(rounds[0]!.reason).toBe("reconcile");
    expect(rounds[0]!.pushes).toHaveLength(TARGETS);
    expect(rounds[0]!.failed.length).toBeGreaterThan(TARGETS * 0.1);
    expect(rounds.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < rounds.length; i++) {
      expect(rounds[i]!.reason).toBe("retry");
      expect(ids(rounds[i]!, "pushes")).toEqual(ids(rounds[i - 1]!, "failed"));
      expect(rounds[i]!.at - rounds[i - 1]!.at).toBe(toMs(RETRY_STEPS[i - 1]!));
    }
    const last = rounds.at(-1)!;
    expect(last.failed).toEqual([]);
    expect(last.status.targets.every((t) => t.version === 1 && !t.behind)).toBe(true);
    expect(last.nextReason).toBe("reconcile");
    expect(last.nextAt).toBe(last.at + toMs(RECONCILE_EVERY));
    // Both kinds of failure happened, and each failed push was one the receivers failed on purpose.
    const failed = rounds.flatMap((r) => r.failed);
    expect(new Set(failed.map((f) => f.result))).toEqual(new Set(["http", "network"]));
    const totals = w.fleet.totals();
    expect(failed).toHaveLength(totals.errors + totals.hung);
    const views = await w.fleet.views();
    expect(views).toHaveLength(TARGETS);
    expect(views.every((v) => v.source === "pushed" && v.version === 1)).toBe(true);
  });

  it("a receiver restarted before any push runs on its default, then on the pushed list, then on the stored list after another restart", async () => {
    const w = await world(database);
    const alert = w.fleet.get("alert-apac-03");
    const collector = w.fleet.get("collector-oc");
    await alert.restart();
    await collector.restart();
    expect(await w.fleet.view(alert.id)).toMatchObject({ source: "default", symbols: null });
    expect(await w.fleet.view(collector.id)).toMatchObject({ source: "default", symbols: STATIC_SYMBOL_INFO });

    await w.converge();
    expect(await w.fleet.view(alert.id)).toMatchObject({ source: "pushed", symbols: symbolNames(enabledMetadata()), version: 1 });
    expect(await w.fleet.view(collector.id)).toMatchObject({ source: "pushed", symbols: enabledMetadata(), version: 1 });

    await alert.restart();
    await collector.restart();
    expect(await w.fleet.view(alert.id)).toMatchObject({ source: "stored", symbols: symbolNames(enabledMetadata()), version: null });
    expect(await w.fleet.view(collector.id)).toMatchObject({ source: "stored", symbols: enabledMetadata(), version: null });

    await w.app.setEnabled("DOGE", true);
    await w.converge();
    expect(await w.fleet.view(alert.id)).toMatchObject({ source: "pushed", version: 2 });
    expect((await w.fleet.view(alert.id)).symbols).toContain("DOGE");
  });
});

describe("symbol-fanout on sqlite-file", () => {
  const sqlite = databases[0]!;

  it("sends collectors the full metadata and alert receivers the symbol names only", async () => {
    const w = await world(sqlite);
    await w.converge();
    const expected = enabledMetadata();
    for (const view of await w.fleet.views()) {
      expect(view.source).toBe("pushed");
      expect(view.symbols).toEqual(view.kind === "collector" ? expected : expected.map((s) => s.symbol));
    }
    // What each kept in its storage (the Durable Object's KV) is the same projection.
    expect(JSON.parse(readFileSync(join(w.storageDir, "collector-weur.json"), "utf8"))).toEqual(expected);
    expect(JSON.parse(readFileSync(join(w.storageDir, "alert-weur-01.json"), "utf8"))).toEqual(expected.map((s) => s.symbol));
  });

  it("retries a receiver that keeps failing 30s, 1m, 2m, 5m, 15m and then every 15m after, pushing to it alone", async () => {
    const w = await world(sqlite);
    const collector = w.fleet.get("collector-eeur");
    collector.failNext("error", "error", "error", "error", "error", "error");
    const rounds = await w.converge();
    expect(rounds.map((r) => r.pushes.length)).toEqual([TARGETS, 1, 1, 1, 1, 1, 1]);
    expect(rounds.slice(1).every((r) => r.pushes[0]!.target === collector.id)).toBe(true);
    expect(rounds.slice(1).map((r, i) => r.at - rounds[i]!.at)).toEqual(["30s", "1m", "2m", "5m", "15m", "15m"].map(toMs));
    expect(rounds.map((r) => r.status.consecutiveFailures)).toEqual([1, 2, 3, 4, 5, 6, 0]);
    expect(w.events.filter((e) => e.event === "fanout.retry_scheduled")).toHaveLength(6);
    expect(collector.stats).toMatchObject({ pushes: 7, errors: 6, accepted: 1 });
  });

  it("pushes an admin change at once even while a retry waits 15 minutes", async () => {
    const w = await world(sqlite);
    w.fleet.get("collector-eeur").failNext("error", "error", "error", "error", "error");
    for (let i = 0; i < 5; i++) await w.round();
    const waiting = await w.app.symbols.status();
    expect(waiting).toMatchObject({ nextReason: "retry", nextAt: w.clock.now() + toMs("15m") });

    await w.clock.advance("1m");
    const change = await w.app.setEnabled("DOGE", true);
    expect(change).toEqual({ symbol: "DOGE", enabled: true, changed: true, version: 2 });
    const round = await w.round();
    expect(round.at).toBe(START + toMs("30s") + toMs("1m") + toMs("2m") + toMs("5m") + toMs("1m"));
    expect(round.reason).toBe("push");
    expect(round.pushes).toHaveLength(TARGETS);
    expect(round.converged).toBe(true);
    expect((await w.fleet.view("collector-eeur")).symbols).toContainEqual({ symbol: "DOGE", ticker: "DOGE-USD", decimals: 0, priceScale: 100_000 });
  });

  it("refuses an empty symbol list in the registry, the fan-out and the receivers, and every receiver keeps its symbols", async () => {
    const w = await world(sqlite);
    await w.converge();
    const enabled = enabledMetadata().map((s) => s.symbol);
    for (const symbol of enabled.slice(1)) await w.app.setEnabled(symbol, false);
    await expect(w.app.setEnabled(enabled[0]!, false)).rejects.toBeInstanceOf(LastEnabledSymbolError);
    expect((await w.app.registry.enabled()).map((s) => s.symbol)).toEqual([enabled[0]]);
    await w.converge();
    const before = await w.fleet.views();

    await expect(w.app.symbols.push([])).rejects.toBeInstanceOf(EmptyStateError);

    // A transient empty read of the table (the seed's reason for the guard): nothing is sent.
    await w.app.db.query("UPDATE fanout_symbols SET enabled = 0");
    await w.app.symbols.reconcileNow();
    const pushesBefore = w.fleet.totals().pushes;
    const refused = await w.round();
    expect(refused.pushes).toEqual([]);
    expect(w.fleet.totals().pushes).toBe(pushesBefore);
    expect(refused.status.lastError).toMatch(/state is empty/);
    expect(refused).toMatchObject({ nextReason: "retry", nextAt: refused.at + toMs("30s") });

    const alert = w.fleet.get("alert-weur-01");
    const direct = await postJson(`${alert.url}/symbols`, "[]");
    expect(direct).toMatchObject({ status: 422, body: { error: "empty_state" } });
    expect(await postJson(`${alert.url}/symbols`, '[{"not":"a symbol"}]')).toMatchObject({ status: 400, body: { error: "invalid_state" } });
    expect(await w.fleet.views()).toEqual(before);

    await w.app.db.query("UPDATE fanout_symbols SET enabled = 1 WHERE symbol = $1", [enabled[0]!]);
    const recovered = await w.round();
    expect(recovered).toMatchObject({ converged: true, version: before[0]!.version });
    expect(recovered.pushes).toEqual([]);
  });

  it("a receiver that is down during a round misses the push and gets it on the 30s retry", async () => {
    const w = await world(sqlite);
    const collector = w.fleet.get("collector-sam");
    await collector.stop();
    const first = await w.round();
    expect(first.failed.map((f) => [f.target, f.result])).toEqual([[collector.id, "network"]]);
    expect(first.failed[0]!.error).toMatch(/ECONNREFUSED/);
    await collector.start();
    const retry = await w.round();
    expect(retry.at - first.at).toBe(toMs("30s"));
    expect(retry.pushes.map((p) => p.target)).toEqual([collector.id]);
    expect(retry.converged).toBe(true);
    expect(await w.fleet.view(collector.id)).toMatchObject({ source: "pushed", symbols: enabledMetadata() });
  });

  it("a receiver that never answers fails at the fan-out's 30s timeout without holding back the other 76", async () => {
    const w = await world(sqlite, { hangMs: Infinity });
    const silent = w.fleet.get("alert-oc-10");
    silent.failNext("hang");
    const ticking = w.app.tw.tick();
    // The other 76 answer over real HTTP; then 30 s pass on the engine's clock.
    await waitFor(() => w.log.outcomes.length === TARGETS - 1);
    expect(w.log.outcomes.every((o) => o.result === "ok")).toBe(true);
    await w.clock.advance("30s");
    await ticking;
    await waitFor(() => w.log.outcomes.length === TARGETS);
    const timedOut = w.log.outcomes.at(-1)!;
    expect(timedOut).toMatchObject({ target: silent.id, result: "timeout" });
    expect(timedOut.error).toMatch(/no answer within 30000 ms/);
    const status = await w.app.symbols.status();
    expect(status.targets.filter((t) => t.behind).map((t) => t.id)).toEqual([silent.id]);
    expect(status).toMatchObject({ nextReason: "retry", nextAt: START + toMs("30s") });
    const retry = await w.round();
    expect(retry.pushes.map((p) => p.target)).toEqual([silent.id]);
    expect(retry.converged).toBe(true);
  });

  it("re-pushes to all 77 every 15 minutes, which restores a receiver that lost its storage", async () => {
    const w = await world(sqlite);
    await w.converge();
    const collector = w.fleet.get("collector-wnam");
    await collector.restart({ wipeStorage: true });
    expect(await w.fleet.view(collector.id)).toMatchObject({ source: "default", symbols: STATIC_SYMBOL_INFO });
    const round = await w.round();
    expect(round.at).toBe(START + toMs("15m"));
    expect(round.reason).toBe("reconcile");
    expect(round.pushes).toHaveLength(TARGETS);
    expect(w.events.filter((e) => e.event === "fanout.reconciled")).toHaveLength(2);
    expect(await w.fleet.view(collector.id)).toMatchObject({ source: "pushed", symbols: enabledMetadata() });
  });

  it("reconciles after each crawler run while the crawler is enabled and every 15 minutes while it is not (the seed's rule)", async () => {
    const w = await world(sqlite);
    const at = (clock: string) => Date.parse(`2026-03-02T${clock}:00Z`);
    const tickAt = async (clock: string) => {
      await w.clock.set(at(clock));
      const from = w.log.outcomes.length;
      const result = await w.app.tw.tick();
      return { pushes: w.log.outcomes.length - from, nextWakeAt: result.nextWakeAt, status: await w.app.symbols.status() };
    };
    // 09:00, the crawler disabled (no flag yet): the reconciliation has its own 15 minutes.
    expect(await w.app.crawler.enabled()).toBe(false);
    await w.converge();
    expect(await w.app.symbols.status()).toMatchObject({ nextReason: "reconcile", nextAt: at("09:15") });

    // Enabled: the reconciliation already due at 09:15 runs, and from then on rides on the crawler's hourly runs.
    await w.app.setCrawlerEnabled(true);
    const quarter = await tickAt("09:15");
    expect(quarter).toMatchObject({ pushes: TARGETS, nextWakeAt: at("10:00"), status: { nextAt: null, nextReason: null } });
    expect((await tickAt("09:45")).pushes).toBe(0);
    const crawl = await tickAt("10:00");
    expect(crawl).toMatchObject({ pushes: TARGETS, nextWakeAt: at("11:00"), status: { converged: true, nextAt: null } });
    const runs = (await w.app.tw.scheduler.status()).tasks.find((t) => t.name === CRAWL_TASK);
    expect(runs).toMatchObject({ lastOutcome: "succeeded", lastResult: { crawled: DEMO_SYMBOLS.length } });

    // Disabled: the crawler's next run skips, and the fan-out goes back to its own 15 minutes from there.
    await w.app.setCrawlerEnabled(false);
    const skipped = await tickAt("11:00");
    expect(skipped).toMatchObject({ pushes: 0, nextWakeAt: at("11:15"), status: { nextReason: "reconcile", nextAt: at("11:15") } });
    expect((await w.app.tw.scheduler.status()).tasks.find((t) => t.name === CRAWL_TASK)).toMatchObject({ lastResult: { skipped: "the crawler is disabled" } });
    expect(await tickAt("11:15")).toMatchObject({ pushes: TARGETS, nextWakeAt: at("11:30") });
    expect(w.events.filter((e) => e.event === "fanout.reconciled").map((e) => e.time)).toEqual([at("09:00"), at("09:15"), at("10:00"), at("11:15")]);
  });

  it("retries a receiver that fails the reconciliation push 30s later, though it had the version before", async () => {
    const w = await world(sqlite);
    await w.converge();
    const collector = w.fleet.get("collector-enam");
    await collector.restart({ wipeStorage: true });
    collector.failNext("error");
    const reconcile = await w.round();
    expect(reconcile.reason).toBe("reconcile");
    expect(reconcile.failed.map((f) => f.target)).toEqual([collector.id]);
    expect(await w.fleet.view(collector.id)).toMatchObject({ source: "default" });
    const retry = await w.round();
    expect(retry.at - reconcile.at).toBe(toMs("30s"));
    expect(retry.pushes.map((p) => p.target)).toEqual([collector.id]);
    expect(await w.fleet.view(collector.id)).toMatchObject({ source: "pushed", symbols: enabledMetadata() });
  });

  it("the admin API enables and disables over HTTP, pushes at once, and answers 400, 404 and 409", async () => {
    const w = await world(sqlite);
    await w.converge();
    const api = await w.app.listen();
    const post = async (path: string) => {
      const res = await fetch(`${api.url}${path}`, { method: "POST" });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    expect(await post("/api/symbols/DOGE/enable")).toEqual({ status: 200, body: { symbol: "DOGE", enabled: true, changed: true, version: 2 } });
    expect(await (await fetch(`${api.url}/api/fanout`)).json()).toMatchObject({ version: 2, converged: false, nextReason: "push", behind: expect.any(Array) });
    await w.round();
    expect(await (await fetch(`${api.url}/api/fanout`)).json()).toMatchObject({ version: 2, converged: true, behind: [], targets: TARGETS });
    expect(await post("/api/symbols/DOGE/enable")).toEqual({ status: 200, body: { symbol: "DOGE", enabled: true, changed: false, version: 2 } });
    expect(await post("/api/symbols/NOPE/enable")).toMatchObject({ status: 404, body: { error: "unknown_symbol" } });
    expect(await post("/api/symbols/b%40d/enable")).toMatchObject({ status: 400, body: { error: "invalid_symbol" } });
    expect((await post("/api/symbols/DOGE/frobnicate")).status).toBe(404);
    const enabled = (await w.app.registry.enabled()).map((s) => s.symbol);
    for (const symbol of enabled.slice(1)) expect((await post(`/api/symbols/${symbol}/disable`)).status).toBe(200);
    const last = await post(`/api/symbols/${enabled[0]}/disable`);
    expect(last).toMatchObject({ status: 409, body: { error: "empty_state_refused" } });
    expect(String(last.body.message)).toMatch(/last enabled symbol/);
    const listed = (await (await fetch(`${api.url}/api/symbols`)).json()) as { symbols: { symbol: string; enabled: boolean }[] };
    expect(listed.symbols.filter((s) => s.enabled).map((s) => s.symbol)).toEqual([enabled[0]]);
    expect((await post("/api/fanout/reconcile")).status).toBe(202);
    expect((await w.round()).reason).toBe("reconcile");
    expect(await (await fetch(`${api.url}/api/crawler`)).json()).toEqual({ enabled: false });
    expect(await post("/api/crawler/enable")).toEqual({ status: 200, body: { enabled: true } });
    expect(await w.app.crawler.enabled()).toBe(true);
    expect(await post("/api/crawler/disable")).toEqual({ status: 200, body: { enabled: false } });
  });

  it("declares itself on an engine and a database another part of the process opened, under prefixed names", async () => {
    const opened = sqlite.open();
    cleanups.push(opened.cleanup);
    const dir = mkdtempSync(join(tmpdir(), "tickwork-symbol-receivers-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const fleet = await startFleet({ storageDir: dir, locations: ["weur", "apac"], alertsPerLocation: 2 });
    cleanups.push(() => fleet.close());
    const { store, db } = await openSharedDatabase(opened.target, []);
    const clock = fakeClock(START);
    const tw = await createTickwork({ store, clock, logger: () => {}, handleSignals: false });
    cleanups.push(async () => {
      await tw.stop();
      await db.close();
    });
    // Another example's fan-out on the same engine.
    tw.fanout("symbols", { groups: { other: { targets: ["elsewhere"] } }, send: () => {} });

    const log = new PushLog();
    const app = await createSymbolFanoutApp({ tw, db, targets: fleet.targets, onPush: log.record });
    expect(app.symbols.name).toBe(FANOUT_NAME);
    expect([...tw.fanouts.keys()].sort()).toEqual(["symbol-fanout.symbols", "symbols"]);
    await app.registry.upsert(DEMO_SYMBOLS);
    const rounds = await runUntilConverged({ app, clock, log });
    expect(rounds[0]!.pushes).toHaveLength(6);
    expect(await db.query("SELECT count(*) AS n FROM fanout_symbols")).toEqual([{ n: DEMO_SYMBOLS.length }]);

    // stop() leaves a shared engine to its owner.
    await app.stop();
    await expect(tw.tick()).resolves.toMatchObject({ carried: false });
    await expect(createSymbolFanoutApp({ tw, db, targets: fleet.targets })).rejects.toThrow(/already declared/);
  });

  it("refuses bad options with a clear error", async () => {
    const target = { id: "a", url: "http://127.0.0.1:1" };
    const database = { kind: "sqlite", path: ":memory:" } as const;
    await expect(createSymbolFanoutApp({ database, targets: { collectors: [], alerts: [target] } })).rejects.toThrow(/targets: collectors: Too small: expected array to have >=1 items/);
    await expect(createSymbolFanoutApp({ database, targets: { collectors: [target], alerts: [target] } })).rejects.toThrow(/unique across collectors and alerts/);
    await expect(createSymbolFanoutApp({ database, targets: { collectors: [{ id: "c", url: "not a url" }], alerts: [target] } })).rejects.toThrow(InvalidInputError);
    await expect(createSymbolFanoutApp({ targets: { collectors: [target], alerts: [{ id: "b", url: target.url }] } } as never)).rejects.toThrow(/give \{ database \}/);
  });
});

/** Polls a condition that real I/O makes true (HTTP answers arriving), not one a fake clock would. */
async function waitFor(condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
