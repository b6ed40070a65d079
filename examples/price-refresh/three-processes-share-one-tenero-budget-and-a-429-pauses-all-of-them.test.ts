import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createTickwork } from "../../src/index.js";
import { FixtureProcess, spawnFixture, type Line } from "../../test/crash/fixtures/child-process.js";
import { eventually } from "../../test/support/real-time.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../../test/support/stores.js";
import { TENERO_LIMITER } from "./app.js";
import { openDatabase, type DatabaseTarget } from "./database.js";
import { startFakeHiro } from "./fake-hiro.js";
import { startFakeTenero, type FakeTenero, type TeneroRequest } from "./fake-tenero.js";
import type { TeneroProcessConfig, TeneroRole } from "./tenero-process.js";

/**
 * The price task, a sweep and a queue's jobs all call Tenero, from three processes on one database,
 * against a real fake Tenero on 127.0.0.1 that refuses the 21st request of a 2 s window. They share
 * one `tw.limiter("tenero", { max: 19, per: "2s" })`, one under the fake's budget as the app's own is
 * (a request lands a moment after its token: see TENERO_BUDGET), and each of them alone asks for far more than
 * that (30 tokens a second, 30 tokens a second, three jobs at a time back to back). Everything runs
 * on the real clock; the fake's request log, with its own timestamps, is the evidence.
 */

const PROCESS = fileURLToPath(new URL("./tenero-process.ts", import.meta.url));
const WINDOW_MS = 2_000;
const BUDGET = 20;
const LIMIT = { max: BUDGET - 1, per: WINDOW_MS };
const RETRY_AFTER_S = 4;
/** Whole windows of saturated traffic to look at before the injected 429. */
const WINDOWS = 5;
const TOKENS = Array.from({ length: 30 }, (_, i) => `token${i}`);
const ROLES: readonly TeneroRole[] = ["prices", "sweep", "jobs"];
/** Requests each role's process has on their way at once (see tenero-process.ts). */
const SLOTS: Record<TeneroRole, number> = { prices: 1, sweep: 1, jobs: 3 };

