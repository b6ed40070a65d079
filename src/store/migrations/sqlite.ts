import type { Migration } from "./migration.js";
import baseline from "./sqlite/0001_baseline.sql.js";

/**
 * SQLite schema steps, shared by every SQLite driver and the Durable Object store: one `.sql` file
 * each under sqlite/, frozen once released (see docs/development/schema.md).
 */
export const sqliteMigrations: readonly Migration[] = [{ version: 1, name: "baseline", sql: baseline }];
