/** The cache's storage seam: the store table on SQLite and PostgreSQL, and (later) Workers KV. */
export interface CacheStore {
  put(params: { key: string; value: string; fetchedAt: number }): Promise<void>;
  get(params: { key: string }): Promise<{ value: string; fetchedAt: number } | null>;
  delete(params: { key: string }): Promise<boolean>;
}
