/**
 * Every statement of the example, in one text for both databases: placeholders are PostgreSQL's
 * `$1, $2...`, which SQLite also accepts (bound by number in `database.ts`). Times are epoch
 * milliseconds and money is integer cents, both in BIGINT columns, so no dialect needs a date or a
 * decimal type. PostgreSQL returns BIGINT as a string: `ledger.ts` reads every number with Number().
 */

export const CREATE_TABLES = [
  // An account is what seed 002's portfolio calls account_id: a reset replaces it with a new one.
  // `owner` stays the same across resets (the seed's per-user Durable Object); `replaced_by` points
  // from the old account to the new.
  `CREATE TABLE IF NOT EXISTS accounts (
     id             TEXT    PRIMARY KEY,
     owner          TEXT    NOT NULL,
     balance_cents  BIGINT  NOT NULL CHECK (balance_cents >= 0),
     created_at     BIGINT  NOT NULL,
     replaced_by    TEXT
   )`,
  // One current account per owner: a reset that ran twice could not leave two behind.
  `CREATE UNIQUE INDEX IF NOT EXISTS accounts_one_current_per_owner ON accounts (owner) WHERE replaced_by IS NULL`,
  `CREATE INDEX IF NOT EXISTS accounts_replaced_by ON accounts (replaced_by)`,
  `CREATE TABLE IF NOT EXISTS positions (
     id                 TEXT    PRIMARY KEY,
     account_id         TEXT    NOT NULL REFERENCES accounts (id),
     symbol             TEXT    NOT NULL,
     quantity           INTEGER NOT NULL CHECK (quantity > 0),
     entry_price_cents  BIGINT  NOT NULL,
     opened_at          BIGINT  NOT NULL,
     exit_price_cents   BIGINT,
     closed_at          BIGINT
   )`,
  `CREATE INDEX IF NOT EXISTS positions_account ON positions (account_id)`,
  // Limit buys: a marketable one fills at once (and opens a position), the rest rest with their cost reserved.
  `CREATE TABLE IF NOT EXISTS orders (
     id                 TEXT    PRIMARY KEY,
     account_id         TEXT    NOT NULL REFERENCES accounts (id),
     symbol             TEXT    NOT NULL,
     side               TEXT    NOT NULL CHECK (side = 'buy'),
     quantity           INTEGER NOT NULL CHECK (quantity > 0),
     limit_price_cents  BIGINT  NOT NULL,
     status             TEXT    NOT NULL CHECK (status IN ('open', 'filled')),
     fill_price_cents   BIGINT,
     position_id        TEXT,
     created_at         BIGINT  NOT NULL
   )`,
  `CREATE INDEX IF NOT EXISTS orders_account ON orders (account_id)`,
  // The account's cash ledger: one row per executed request, the thing that must never happen
  // twice. The row carries the client's request id, and UNIQUE (account_id, operation, request_id)
  // makes the effect itself idempotent: a re-run after a crash between the effect's commit and the
  // idempotency key's completion finds this row instead of executing again (README: crash analysis).
  // NULL request ids (calls without a key) are never equal, so they never collide.
  `CREATE TABLE IF NOT EXISTS executions (
     id                   TEXT    PRIMARY KEY,
     account_id           TEXT    NOT NULL REFERENCES accounts (id),
     request_id           TEXT,
     operation            TEXT    NOT NULL,
     kind                 TEXT    NOT NULL CHECK (kind IN ('opening_balance', 'deposit', 'open', 'close', 'fill', 'reserve')),
     symbol               TEXT,
     quantity             INTEGER,
     price_cents          BIGINT,
     amount_cents         BIGINT  NOT NULL,
     balance_after_cents  BIGINT  NOT NULL,
     position_id          TEXT,
     order_id             TEXT,
     executed_at          BIGINT  NOT NULL,
     UNIQUE (account_id, operation, request_id)
   )`,
];

/**
 * The first statement of every change to an account: a no-op UPDATE that returns the row. On
 * PostgreSQL it takes the row's lock, so changes to one account run one at a time (and the checks
 * that follow read a state nobody else is changing); on SQLite the transaction's write lock already
 * does that. Every change locks its account first, so two changes never wait on each other in a circle.
 */
export const LOCK_ACCOUNT = `
  UPDATE accounts SET balance_cents = balance_cents WHERE id = $1
  RETURNING id, owner, balance_cents, created_at, replaced_by`;

export const GET_ACCOUNT = `SELECT id, owner, balance_cents, created_at, replaced_by FROM accounts WHERE id = $1`;

/** The owner's current account, if any (create refuses a second one). */
export const CURRENT_ACCOUNT = `SELECT id FROM accounts WHERE owner = $1 AND replaced_by IS NULL`;

