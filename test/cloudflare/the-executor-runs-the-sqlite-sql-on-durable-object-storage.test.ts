import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteMigrations } from "../../src/store/migrations/sqlite.js";
import { latestVersion } from "../../src/store/migrations/migration.js";
import { startObjects, type Objects } from "./support/objects.js";

describe("the Durable Object executor, on workerd's SQLite", () => {
  let objects: Objects;
  beforeAll(async () => {
    objects = await startObjects();
  });
  afterAll(() => objects?.dispose());

  it("counts changed rows where the platform's rowsWritten counts index writes too, binds exact bigints, refuses a 101st binding as production does, rolls back a throwing transaction, and migrates without BEGIN", async () => {
    const facts = await objects.call<Record<string, unknown>>("PROBE", "executor", "executorFacts");
    expect(facts).toEqual({
      // The platform counts the row and its index entry: fencing on rowsWritten would be wrong.
      rowsWrittenByAnUpdateOfOneIndexedRow: 2,
      bindings100: 100,
      changedByRun: 1,
      changedByRunOfNoRow: 0,
      bigintWithinSafe: 9007199254740991,
      rowsAfterRollback: 0,
      failures: {
        bigintOverSafe: expect.stringContaining("up to 2^53"),
        rolledBack: "boom",
        begin: expect.stringContaining("transactionSync"),
        over100Bindings: expect.stringContaining("a Durable Object binds at most 100 values per statement; this one binds 101"),
      },
      schemaBefore: { current: 0, latest: latestVersion(sqliteMigrations) },
      schemaAfter: { current: latestVersion(sqliteMigrations), latest: latestVersion(sqliteMigrations) },
      migrationsRecorded: sqliteMigrations.length,
    });
  });

  // Why the SQL seam's transaction bodies are generators run inside transactionSync (src/db/sql-db.ts,
  // SqlBody) rather than async functions run inside storage.transaction.
  it("rolls back an awaiting storage.transaction's writes on both sides of the await, and with them another piece of code's write made meanwhile", async () => {
    expect(await objects.call("PROBE", "async-transaction", "asyncTransactionFacts")).toEqual({
      failed: "boom",
      beforeTheAwait: 0,
      afterTheAwait: 0,
      otherCode: 0,
    });
  });
});
