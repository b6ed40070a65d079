import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, expect, it } from "vitest";
import { fakeClock } from "../../src/testing/index.js";
import { FixtureProcess, spawnFixture } from "../../test/crash/fixtures/child-process.js";
import { createAccountExtremesApp } from "./app.js";
import type { AppProcessConfig } from "./app-process.js";
import type { DatabaseTarget } from "./database.js";
import { priceTicks, trackedAccounts } from "./market.js";
import { DAY, HOUR, dayOf, midnightOf } from "./periods.js";
import { startReceiver } from "./receiver.js";

/**
 * Seed 000's crash argument, tested with a real process and a real SIGKILL: the app runs in a child
 * process on an SQLite file, delivering 5,000 hourly and 5,000 daily callbacks at 500 per tick to a
 * receiver in this process, and is killed while a batch is in flight. A second process on the same
 * file finishes the work. Nothing is lost (the outbox and the per-row progress are in the file), and
 * what the dead process had in flight is sent again under the same webhook id, to a receiver that
 * upserts: it stores one row per callback, and no daily callback under two ids.
 */

const SECRET = `whsec_${Buffer.from("account-extremes-crash-secret-32").toString("base64")}`;
const APP_PROCESS = fileURLToPath(new URL("./app-process.ts", import.meta.url));
const ACCOUNTS = 5_000;

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function until(what: string, ms: number, test: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

it("a process killed mid-batch loses no callback; a second process sends what was in flight again, under the same ids, to the upserting receiver", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tickwork-account-extremes-crash-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const database: DatabaseTarget = { kind: "sqlite", path: join(dir, "extremes.db") };
  // Each stored callback is answered 20 ms later, so a batch of 500 is in flight long enough to be killed in.
  const receiver = await startReceiver({ secret: SECRET, answerDelayMs: 20 });
  cleanups.push(() => receiver.close());

  // The accounts were tracked since 23:00 yesterday, and the feed has passed midnight: the first
  // pipeline run closes yesterday's last hour and yesterday itself, 10,000 callbacks.
  const today = dayOf(Date.now());
  const since = midnightOf(today) - HOUR;
  const setup = await createAccountExtremesApp({ database, receiverUrl: receiver.url, secret: SECRET, clock: fakeClock(since), logger: () => {} });
  await setup.track(trackedAccounts(ACCOUNTS, 5));
  await setup.recordTicks(priceTicks({ seed: 9, from: since, to: midnightOf(today) }));
  await setup.stop();

  // A generous send timeout: on a loaded machine 500 calls at once can take seconds, and a call that
  // times out after the receiver stored it is sent again (harmless, but not what this test is about).
  const config: AppProcessConfig = { database, receiverUrl: receiver.url, secret: SECRET, sendTimeout: "5s", cadence: "1m", retry: ["1s", "2s", "5s", "10s", "30s"] };
  const start = async (label: string) => {
    const child = new FixtureProcess(spawnFixture(APP_PROCESS, config), label, 30_000);
    cleanups.push(() => child.kill());
    await child.ready;
    return child;
  };

  const first = await start("account-extremes app 1");
  await until("half the callbacks stored, with a batch in flight", 60_000, () => receiver.stats.stored >= 2_500 && receiver.active > 0);
  const atKill = { stored: receiver.stats.stored, inFlight: receiver.active };
  await first.kill();
  expect(atKill.inFlight).toBeGreaterThan(0);
  expect(atKill.stored).toBeLessThan(2 * ACCOUNTS);

  // The second process finds the outbox in the file: what was waiting goes at once, what the dead
  // process had leased goes when its lease lapses (twice the 5 s send timeout, plus 10 s). At load 17
  // the rest took over 90 s: calls that time out wait for their retries (1 s, 2 s, 5 s, 10 s, 30 s).
  const second = await start("account-extremes app 2");
  await until("every callback stored", 150_000, () => receiver.idsByKey().size === 2 * ACCOUNTS);
  const file = new Database(database.path, { readonly: true });
  cleanups.push(async () => void file.close());
  const count = (sql: string) => (file.prepare(sql).get() as { n: number }).n;
  await until("the outbox empty and every tracking moved on to today", 30_000, () =>
    count(`SELECT count(*) AS n FROM tickwork_deliveries`) === 0 && count(`SELECT count(*) AS n FROM extremes_trackings WHERE daily_date = '${today}'`) === ACCOUNTS,
  );
  await second.kill();

  // Nothing lost: one row per account and period at the receiver.
  expect(receiver.rows("daily")).toHaveLength(ACCOUNTS);
  expect(receiver.rows("hourly")).toHaveLength(ACCOUNTS);
  expect(new Set(receiver.rows("daily").map((r) => r.period))).toEqual(new Set([dayOf(midnightOf(today) - DAY)]));
  expect(count(`SELECT count(*) AS n FROM tickwork_delivery_dead`)).toBe(0);
  // An onDelivered that failed would leave a tracking behind, and its day would go out again under a new id.
  expect([...first.named("delivery.on_delivered_failed"), ...second.named("delivery.on_delivered_failed")]).toEqual([]);

  // No daily callback under two ids; what was sent again went under the id it had, to the upsert.
  expect(receiver.duplicates("daily")).toEqual([]);
  expect(receiver.duplicates("hourly")).toEqual([]);
  expect(receiver.stats.redelivered).toBeGreaterThan(0);
  expect(receiver.stats.stored).toBe(2 * ACCOUNTS + receiver.stats.redelivered);
  const rewritten = [...receiver.rows("daily"), ...receiver.rows("hourly")].filter((r) => r.writes > 1);
  expect(rewritten.reduce((n, r) => n + r.writes - 1, 0)).toBe(receiver.stats.redelivered);
}, 320_000);
