import { expect } from "vitest";
import { SqliteDriverUnavailableError } from "../../../src/store/sqlite-driver.js";
import { sqlite } from "../../../src/store/sqlite.js";

/**
 * better-sqlite3 is a Node addon: Bun and Deno cannot load it. Asking for it there must fail with
 * tickwork's error naming the runtime and the driver to use, not the addon loader's message.
 */
export function expectBetterSqliteRefused(runtime: "Bun" | "Deno"): void {
  let thrown: unknown;
  try {
    sqlite(":memory:", { driver: "better-sqlite3" });
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(SqliteDriverUnavailableError);
  expect(thrown).toMatchObject({
    code: "TW_SQLITE_DRIVER_UNAVAILABLE",
    driver: "better-sqlite3",
    message: expect.stringMatching(new RegExp(`^sqlite\\(\\): better-sqlite3 could not load in ${runtime} .*: use driver "auto", this runtime's own SQLite$`)),
  });
}
