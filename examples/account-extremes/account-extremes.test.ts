import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidInputError, createTickwork, toMs, type Duration, type LogEvent, type TaskStatus } from "../../src/index.js";
import { webhookSender } from "../../src/delivery/index.js";
import { fakeClock, type FakeClock } from "../../src/testing/index.js";
import { openDatabase as openSupportDatabase } from "../support/database.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../../test/support/stores.js";
import { DAILY_DELIVERY, HOURLY_DELIVERY, PIPELINE_TASK, createAccountExtremesApp, type AccountExtremesApp, type AccountExtremesAppOptions, type PipelineResult } from "./app.js";
import type { DatabaseTarget } from "./database.js";
import { priceTicks, trackedAccounts, valueAt, type PriceTick, type TrackedAccount } from "./market.js";
import { MINUTE } from "./periods.js";
import { startReceiver, type Receiver, type ReceiverOptions } from "./receiver.js";
import { COUNT_BY_DAILY_DATE, GET_TRACKING, type TrackingRow } from "./sql.js";

/**
 * Seed 000 rebuilt, end to end on real parts: the receiver is a real HTTP service on 127.0.0.1 that
 * verifies signatures and upserts, the example's tables and tickwork's share an SQLite file (or
 * PostgreSQL), and only the clock is fake: `tw.tick()` runs the pipeline task and the deliveries.
 */

const SECRET = `whsec_${Buffer.from("account-extremes-test-secret-32b").toString("base64")}`;
const at = (iso: string) => Date.parse(`${iso}Z`);
const SECOND = 1_000;

