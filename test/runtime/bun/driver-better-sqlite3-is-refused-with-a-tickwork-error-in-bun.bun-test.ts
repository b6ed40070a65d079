import { it } from "vitest";
import { expectBetterSqliteRefused } from "../support/better-sqlite3-refused.js";

it('sqlite(path, { driver: "better-sqlite3" }) in Bun fails with TW_SQLITE_DRIVER_UNAVAILABLE pointing at "auto"', () => {
  expectBetterSqliteRefused("Bun");
});
