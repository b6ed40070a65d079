/**
 * The registry's SQL, one text for SQLite and PostgreSQL (`$1, $2...` bind by number on both). The
 * table is prefixed `fanout_` so this example can share a database, and an engine, with the others.
 * `enabled` is 0 or 1, an INTEGER on both databases, so rows read back the same.
 */

export const CREATE_TABLES = [
  // The seed's `symbols` table of the SymbolRegistry (its SymbolStorageManager).
  `CREATE TABLE IF NOT EXISTS fanout_symbols (
     symbol      TEXT    PRIMARY KEY,
     ticker      TEXT    NOT NULL,
     decimals    INTEGER NOT NULL,
     price_scale INTEGER NOT NULL,
     enabled     INTEGER NOT NULL CHECK (enabled IN (0, 1)),
     updated_at  BIGINT  NOT NULL
   )`,
  // The seed's CrawlerConfigManager: one row whose flag says whether the crawler runs. While it does,
  // reconciliation rides on its hourly runs; while it does not, reconciliation has its own 15 minutes.
  `CREATE TABLE IF NOT EXISTS fanout_crawler (
     id         INTEGER PRIMARY KEY CHECK (id = 1),
     enabled    INTEGER NOT NULL CHECK (enabled IN (0, 1)),
     updated_at BIGINT  NOT NULL
   )`,
];

/** The crawler's flag; no row yet means disabled. */
export const CRAWLER_ENABLED = `SELECT enabled FROM fanout_crawler WHERE id = 1`;

export const SET_CRAWLER = `
  INSERT INTO fanout_crawler (id, enabled, updated_at) VALUES (1, $1, $2)
  ON CONFLICT (id) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`;

export interface SymbolRow {
  symbol: string;
  ticker: string;
  decimals: number | string;
  price_scale: number | string;
  enabled: number | string;
}

/** The fan-out's state. Unordered: `registry.ts` sorts, as ORDER BY on text follows each database's collation. */
export const ENABLED_SYMBOLS = `
  SELECT symbol, ticker, decimals, price_scale, enabled FROM fanout_symbols WHERE enabled = 1`;

export const ALL_SYMBOLS = `
  SELECT symbol, ticker, decimals, price_scale, enabled FROM fanout_symbols`;

export const GET_SYMBOL = `
  SELECT symbol, ticker, decimals, price_scale, enabled FROM fanout_symbols WHERE symbol = $1`;

export const UPSERT_SYMBOL = `
  INSERT INTO fanout_symbols (symbol, ticker, decimals, price_scale, enabled, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
  ON CONFLICT (symbol) DO UPDATE SET
    ticker = excluded.ticker, decimals = excluded.decimals, price_scale = excluded.price_scale,
    enabled = excluded.enabled, updated_at = excluded.updated_at`;

export const ENABLE_SYMBOL = `
  UPDATE fanout_symbols SET enabled = 1, updated_at = $2 WHERE symbol = $1 AND enabled = 0 RETURNING symbol`;

/**
 * Disables a symbol unless it is the last one enabled, in one statement: the registry never writes
 * the empty set that the fan-out and the receivers would refuse (seed 001's empty-list guard, moved
 * up to where the mistake is made).
 */
export const DISABLE_SYMBOL = `
  UPDATE fanout_symbols SET enabled = 0, updated_at = $2
  WHERE symbol = $1 AND enabled = 1
    AND EXISTS (SELECT 1 FROM fanout_symbols other WHERE other.enabled = 1 AND other.symbol <> $1)
  RETURNING symbol`;