const databases: { name: string; open(): { target: DatabaseTarget; cleanup(): Promise<void> } }[] = [
  {
    name: "postgres",
    open() {
      const schema = uniqueSchema();
      return { target: { kind: "postgres", url: DATABASE_URL, schema }, cleanup: () => dropSchema(schema) };
    },
  },
  {
    name: "sqlite-file",
    open() {
      const dir = mkdtempSync(join(tmpdir(), "tickwork-tenero-budget-"));
      return { target: { kind: "sqlite", path: join(dir, "prices.db") }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
];

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  // In reverse: the children die before the servers close and the database is dropped.
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

const callerOf = (role: TeneroRole) => `tickwork-${role}`;
const windowOf = (at: number) => Math.floor(at / WINDOW_MS);

/** Requests per fixed window of the fake (the windows its budget counts in), first to last. */
function perWindow(requests: readonly TeneroRequest[]): number[] {
  if (requests.length === 0) return [];
  const first = windowOf(requests[0]!.at);
  const counts = Array.from({ length: windowOf(requests.at(-1)!.at) - first + 1 }, () => 0);
  for (const r of requests) counts[windowOf(r.at) - first]!++;
  return counts;
}

describe.each(databases)("on $name", (database) => {
  it("three processes calling Tenero never overspend the shared budget (the fake answers no 429), and one 429 with Retry-After stops all three until it has passed", { timeout: 120_000 }, async () => {
    const opened = database.open();
    cleanups.push(opened.cleanup);
    const tenero: FakeTenero = await startFakeTenero({ minuteLimit: BUDGET, windowMs: WINDOW_MS });
    cleanups.push(() => tenero.close());
    const hiro = await startFakeHiro();
    cleanups.push(() => hiro.close());
    // tickwork's tables exist before three processes open the database at once.
    const { store, db } = await openDatabase(opened.target);
    await (await createTickwork({ store, logger: () => {}, handleSignals: false })).stop();
    await db.close();

    const children = ROLES.map((role) => {
      const config: TeneroProcessConfig = { role, database: opened.target, teneroUrl: tenero.url, hiroUrl: hiro.url, limit: LIMIT, tokens: TOKENS };
      const child = new FixtureProcess(spawnFixture(PROCESS, config), `tenero ${role} process`, 60_000);
      cleanups.push(() => child.kill());
      return { role, child };
    });
    await Promise.all(children.map((c) => c.child.ready));
    const byRole = (role: TeneroRole) => children.find((c) => c.role === role)!.child;

    // (a) All three calling, through WINDOWS whole windows of the fake.
    const allCalling = await eventually(
      () => {
        const callers = new Set(tenero.requests.map((r) => r.caller));
        return ROLES.every((role) => callers.has(callerOf(role))) && Date.now();
      },
      "requests from all three processes",
      30_000,
    );
    const from = (windowOf(allCalling) + 1) * WINDOW_MS;
    const to = from + WINDOWS * WINDOW_MS;
    await eventually(() => tenero.requests.some((r) => r.at >= to), `traffic through ${WINDOWS} whole windows`, WINDOWS * WINDOW_MS + 10_000);
    const before = [...tenero.requests];
    const counts = perWindow(before);
    const whole = perWindow(before.filter((r) => r.at >= from && r.at < to));

    expect(before.filter((r) => r.status !== 200)).toEqual([]);
    expect(Math.max(...counts)).toBeLessThanOrEqual(BUDGET);
    for (const role of ROLES) {
      expect(before.filter((r) => r.caller === callerOf(role)).length, role).toBeGreaterThan(0);
      // Each process had to wait for the budget: alone, each would have sent more.
      expect(byRole(role).named("limiter.waiting").length, role).toBeGreaterThan(0);
    }
    // The budget, not the demand, set the pace. Not every window is full: the answer to a window's
    // 20th request says nothing is left, which pauses every process until Tenero's reset, given in
    // whole seconds, so it runs into the next window.
    expect(whole).toHaveLength(WINDOWS);
    expect(whole.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(WINDOWS * BUDGET * 0.5);

    // (b) Tenero answers one request 429 with Retry-After: 4 (neighbours on the same IP spent the budget).
    tenero.refuseNext(RETRY_AFTER_S);
    const refused = await eventually(() => tenero.requests.find((r) => r.injected), "the injected 429", 10_000);
    const refusedRole = ROLES.find((role) => callerOf(role) === refused.caller)!;
    const pauseEnd = refused.at + RETRY_AFTER_S * 1_000;
    await eventually(() => ROLES.every((role) => tenero.requests.some((r) => r.at > refused.at && r.caller === callerOf(role))), "all three processes calling again", 20_000);

    const log = [...tenero.requests];
    const i = log.indexOf(refused);
    const after = log.slice(i + 1);
    // The refused process paused the shared limiter for everyone, until Retry-After.
    const paused = await byRole(refusedRole).waitFor((l: Line) => l.event === "limiter.paused" && l.limiter === TENERO_LIMITER && String(l.reason).includes("429"), "limiter.paused");
    expect(paused.until as number).toBeGreaterThanOrEqual(pauseEnd);
    // Nothing whose token was taken after the pause was written reached Tenero until Retry-After had
    // passed: no process, not only the one refused. A request whose token was taken before then was
    // already on its way (on a loaded machine it can land well after the 429), which no pause can
    // call back; and its fetch (x-sent-at) may start after the pause's write, since the grant and the
    // fetch are two steps (at load 17 a sweep request granted before the pause left after it). A slot
    // sends one request at a time and takes its next token only after that one came back, so past the
    // pause each slot can send at most the one request it already held a token for: the role's slots
    // (the prices and sweep tasks call one at a time, the jobs queue runs 3 at once). With the pause
    // not written to the store, 29 requests sent after it landed early.
    // The pause's log line comes after its write, so `time` is at or after it.
    const pausedAt = paused.time as number;
    const early = after.filter((r) => r.at < pauseEnd && (r.sentAt === undefined || r.sentAt >= pausedAt));
    for (const role of ROLES) {
      expect(early.filter((r) => r.caller === callerOf(role)).length, role).toBeLessThanOrEqual(SLOTS[role]);
    }
    for (const role of ROLES) {
      // Each had called within Retry-After before the 429, so each was held back by the pause; each came back after it.
      const last = log.slice(0, i).filter((r) => r.caller === callerOf(role)).at(-1)!;
      expect(refused.at - last.at, role).toBeLessThan(RETRY_AFTER_S * 1_000);
      expect(after.some((r) => r.caller === callerOf(role)), role).toBe(true);
    }
    // After the pause the budget still holds: no 429 but the injected one.
    expect(log.filter((r) => r.status === 429)).toEqual([refused]);
    expect(Math.max(...perWindow(after))).toBeLessThanOrEqual(BUDGET);
  });
});
