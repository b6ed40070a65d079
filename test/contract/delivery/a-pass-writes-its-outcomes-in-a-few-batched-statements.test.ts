import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { sqliteSqlDb, type SqlDb } from "../../../src/db/sql-db.js";
import { SqlDeliveryStore } from "../../../src/delivery/sql.js";
import { pgExecutor } from "../../../src/store/pg.js";
import { postgres } from "../../../src/store/postgres.js";
import { sqlite } from "../../../src/store/sqlite.js";
import { openSqlite } from "../../../src/store/sqlite-driver.js";
import type { Store } from "../../../src/store/store.js";
import { createTickwork } from "../../../src/tickwork.js";
import { fakeClock } from "../../../src/testing/fake-clock.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../../support/stores.js";
import { START } from "../../support/schedule-fixtures.js";

/** Round trips to the database: one per statement, plus BEGIN and COMMIT for a transaction. */
interface Counter {
  roundTrips: number;
}

/** `db`, counting its round trips in `counter`. */
function counting(db: SqlDb, counter: Counter): SqlDb {
  return {
    maxParams: db.maxParams,
    query: (sql, params) => (counter.roundTrips++, db.query(sql, params)),
    transaction: (body) => {
      counter.roundTrips += 2;
      return db.transaction((tx) =>
        body({
          maxParams: tx.maxParams,
          *query(sql, params) {
            counter.roundTrips++;
            return yield* tx.query(sql, params);
          },
        }),
      );
    },
  };
}

interface Dialect {
  name: string;
  /** The engine's store, whose delivery module runs on a connection of its own that counts. */
  open(counter: Counter): Store;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanups.splice(0).reverse()) await step();
});

const dialects: Dialect[] = [
  {
    name: "sqlite",
    open(counter) {
      const dir = mkdtempSync(join(tmpdir(), "tickwork-"));
      const path = join(dir, "tickwork.db");
      const store = sqlite(path);
      const connection = openSqlite(path);
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }), () => connection.close());
      return { ...store, delivery: new SqlDeliveryStore(counting(sqliteSqlDb(connection.executor, connection.maxParams), counter)) };
    },
  },
  {
    name: "postgres",
    open(counter) {
      const schema = uniqueSchema();
      const store = postgres({ url: DATABASE_URL, schema });
      const pool = new pg.Pool({ connectionString: DATABASE_URL, options: `-c search_path="${schema}"`, max: 2 });
      cleanups.push(() => dropSchema(schema), () => pool.end());
      return { ...store, delivery: new SqlDeliveryStore(counting(pgExecutor(pool), counter)) };
    },
  },
];

describe.each(dialects)("a delivery pass's writes ($name)", (dialect) => {
  it("are a few batched statements for 500 sends, whatever mix of delivered, retried and dropped", async () => {
    const counter: Counter = { roundTrips: 0 };
    const clock = fakeClock(START);
    const tw = await createTickwork({ store: dialect.open(counter), clock, logger: () => {}, handleSignals: false });
    cleanups.push(() => tw.stop());
    // Half of "hourly" fails and is retried; every item of "daily" fails and is dropped at once.
    const hourly = tw.delivery<number>("hourly", {
      send: async (m) => {
        if (m.payload % 2 === 1) throw new Error("refused");
      },
    });
    const daily = tw.delivery<number>("daily", {
      retry: () => null,
      send: async () => {
        throw new Error("gone");
      },
    });
    await hourly.emit(Array.from({ length: 300 }, (_, n) => ({ key: `h-${n}`, payload: n })));
    await daily.emit(Array.from({ length: 200 }, (_, n) => ({ key: `d-${n}`, payload: n })));

    counter.roundTrips = 0;
    const result = await tw.tick();
    const roundTrips = counter.roundTrips;
    expect(result.outbound.used).toBe(500);
    expect(await hourly.status()).toMatchObject({ pending: 0, retrying: 150, dropped: 0 });
    expect(await daily.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 200 });
    // Per delivery: two claims (retries, first sends), the outcomes in one transaction of at most
    // three statements (delete, reschedule, dead-letter insert), and the next due time.
    expect(roundTrips, `${roundTrips} round trips for the tick's 500 sends`).toBeLessThanOrEqual(2 * 8);
  });
});
