import type { Migration } from "./migration.js";
import baseline from "./postgres/0001_baseline.sql.js";

/**
 * PostgreSQL schema steps: one `.sql` file each under postgres/, frozen once released (see
 * docs/development/schema.md). Each runs in one transaction with search_path set to tickwork's schema.
 */
export const postgresMigrations: readonly Migration[] = [{ version: 1, name: "baseline", sql: baseline }];