const databases: { name: string; open(): { target: DatabaseTarget; cleanup(): Promise<void> } }[] = [
  {
    name: "sqlite-file",
    open() {
      const dir = mkdtempSync(join(tmpdir(), "tickwork-account-extremes-"));
      return { target: { kind: "sqlite", path: join(dir, "extremes.db") }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
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
const sqliteFile = databases[0]!;

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  // In reverse: the app stops before its receiver closes and its database is removed.
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

interface World {
  clock: FakeClock;
  receiver: Receiver;
  app: AccountExtremesApp;
  events: LogEvent[];
  named(event: string): LogEvent[];
  pipeline(): Promise<PipelineResult>;
  tracking(accountId: string): Promise<TrackingRow>;
}

async function world(options: { start: string; database?: (typeof databases)[number]; receiver?: Omit<ReceiverOptions, "secret" | "now">; cadence?: Duration }): Promise<World> {
  const opened = (options.database ?? sqliteFile).open();
  cleanups.push(opened.cleanup);
  const clock = fakeClock(at(options.start));
  const receiver = await startReceiver({ secret: SECRET, now: () => clock.now(), ...options.receiver });
  cleanups.push(() => receiver.close());
  const events: LogEvent[] = [];
  const app = await createAccountExtremesApp({
    database: opened.target,
    receiverUrl: receiver.url,
    secret: SECRET,
    clock,
    logger: (e) => events.push(e),
    logLevel: "debug",
    ...(options.cadence ? { cadence: options.cadence } : {}),
  });
  cleanups.push(() => app.stop());
  return {
    clock,
    receiver,
    app,
    events,
    named: (event) => events.filter((e) => e.event === event),
    async pipeline() {
      const { tasks } = await app.tw.scheduler.status();
      return tasks.find((t: TaskStatus) => t.name === PIPELINE_TASK)!.lastResult as PipelineResult;
    },
    async tracking(accountId) {
      const [row] = await app.db.query<TrackingRow>(GET_TRACKING, [accountId]);
      return row!;
    },
  };
}

interface TickLog {
  at: number;
  used: number;
  carried: boolean;
  nextWakeAt: number | null;
}

/** Ticks the engine, each time at the moment it asked for, until it next wants to run after `until`. */
async function drive(w: World, until: number): Promise<TickLog[]> {
  const log: TickLog[] = [];
  for (;;) {
    const started = w.clock.now();
    const result = await w.app.tw.tick();
    log.push({ at: started, used: result.outbound.used, carried: result.carried, nextWakeAt: result.nextWakeAt });
    if (result.nextWakeAt === null || result.nextWakeAt > until) {
      if (w.clock.now() < until) await w.clock.set(until);
      return log;
    }
    await w.clock.set(Math.max(result.nextWakeAt, w.clock.now()));
  }
}

/** What the receiver should hold for an account over some ticks: extremes, and the value at a closing tick. */
function extremes(account: TrackedAccount, ticks: readonly PriceTick[]) {
  const values = ticks.map((t) => valueAt(account, t.price));
  return { peak: Math.max(...values), bottom: Math.min(...values) };
}

describe.each(databases)("account-extremes with 5,000 tracked accounts on $name", (database) => {
  it(
    "sends at most 500 callbacks a tick, carries the rest 100 ms later, retries on 1m 5m 15m 1h 2h, and delivers no daily callback twice",
    async () => {
      // The pipeline runs every 5 minutes here (production: every minute), to keep the run short.
      const w = await world({ start: "2026-03-01T23:30:00", database, receiver: { failures: { error: 0.1 }, seed: 7 }, cadence: "5m" });
      const accounts = trackedAccounts(5_000, 11);
      const ticks = priceTicks({ seed: 3, from: at("2026-03-01T23:30:00"), to: at("2026-03-02T00:05:00") });
      await w.app.track(accounts);
      expect(await w.app.recordTicks(ticks)).toEqual({ recorded: ticks.length, late: 0 });

      // One hourly callback recovers on its sixth attempt; one daily callback never does.
      const recovering = "hourly:acct-00007:2026-03-01T23:00:00.000Z";
      const doomed = "daily:acct-00042:2026-03-01";
      w.receiver.script(recovering, ["error", "error", "error", "error", "error", "ok"]);
      w.receiver.script(doomed, ["error", "error", "error", "error", "error", "error", "ok"]);

      // Up to midnight the pipeline folds the feed's ticks; nothing closes, nothing is sent.
      const beforeMidnight = await drive(w, at("2026-03-02T00:00:00") - 1);
      expect(beforeMidnight.every((t) => t.used === 0)).toBe(true);
      expect(w.receiver.stats.requests).toBe(0);

      // 00:00: the feed passes the hour and the day: 5,000 hourly and 5,000 daily callbacks, 500 a tick.
      const midnight = await drive(w, at("2026-03-02T00:01:00") - 1);
      expect(await w.pipeline()).toMatchObject({
        processed: { hoursClosed: ["2026-03-01T23:00:00.000Z"], daysClosed: ["2026-03-01"] },
        hourly: { emitted: 5_000, skipped: 0 },
        daily: { ready: true, emitted: 5_000, skipped: 0 },
      });
      const burst = midnight.filter((t) => t.used > 0);
      expect(burst.map((t) => t.used)).toEqual(Array(20).fill(500));
      expect(burst.map((t) => t.at - at("2026-03-02T00:00:00"))).toEqual(Array.from({ length: 20 }, (_, i) => i * 100));
      for (const t of burst) expect(t).toMatchObject({ carried: true, nextWakeAt: t.at + 100 });
      // The daily delivery is declared first, so it has the budget first (the seed's step 1 before step
      // 2): the first ten ticks send daily callbacks only, the next ten hourly ones. Read by the time the
      // receiver saw each call, not by the order it saw them in: a call whose connection failed under
      // load is first seen at its retry, a minute later.
      const kindsSeen = (from: number, to: number) => new Set(w.receiver.requests.filter((r) => r.at >= from && r.at < to).map((r) => r.key.split(":")[0]));
      const midnightAt = at("2026-03-02T00:00:00");
      expect(kindsSeen(midnightAt, midnightAt + 1_000)).toEqual(new Set(["daily"]));
      expect(kindsSeen(midnightAt + 1_000, midnightAt + 2_000)).toEqual(new Set(["hourly"]));
      // About 10% of the daily calls draw a 500. Under load some never reach the receiver at all (the
      // connection fails), so what waits for a retry is every daily call the receiver did not answer
      // with a success: not a share of 5,000 fixed in advance.
      const dailyFirstTries = w.receiver.requests.filter((r) => r.key.startsWith("daily:") && r.attempt === 1);
      const answered = (reply: string) => new Set(dailyFirstTries.filter((r) => r.reply === reply).map((r) => r.key)).size;
      expect(answered("error")).toBeGreaterThan(400);
      expect(answered("error")).toBeLessThan(600);
      const failedDaily = (await w.app.daily.status()).retrying;
      expect(failedDaily).toBe(5_000 - answered("ok"));

      // The first retries, a minute after each failure.
      const firstRetries = await drive(w, at("2026-03-02T00:05:00") - 1);

      // 00:05: the pipeline reads the trackings that owe 1 March again. Those whose callback waits for
      // its next retry hold their key: skipped, not emitted a second time.
      const stillRetrying = (await w.app.daily.status()).retrying;
      expect(stillRetrying).toBeGreaterThan(0);
      await w.clock.set(at("2026-03-02T00:05:00"));
      const rereadTick = await w.app.tw.tick();
      expect(await w.pipeline()).toMatchObject({ daily: { ready: true, emitted: 0, skipped: stillRetrying } });
      await w.clock.set(rereadTick.nextWakeAt!);
      const rest = await drive(w, at("2026-03-02T03:25:00"));
      const all = [...beforeMidnight, ...midnight, ...firstRetries, { at: at("2026-03-02T00:05:00"), used: rereadTick.outbound.used, carried: rereadTick.carried, nextWakeAt: rereadTick.nextWakeAt }, ...rest];
      expect(Math.max(...all.map((t) => t.used))).toBe(500);
      for (const t of all.filter((t) => t.carried)) expect(t.nextWakeAt).toBe(t.at + 100);

      // Retries go 50 a tick per delivery at most (seed 000's retry batch).
      const retriesByTick = new Map<string, number>();
      for (const r of w.receiver.requests.filter((r) => r.attempt > 1)) {
        const slot = `${r.at}:${r.key.split(":")[0]}`;
        retriesByTick.set(slot, (retriesByTick.get(slot) ?? 0) + 1);
      }
      expect(Math.max(...retriesByTick.values())).toBe(50);

      // The recovering callback: each failure schedules the next attempt 1m, 5m, 15m, 1h, then 2h
      // later, and the attempt goes out when due, or waits only behind full retry batches: every tick
      // it let pass had already sent its 50 retries (shared by the deliveries) or its whole budget of 500. (How many retries are due at once
      // depends on the calls whose connection failed under load, not only on the 10% of 500s.)
      const onSchedule = (key: string, failures: number) => {
        const kind = key.split(":")[0];
        const calls = w.receiver.requests.filter((r) => r.key === key);
        const failed = w.named("delivery.failed").filter((e) => e.key === key);
        expect(failed.map((e) => Number(e.retryAt) - e.time)).toEqual(["1m", "5m", "15m", "1h", "2h"].slice(0, failures).map((d) => toMs(d)));
        expect(failed.map((e) => e.time)).toEqual(calls.slice(0, failures).map((r) => r.at));
        failed.forEach((e, i) => {
          const due = Number(e.retryAt);
          const sentAt = calls[i + 1]!.at;
          expect(sentAt).toBeGreaterThanOrEqual(due);
          for (const t of all.filter((t) => t.at >= due && t.at < sentAt)) {
            const retries = (k: string) => retriesByTick.get(`${t.at}:${k}`) ?? 0;
            // A tick's retries share one allowance of 50 across the deliveries, the daily one first.
            const full = t.used === 500 || retries(kind!) === 50 || retries("daily") + retries("hourly") === 50;
            expect(full, `the tick at ${t.at} (${t.used} sent, ${retries("daily")} daily and ${retries("hourly")} hourly retries) passed a due retry of ${key}`).toBe(true);
          }
        });
        expect(new Set(calls.map((r) => r.webhookId)).size).toBe(1);
        return calls;
      };
      const recovered = onSchedule(recovering, 5);
      expect(recovered.map((r) => r.reply)).toEqual(["error", "error", "error", "error", "error", "ok"]);

      // The doomed one: six attempts on the same schedule, then the dead-letter table; not emitted again.
      const attempts = onSchedule(doomed, 5);
      expect(attempts).toHaveLength(6);
      const [dropped] = await w.app.daily.dropped();
      expect(dropped).toMatchObject({ key: doomed, attempt: 6, lastError: expect.stringContaining("500"), payload: { accountId: "acct-00042", date: "2026-03-01" } });
      expect(w.named("delivery.dropped")).toEqual([expect.objectContaining({ level: "error", delivery: DAILY_DELIVERY, key: doomed, attempts: 6 })]);
      expect((await w.tracking("acct-00042")).daily_date).toBe("2026-03-02");

      expect(await w.app.daily.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 1 });
      expect(await w.app.hourly.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 0 });
      expect(await w.app.db.query(COUNT_BY_DAILY_DATE)).toEqual([{ daily_date: "2026-03-02", n: database.name === "postgres" ? "5000" : 5_000 }]);

      // Zero duplicates: every key the receiver stored came under one webhook id.
      expect(w.receiver.duplicates("daily")).toEqual([]);
      expect(w.receiver.duplicates("hourly")).toEqual([]);
      expect(w.receiver.idsByKey("daily").size).toBe(4_999);
      expect(w.receiver.idsByKey("hourly").size).toBe(5_000);

      // The values: hourly close is the hour's last tick (23:59), daily close the value at midnight (00:00).
      const day = ticks.filter((t) => t.at < at("2026-03-02T00:00:00"));
      const last = day.at(-1)!;
      const atMidnight = ticks.find((t) => t.at === at("2026-03-02T00:00:00"))!;
      expect(w.receiver.rows("hourly")).toEqual(
        accounts.map((a) => expect.objectContaining({ accountId: a.accountId, period: "2026-03-01T23:00:00.000Z", ...extremes(a, day), close: valueAt(a, last.price), writes: 1 })),
      );
      expect(w.receiver.rows("daily")).toEqual(
        accounts
          .filter((a) => a.accountId !== "acct-00042")
          .map((a) => expect.objectContaining({ accountId: a.accountId, period: "2026-03-01", ...extremes(a, day), close: valueAt(a, atMidnight.price), closeSource: "midnight", writes: 1 })),
      );

      // The operator replays the dropped callback: it keeps its id, so it is no duplicate either.
      expect(await w.app.daily.replay({ id: dropped!.id })).toEqual([dropped!.id]);
      await drive(w, at("2026-03-02T03:27:00"));
      expect(w.receiver.idsByKey("daily").get(doomed)).toEqual(new Set([dropped!.id]));
      expect(w.receiver.duplicates("daily")).toEqual([]);
      expect(await w.app.daily.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 0 });
    },
    240_000,
  );
});

describe("account-extremes closing values and preconditions (sqlite-file)", () => {
  const long: TrackedAccount = { accountId: "long", baseValue: 1_000, exposure: 10 };
  const short: TrackedAccount = { accountId: "short", baseValue: 5_000, exposure: -10 };
  const flat: TrackedAccount = { accountId: "flat", baseValue: 750, exposure: 0 };
  const tick = (iso: string, price: number): PriceTick => ({ at: at(iso), price });

  it("closes an hour at its last tick, and a day at the value at midnight, or at the daily peak when the feed had no price at midnight", async () => {
    const w = await world({ start: "2026-03-01T22:00:00", cadence: "10m" });
    await w.app.track([long, short, flat]);
    const first = [tick("2026-03-01T22:00:00", 100), tick("2026-03-01T22:20:00", 104), tick("2026-03-01T22:40:00", 97), tick("2026-03-01T22:59:00", 101)];
    const second = [tick("2026-03-01T23:10:00", 99), tick("2026-03-01T23:58:00", 102.5)];
    // 1 March closes with a tick at midnight; 2 March's last tick is 23:40, 20 minutes before it.
    const next = [tick("2026-03-02T00:00:00", 103), tick("2026-03-02T09:00:00", 110), tick("2026-03-02T15:00:00", 94), tick("2026-03-02T23:40:00", 96)];
    const third = [tick("2026-03-03T00:10:00", 95)];
    await w.app.recordTicks([...first, ...second, ...next, ...third]);
    await drive(w, at("2026-03-03T00:20:00"));

    const stored = (kind: "hourly" | "daily", accountId: string, period: string) => w.receiver.rows(kind).find((r) => r.accountId === accountId && r.period === period);
    const v = valueAt;
    // Hour 22: peak and bottom at the hour's high and low price for a long position, the other way round for a short one.
    expect(stored("hourly", "long", "2026-03-01T22:00:00.000Z")).toMatchObject({ peak: v(long, 104), bottom: v(long, 97), close: v(long, 101) });
    expect(stored("hourly", "short", "2026-03-01T22:00:00.000Z")).toMatchObject({ peak: v(short, 97), bottom: v(short, 104), close: v(short, 101) });
    expect(stored("hourly", "flat", "2026-03-01T22:00:00.000Z")).toMatchObject({ peak: 750, bottom: 750, close: 750 });
    // Hour 23 closes at 23:58, its last tick, not at midnight.
    expect(stored("hourly", "long", "2026-03-01T23:00:00.000Z")).toMatchObject({ peak: v(long, 102.5), bottom: v(long, 99), close: v(long, 102.5) });

    expect(stored("daily", "long", "2026-03-01")).toMatchObject({ peak: v(long, 104), bottom: v(long, 97), close: v(long, 103), closeSource: "midnight" });
    expect(stored("daily", "short", "2026-03-01")).toMatchObject({ peak: v(short, 97), bottom: v(short, 104), close: v(short, 103), closeSource: "midnight" });
    // No price within 5 minutes of midnight on 2 March: the seed's fallback, the daily peak.
    expect(stored("daily", "long", "2026-03-02")).toMatchObject({ peak: v(long, 110), bottom: v(long, 94), close: v(long, 110), closeSource: "daily_peak" });
    expect(stored("daily", "short", "2026-03-02")).toMatchObject({ peak: v(short, 94), bottom: v(short, 110), close: v(short, 94), closeSource: "daily_peak" });
    expect(w.receiver.rows("daily")).toHaveLength(6);
    expect((await w.tracking("long")).daily_date).toBe("2026-03-03");
  });

  it("holds the daily callbacks until every tracking that owes the day has seen its end; one added after midnight does not hold them", async () => {
    const w = await world({ start: "2026-03-01T23:00:00" });
    await w.app.track([long, short]);
    await w.app.recordTicks([tick("2026-03-01T23:00:00", 100), tick("2026-03-01T23:50:00", 101)]);
    await drive(w, at("2026-03-02T00:05:00"));
    // The feed is late: its last tick is 23:50, so 1 March may not be complete yet.
    await w.app.track([flat]);
    await drive(w, at("2026-03-02T00:06:00"));
    expect(await w.pipeline()).toMatchObject({ processed: { hoursClosed: [], daysClosed: [] }, daily: { ready: false, emitted: 0 } });
    expect(w.receiver.stats.requests).toBe(0);
    expect(w.named("delivery.not_ready")).not.toHaveLength(0);

    await w.app.recordTicks([tick("2026-03-02T00:04:30", 102)]);
    await drive(w, at("2026-03-02T00:07:00"));
    expect(await w.pipeline()).toMatchObject({
      processed: { hoursClosed: ["2026-03-01T23:00:00.000Z"], daysClosed: ["2026-03-01"] },
      daily: { ready: true, emitted: 2 },
    });
    // The last tick before midnight (23:50) is more than 5 minutes before it: no price at midnight,
    // so each day closes at its peak (long: at 101, short: at 100).
    expect(w.receiver.rows("daily")).toEqual([
      expect.objectContaining({ accountId: "long", period: "2026-03-01", close: valueAt(long, 101), closeSource: "daily_peak" }),
      expect.objectContaining({ accountId: "short", period: "2026-03-01", close: valueAt(short, 100), closeSource: "daily_peak" }),
    ]);
  });

  it("fails a hung call after the 30 s send timeout and retries it a minute after its timeout under the same webhook id; the rest of its batch is delivered", async () => {
    const w = await world({ start: "2026-03-01T23:00:00" });
    await w.app.track([long, short, flat]);
    await w.app.recordTicks([tick("2026-03-01T23:00:00", 100), tick("2026-03-02T00:00:00", 100)]);
    w.receiver.script("daily:short:2026-03-01", ["hang", "ok"]);
    await drive(w, at("2026-03-02T00:00:00") - 1);

    await w.clock.set(at("2026-03-02T00:00:00"));
    const ticking = w.app.tw.tick();
    await expect.poll(() => w.receiver.hanging).toBe(1);
    await expect.poll(() => w.receiver.active).toBe(1);
    expect(w.receiver.rows("daily").map((r) => r.accountId)).toEqual(["flat", "long"]);
    await w.clock.advance("30s");
    expect((await ticking).outbound.used).toBe(6);
    expect(w.named("delivery.failed")).toEqual([expect.objectContaining({ key: "daily:short:2026-03-01", error: expect.stringMatching(/no answer within 30000 ms/), retryAt: at("2026-03-02T00:01:30") })]);

    await drive(w, at("2026-03-02T00:02:00"));
    const calls = w.receiver.requests.filter((r) => r.key === "daily:short:2026-03-01");
    expect(calls.map((r) => [r.at, r.reply])).toEqual([
      [at("2026-03-02T00:00:00"), "hang"],
      [at("2026-03-02T00:01:30"), "ok"],
    ]);
    expect(calls[0]!.webhookId).toBe(calls[1]!.webhookId);
    expect(w.receiver.rows("daily")).toHaveLength(3);
    expect(w.receiver.duplicates("daily")).toEqual([]);
  });

  it("has the receiver refuse a callback without a valid signature (401) and a body that is not a callback (400), and store nothing", async () => {
    const w = await world({ start: "2026-03-01T23:00:00" });
    const body = JSON.stringify({ kind: "daily", accountId: "long", date: "2026-03-01", peak: 1, bottom: 1, close: 1, closeSource: "midnight" });
    const post = (path: string, headers: Record<string, string>, text = body) => fetch(`${w.receiver.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: text });

    const unsigned = await post("/callbacks/daily", {});
    expect(unsigned.status).toBe(401);
    expect(await unsigned.json()).toEqual({ error: "invalid_signature", message: "missing webhook-id header" });
    const forged = await post("/callbacks/daily", { "webhook-id": "msg_1", "webhook-timestamp": String(Math.floor(w.clock.now() / 1000)), "webhook-signature": "v1,Zm9yZ2Vk" });
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as { message: string }).message).toBe("no webhook-signature matches");

    // Signed properly, but at the wrong path, or not a callback.
    const sent: { url: string; init: RequestInit }[] = [];
    const send = webhookSender<unknown>({ url: `${w.receiver.url}/callbacks/hourly`, secret: SECRET, fetch: async (url, init) => (sent.push({ url, init }), fetch(url, init)) });
    const message = { id: "msg_2", delivery: DAILY_DELIVERY, key: null, attempt: 1, createdAt: 0 };
    const ctx = { signal: new AbortController().signal, now: w.clock.now(), logger: w.app.tw.logger };
    await expect(send({ ...message, payload: JSON.parse(body) }, ctx)).rejects.toThrow(/answered 400/);
    await expect(send({ ...message, payload: { kind: "hourly", accountId: "long", hour: "yesterday", peak: "high" } }, ctx)).rejects.toThrow(/answered 400/);
    const wrongPath = await fetch(sent[0]!.url, { ...sent[0]!.init, signal: null });
    expect(await wrongPath.json()).toEqual({ error: "invalid_callback", message: "a daily callback sent to /callbacks/hourly" });
    const badBody = await fetch(sent[1]!.url, { ...sent[1]!.init, signal: null });
    expect(((await badBody.json()) as { message: string }).message).toMatch(/hour: .*datetime.*; peak: .*number.*; bottom: .*number/i);

    expect(w.receiver.stats).toMatchObject({ refused: 6, stored: 0 });
    expect(w.receiver.rows("daily")).toEqual([]);
  });

  it("refuses bad options, accounts and ticks with a clear error", async () => {
    const w = await world({ start: "2026-03-01T23:00:00" });
    const base = { receiverUrl: w.receiver.url, secret: SECRET, logger: () => {} };
    await expect(createAccountExtremesApp({ ...base } as unknown as AccountExtremesAppOptions)).rejects.toThrow(/give \{ database \} \(its own engine\) or \{ tw, db \}/);
    await expect(createAccountExtremesApp({ ...base, tw: w.app.tw, db: w.app.db, database: { kind: "sqlite", path: ":memory:" } } as unknown as AccountExtremesAppOptions)).rejects.toThrow(/not both/);
    await expect(createAccountExtremesApp({ ...base, receiverUrl: "ftp://nope", database: { kind: "sqlite", path: ":memory:" } })).rejects.toThrow(/receiverUrl must be an http\(s\) URL, got "ftp:\/\/nope"/);
    await expect(createAccountExtremesApp({ ...base, secret: "hunter2", database: { kind: "sqlite", path: ":memory:" } })).rejects.toThrow(InvalidInputError);
    await expect(createAccountExtremesApp({ ...base, secret: "hunter2", database: { kind: "sqlite", path: ":memory:" } })).rejects.toThrow(/webhook secret must hold at least 16 bytes, got 5/);

    await expect(w.app.track([{ accountId: "", baseValue: 1, exposure: 1 }])).rejects.toThrow(/track: accounts: 0\.accountId: 1-100 letters/);
    await expect(w.app.track([{ accountId: "a", baseValue: Number.NaN, exposure: 1 }])).rejects.toThrow(/0\.baseValue/);
    await expect(w.app.recordTicks([{ at: at("2026-03-01T23:00:00"), price: -1 }])).rejects.toThrow(/recordTicks: ticks: 0\.price: .*>0/);
    await expect(w.app.recordTicks("ticks" as unknown as PriceTick[])).rejects.toThrow(/recordTicks: ticks: \(value\): .*array/i);

    // A tick older than the ones already folded would never be folded: refused, and counted.
    await w.app.track([long]);
    await w.app.recordTicks([tick("2026-03-01T23:00:00", 100), tick("2026-03-01T23:01:00", 100)]);
    await drive(w, at("2026-03-01T23:02:00"));
    expect(await w.app.recordTicks([tick("2026-03-01T23:00:30", 99), tick("2026-03-01T23:03:00", 99)])).toEqual({ recorded: 1, late: 1 });
  });

  it("declares its deliveries, task and tables on an engine another example shares, under prefixed names, and leaves that engine running at stop", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tickwork-account-extremes-shared-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const clock = fakeClock(at("2026-03-01T23:00:00"));
    const receiver = await startReceiver({ secret: SECRET, now: () => clock.now() });
    cleanups.push(() => receiver.close());
    const { store, db } = await openSupportDatabase({ kind: "sqlite", path: join(dir, "shared.db") }, []);
    const tw = await createTickwork({ store, clock, logger: () => {}, handleSignals: false });
    cleanups.push(async () => {
      await tw.stop();
      await db.close();
    });
    const other = tw.delivery("another-example.callbacks", { send: async () => {} });

    const app = await createAccountExtremesApp({ tw, db, receiverUrl: receiver.url, secret: SECRET });
    expect([...tw.deliveries.keys()]).toEqual(["another-example.callbacks", DAILY_DELIVERY, HOURLY_DELIVERY]);
    expect((await tw.scheduler.status()).tasks.map((t) => t.name)).toEqual([PIPELINE_TASK]);
    await app.track([long]);
    await app.recordTicks([tick("2026-03-01T23:00:00", 100), tick("2026-03-02T00:00:00", 101)]);
    await other.emit([{ payload: 1 }]);
    await clock.set(at("2026-03-02T00:00:00"));
    expect((await tw.tick()).outbound.used).toBe(3);
    expect(receiver.stats.stored).toBe(2);

    await app.stop();
    expect(tw.status()).toMatchObject({ stopped: false });
    expect((await tw.tick()).outbound.used).toBe(0);
    const tables = await db.query<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'extremes_%' ORDER BY name`);
    expect(tables.map((t) => t.name)).toEqual(["extremes_daily_closes", "extremes_hourly_snapshots", "extremes_price_ticks", "extremes_state", "extremes_trackings"]);
  });

  it("keeps hourly snapshots for two days after they were sent, then cleans them up (the seed's step 5)", async () => {
    const w = await world({ start: "2026-03-01T23:00:00", cadence: "30m" });
    await w.app.track([long]);
    await w.app.recordTicks(priceTicks({ seed: 1, from: at("2026-03-01T23:00:00"), to: at("2026-03-04T02:00:00"), every: 30 * MINUTE }));
    const count = async () => Number((await w.app.db.query<{ n: number | string }>(`SELECT count(*) AS n FROM extremes_hourly_snapshots`))[0]!.n);
    await drive(w, at("2026-03-02T01:00:00") + SECOND);
    expect(await count()).toBe(2);
    await drive(w, at("2026-03-04T01:00:00") + SECOND);
    // Every closed hour was sent; only those of the last two days are still kept.
    expect(w.receiver.idsByKey("hourly").size).toBe(50);
    expect(await count()).toBe(48);
    expect(w.receiver.stats.stored).toBe(50 + 3);
  });
});
