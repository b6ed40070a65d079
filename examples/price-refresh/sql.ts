/**
 * Every statement of the example, in one text for both databases: placeholders are PostgreSQL's
 * `$1, $2...`, which SQLite also accepts (bound by number in `database.ts`). Times and block heights
 * are BIGINT columns (epoch milliseconds for times), as in tickwork's own tables.
 *
 * Prices are not here: they live in tickwork's cache (`tw.cache`), as the seed keeps them in KV.
 */

export const CREATE_TABLES = [
  // The competition's swaps. `source = 'agent'`: a competition agent's swap (reported by the agent
  // on the request path, or found on chain by the sweep); `'manual'`: entered by an operator, and
  // outside the competition's price set.
  `CREATE TABLE IF NOT EXISTS swaps (
     tx_id        TEXT    PRIMARY KEY,
     agent        TEXT    NOT NULL,
     token_in     TEXT    NOT NULL,
     token_out    TEXT    NOT NULL,
     amount_in    BIGINT  NOT NULL,
     source       TEXT    NOT NULL CHECK (source IN ('agent', 'manual')),
     status       TEXT    NOT NULL CHECK (status IN ('pending', 'confirmed', 'rejected')),
     block_height BIGINT,
     recorded_at  BIGINT  NOT NULL
   )`,
  // The price task's token query reads only this index.
  `CREATE INDEX IF NOT EXISTS swaps_source_token_in ON swaps (source, token_in)`,
  // The sweep's cursor, in the database with the data it describes (the seed keeps it in D1's
  // competition_state, not in the scheduler's own storage). One row per sweep.
  `CREATE TABLE IF NOT EXISTS competition_state (
     id                TEXT    PRIMARY KEY,
     last_block_height BIGINT  NOT NULL,
     updated_at        BIGINT  NOT NULL
   )`,
];

/** The dynamic half of the price task's token set (the seed's query, as it is). */
export const AGENT_TOKENS = `SELECT DISTINCT token_in FROM swaps WHERE source = 'agent' ORDER BY token_in`;

/** A swap as the request path records it: the agent says it sent the transaction; the chain has not confirmed it yet. */
export const INSERT_REPORTED_SWAP = `
  INSERT INTO swaps (tx_id, agent, token_in, token_out, amount_in, source, status, block_height, recorded_at)
  VALUES ($1, $2, $3, $4, $5, $6, 'pending', NULL, $7)
  ON CONFLICT (tx_id) DO NOTHING`;

/**
 * A swap the sweep found in a block, with its outcome on chain ('confirmed' or 'rejected'). A row
 * the agent reported first is updated once (pending -> outcome); a row already settled is left alone,
 * so a second writer (a user's report, later a chainhook push) never undoes the sweep's work.
 */
export const RECORD_SWEPT_SWAP = `
  INSERT INTO swaps (tx_id, agent, token_in, token_out, amount_in, source, status, block_height, recorded_at)
  VALUES ($1, $2, $3, $4, $5, 'agent', $6, $7, $8)
  ON CONFLICT (tx_id) DO UPDATE SET status = excluded.status, block_height = excluded.block_height
  WHERE swaps.status = 'pending'`;

export const SWAP_EXISTS = `SELECT tx_id FROM swaps WHERE tx_id = $1`;

export const COUNT_PENDING = `SELECT count(*) AS n FROM swaps WHERE source = 'agent' AND status = 'pending'`;

export const LIST_SWAPS = `
  SELECT tx_id, agent, token_in, token_out, amount_in, source, status, block_height, recorded_at FROM swaps ORDER BY tx_id`;

/** Creates the sweep's row at height 0 the first time; later runs keep what is there. */
export const ENSURE_CURSOR = `
  INSERT INTO competition_state (id, last_block_height, updated_at) VALUES ($1, 0, $2)
  ON CONFLICT (id) DO NOTHING`;

export const GET_CURSOR = `SELECT last_block_height FROM competition_state WHERE id = $1`;

/** Moves the cursor forward only: a late or repeated write can never send the sweep back over old blocks. */
export const ADVANCE_CURSOR = `
  UPDATE competition_state SET last_block_height = $2, updated_at = $3
  WHERE id = $1 AND last_block_height < $2`;