export const INSERT_ACCOUNT = `
  INSERT INTO accounts (id, owner, balance_cents, created_at) VALUES ($1, $2, $3, $4)
  ON CONFLICT DO NOTHING
  RETURNING id`;

export const REPLACE_ACCOUNT = `UPDATE accounts SET replaced_by = $2 WHERE id = $1 AND replaced_by IS NULL`;

export const ADD_TO_BALANCE = `UPDATE accounts SET balance_cents = balance_cents + $2 WHERE id = $1 RETURNING balance_cents`;

export const INSERT_POSITION = `
  INSERT INTO positions (id, account_id, symbol, quantity, entry_price_cents, opened_at) VALUES ($1, $2, $3, $4, $5, $6)`;

export const GET_POSITION = `
  SELECT id, account_id, symbol, quantity, entry_price_cents, opened_at, exit_price_cents, closed_at FROM positions
  WHERE id = $1 AND account_id = $2`;

export const CLOSE_POSITION = `
  UPDATE positions SET exit_price_cents = $3, closed_at = $4 WHERE id = $1 AND account_id = $2 AND closed_at IS NULL`;

export const OPEN_POSITIONS = `
  SELECT id, account_id, symbol, quantity, entry_price_cents, opened_at, exit_price_cents, closed_at FROM positions
  WHERE account_id = $1 AND closed_at IS NULL ORDER BY opened_at, id`;

export const INSERT_ORDER = `
  INSERT INTO orders (id, account_id, symbol, side, quantity, limit_price_cents, status, fill_price_cents, position_id, created_at)
  VALUES ($1, $2, $3, 'buy', $4, $5, $6, $7, $8, $9)`;

export const OPEN_ORDERS = `
  SELECT id, symbol, side, quantity, limit_price_cents, created_at FROM orders
  WHERE account_id = $1 AND status = 'open' ORDER BY created_at, id`;

export const INSERT_EXECUTION = `
  INSERT INTO executions (id, account_id, request_id, operation, kind, symbol, quantity, price_cents, amount_cents,
                          balance_after_cents, position_id, order_id, executed_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`;

/** An execution with what its answer needs: the position's entry price, the order's limit, the account it replaced. */
const EXECUTION = `
  SELECT e.id, e.account_id, e.request_id, e.operation, e.kind, e.symbol, e.quantity, e.price_cents, e.amount_cents,
         e.balance_after_cents, e.position_id, e.order_id, e.executed_at,
         a.owner, p.entry_price_cents, o.limit_price_cents,
         (SELECT r.id FROM accounts r WHERE r.replaced_by = e.account_id) AS replaced_account_id
  FROM executions e
  JOIN accounts a ON a.id = e.account_id
  LEFT JOIN positions p ON p.id = e.position_id
  LEFT JOIN orders o ON o.id = e.order_id`;

export const EXECUTION_BY_ID = `${EXECUTION} WHERE e.id = $1`;

/** Has this request already been executed on this account? (The effect's own idempotency.) */
export const EXECUTION_BY_REQUEST = `${EXECUTION} WHERE e.account_id = $1 AND e.operation = $2 AND e.request_id = $3`;

/**
 * The same question for requests that create an account (create, reset): the execution sits on the
 * account they created, so it is looked up across the owner's accounts.
 */
export const OWNER_EXECUTION_BY_REQUEST = `${EXECUTION} WHERE a.owner = $1 AND e.operation = $2 AND e.request_id = $3`;

export const EXECUTIONS_OF_ACCOUNT = `${EXECUTION} WHERE e.account_id = $1 ORDER BY e.executed_at, e.id`;

export const ACCOUNTS_OF_OWNER = `
  SELECT id, owner, balance_cents, created_at, replaced_by FROM accounts WHERE owner = $1 ORDER BY created_at, id`;

/** Executions per request id: the tests' and the demo's proof that nothing ran twice. */
export const EXECUTIONS_PER_REQUEST = `
  SELECT e.request_id, e.operation, a.owner, count(*) AS n FROM executions e JOIN accounts a ON a.id = e.account_id
  WHERE e.request_id IS NOT NULL AND a.owner = $1
  GROUP BY e.request_id, e.operation, a.owner ORDER BY e.request_id`;

/** An account's balance against the sum of its ledger: they agree unless something ran twice or not at all. */
export const LEDGER_CHECK = `
  SELECT a.id, a.balance_cents, (SELECT coalesce(sum(e.amount_cents), 0) FROM executions e WHERE e.account_id = a.id) AS ledger_cents
  FROM accounts a WHERE a.owner = $1 ORDER BY a.created_at, a.id`;
