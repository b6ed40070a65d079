import { afterEach, describe, expect, it } from "vitest";
import { keyset } from "../../../src/delivery/keyset.js";
import type { Delivery } from "../../../src/delivery/delivery.js";
import type { SqliteConnection } from "../../../src/db/sqlite-executor.js";
import { openSqlite } from "../../../src/store/sqlite-driver.js";
import { allStoreCases } from "../../support/stores.js";
import { enginesFor } from "../../support/schedule-fixtures.js";

/**
 * Seed 000's daily pass: trackings with `daily_date` before today get a daily callback; a delivered
 * callback advances its tracking's `daily_date` (in onDelivered), so the row leaves the filter while
 * the pass is still paging. The source is a real SQLite table of the application's own; the outbox
 * is the store under test. Each page is emitted and sent (one tick) before the next page is read, as
 * an alarm that resumes where the previous one stopped.
 */
const USERS = 200;
const PAGE = 50;
const TODAY = "2026-01-01";

interface Tracking {
  user_id: string;
  daily_date: string;
}

describe.each(allStoreCases())("paging a source that delivery mutates ($name)", (storeCase) => {
  const engines = enginesFor(storeCase);
  let source: SqliteConnection | undefined;
  afterEach(() => {
    source?.close();
    source = undefined;
  });

  async function setUp() {
    const engine = await engines.first();
    // The application's own table, on the SQLite this runtime opens (openSqlite's "auto").
    const db = (source = openSqlite(":memory:")).executor;
    db.exec(`CREATE TABLE trackings (user_id TEXT PRIMARY KEY, daily_date TEXT NOT NULL)`);
    for (let i = 1; i <= USERS; i++) db.run(`INSERT INTO trackings (user_id, daily_date) VALUES (?, ?)`, [`u-${String(i).padStart(3, "0")}`, "2025-12-31"]);
    const reads = new Map<string, number>();
    const read = (rows: Tracking[]) => {
      for (const r of rows) reads.set(r.user_id, (reads.get(r.user_id) ?? 0) + 1);
      return rows;
    };
    const daily = engine.tw.delivery<{ user: string; day: string }>("daily", {
      send: async () => {},
      onDelivered: (m) => void db.run(`UPDATE trackings SET daily_date = ? WHERE user_id = ?`, [TODAY, m.payload.user]),
    });
    const pass = async (pages: AsyncIterable<Tracking[]>) => {
      for await (const page of pages) {
        await daily.emit(page.map((t) => ({ key: `daily:${t.user_id}`, payload: { user: t.user_id, day: t.daily_date } })));
        await engine.tw.tick();
      }
    };
    const behind = () => db.all<{ n: number }>(`SELECT count(*) AS n FROM trackings WHERE daily_date < ?`, [TODAY])[0]?.n;
    return { db, reads, read, pass, behind, daily: daily as Delivery<unknown> };
  }

  it("with OFFSET/LIMIT, skips a page of rows for every page that left the filter", async () => {
    const { db, reads, read, pass, behind } = await setUp();
    async function* offsetPages(): AsyncGenerator<Tracking[]> {
      for (let offset = 0; ; offset += PAGE) {
        const rows = read(db.all<Tracking>(`SELECT user_id, daily_date FROM trackings WHERE daily_date < ? ORDER BY user_id LIMIT ? OFFSET ?`, [TODAY, PAGE, offset]));
        if (rows.length === 0) return;
        yield rows;
        if (rows.length < PAGE) return;
      }
    }
    await pass(offsetPages());
    expect(reads.size).toBe(USERS / 2);
    expect(behind()).toBe(USERS / 2);
    expect(reads.has("u-051")).toBe(false);
    expect(reads.has("u-200")).toBe(false);
  });

  it("with keyset(), reads every row exactly once and every tracking gets its daily callback", async () => {
    const { db, reads, read, pass, behind, daily } = await setUp();
    await pass(
      keyset<Tracking, string>({
        fetch: (after, limit) => read(db.all<Tracking>(`SELECT user_id, daily_date FROM trackings WHERE daily_date < ? AND user_id > ? ORDER BY user_id LIMIT ?`, [TODAY, after ?? "", limit])),
        cursor: (t) => t.user_id,
        pageSize: PAGE,
      }),
    );
    expect(reads.size).toBe(USERS);
    expect([...reads.values()].every((n) => n === 1)).toBe(true);
    expect(behind()).toBe(0);
    expect(await daily.status()).toMatchObject({ pending: 0, retrying: 0 });
  });
});
