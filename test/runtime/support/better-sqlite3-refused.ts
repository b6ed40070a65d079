import { expect } from "vitest";
import { SqliteDriverUnavailableError } from "../../../src/store/sqlite-driver.js";
import { sqlite } from "../../../src/store/sqlite.js";

/** The remedy a runtime with its own SQLite gives: Bun and Deno can never load the addon. */
const USE_THE_RUNTIMES_OWN = `: use driver "auto", this runtime's own SQLite$`;

/**
 * better-sqlite3 is a Node addon built for the Node that ran `npm ci`: Bun, Deno and any other Node
 * cannot load it. Asking for it there must fail with tickwork's error naming the runtime and the
 * remedy, not the addon loader's message. `runtime` and `remedy` are regular-expression sources for
 * the message's runtime name and its ending; the error is returned for the caller's own checks.
 */
export function expectBetterSqliteRefused(runtime: string, remedy = USE_THE_RUNTIMES_OWN): SqliteDriverUnavailableError {
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
    message: expect.stringMatching(new RegExp(`^sqlite\\(\\): better-sqlite3 could not load in ${runtime} .*${remedy}`)),
  });
  return thrown as SqliteDriverUnavailableError;
}
