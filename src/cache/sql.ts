import type { SqlDb } from "../db/sql-db.js";
import type { CacheStore } from "./store.js";

/** The cache in the store's own table; one SQL text for SQLite and PostgreSQL. */
export class SqlCacheStore implements CacheStore {
  constructor(private readonly db: SqlDb) {}

  async put({ key, value, fetchedAt }: { key: string; value: string; fetchedAt: number }): Promise<void> {
    await this.db.query(
      `INSERT INTO tickwork_cache (key, value, fetched_at) VALUES ($1, $2, $3)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, fetched_at = excluded.fetched_at`,
      [key, value, fetchedAt],
    );
  }

  async get({ key }: { key: string }): Promise<{ value: string; fetchedAt: number } | null> {
    const [row] = await this.db.query<{ value: string; fetched_at: number | string }>(`SELECT value, fetched_at FROM tickwork_cache WHERE key = $1`, [key]);
    return row ? { value: row.value, fetchedAt: Number(row.fetched_at) } : null;
  }

  async delete({ key }: { key: string }): Promise<boolean> {
    return (await this.db.query(`DELETE FROM tickwork_cache WHERE key = $1 RETURNING key`, [key])).length > 0;
  }
}
