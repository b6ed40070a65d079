/**
 * Every statement of the example, in one text for both databases: placeholders are PostgreSQL's
 * `$1, $2...`, which SQLite also accepts (bound by number in `database.ts`). Times are epoch
 * milliseconds in BIGINT columns, as in tickwork's own tables, so no dialect needs a date type.
 */

export const CREATE_TABLES = [
  `CREATE TABLE IF NOT EXISTS subscriptions (
     id               TEXT    PRIMARY KEY,
     payer            TEXT    NOT NULL,
     amount_cents     INTEGER NOT NULL CHECK (amount_cents > 0),
     status           TEXT    NOT NULL CHECK (status IN ('ACTIVE', 'CANCELLED', 'PAST_DUE')),
     billing_interval TEXT    NOT NULL CHECK (billing_interval IN ('daily', 'weekly', 'monthly', 'yearly')),
     next_due_at      BIGINT  NOT NULL,
     last_error       TEXT
   )`,
  // The scheduler's scan: active subscriptions by due date; cancelled and past-due rows stay out of it.
  `CREATE INDEX IF NOT EXISTS subscriptions_due ON subscriptions (next_due_at, id) WHERE status = 'ACTIVE'`,
  // One payment per subscription and due date, whatever happens to the jobs that collect it.
  `CREATE TABLE IF NOT EXISTS payments (
     charge_id        TEXT    PRIMARY KEY,
     subscription_id  TEXT    NOT NULL REFERENCES subscriptions (id),
     due_at           BIGINT  NOT NULL,
     amount_cents     INTEGER NOT NULL,
     job_id           TEXT    NOT NULL,
     attempt          INTEGER NOT NULL,
     paid_at          BIGINT  NOT NULL,
     UNIQUE (subscription_id, due_at)
   )`,
  // Which payments a run (or the admin's "charge now") has queued: the jobs of a batch take no
  // dedupe key, so this claim is what keeps a second run from queueing a payment twice.
  `CREATE TABLE IF NOT EXISTS payment_claims (
     subscription_id  TEXT    NOT NULL,
     due_at           BIGINT  NOT NULL,
     claimed_at       BIGINT  NOT NULL,
     PRIMARY KEY (subscription_id, due_at)
   )`,
  // One row per payment run, written by its summary job once every charge of the run finished.
  `CREATE TABLE IF NOT EXISTS payment_runs (
     id               TEXT    PRIMARY KEY,
     started_at       BIGINT  NOT NULL,
     finished_at      BIGINT  NOT NULL,
     payments         INTEGER NOT NULL,
     succeeded        INTEGER NOT NULL,
     skipped          INTEGER NOT NULL,
     failed           INTEGER NOT NULL,
     amount_cents     BIGINT  NOT NULL
   )`,
];

export const INSERT_SUBSCRIPTION = `
  INSERT INTO subscriptions (id, payer, amount_cents, status, billing_interval, next_due_at)
  VALUES ($1, $2, $3, $4, $5, $6)`;

/** One page of due subscriptions, keyset-paginated on (next_due_at, id). */
export const DUE_SUBSCRIPTIONS = `
  SELECT id, payer, amount_cents, billing_interval, next_due_at FROM subscriptions
  WHERE status = 'ACTIVE' AND next_due_at <= $1 AND (next_due_at, id) > ($2, $3)
  ORDER BY next_due_at, id
  LIMIT $4`;

export const GET_SUBSCRIPTION = `
  SELECT id, payer, amount_cents, status, billing_interval, next_due_at, last_error FROM subscriptions WHERE id = $1`;

export const LIST_SUBSCRIPTIONS = `
  SELECT id, payer, amount_cents, status, billing_interval, next_due_at, last_error FROM subscriptions ORDER BY id`;

export const COUNT_SUBSCRIPTIONS = `SELECT count(*) AS n FROM subscriptions`;

/** Active subscriptions due at or before $1 (the demo waits until none is left). */
export const COUNT_DUE = `SELECT count(*) AS n FROM subscriptions WHERE status = 'ACTIVE' AND next_due_at <= $1`;

// Recording a payment is two statements in one transaction. Both are conditional, so a second run
// of the same job (a crash after the charge, before the job was marked done) changes nothing.
export const INSERT_PAYMENT = `
  INSERT INTO payments (charge_id, subscription_id, due_at, amount_cents, job_id, attempt, paid_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7)
  ON CONFLICT DO NOTHING`;

export const ADVANCE_DUE_DATE = `
  UPDATE subscriptions SET next_due_at = $3, last_error = NULL
  WHERE id = $1 AND next_due_at = $2`;

export const MARK_PAST_DUE = `
  UPDATE subscriptions SET status = 'PAST_DUE', last_error = $3
  WHERE id = $1 AND next_due_at = $2 AND status = 'ACTIVE'`;

export const CANCEL_SUBSCRIPTION = `UPDATE subscriptions SET status = 'CANCELLED' WHERE id = $1`;

export const LIST_PAYMENTS = `
  SELECT charge_id, subscription_id, due_at, amount_cents, job_id, attempt, paid_at FROM payments ORDER BY subscription_id, due_at`;

/**
 * Claims the payments of one page of due subscriptions for a run: `$1` is now, `$2` the time before
 * which a claim is stale, then `(subscription_id, due_at)` pairs from `$3`. Returns the pairs this
 * statement claimed: new ones, and stale ones (a run that died between its claim and its batch). One
 * statement, so two runs at once claim each payment once (SQLite serialises writes; PostgreSQL's
 * second upsert waits for the first's row lock, then finds the claim fresh).
 */
export function claimPayments(pairs: number): string {
  const rows = Array.from({ length: pairs }, (_, i) => `($${3 + 2 * i}, $${4 + 2 * i}, $1)`);
  return `
  INSERT INTO payment_claims (subscription_id, due_at, claimed_at) VALUES ${rows.join(", ")}
  ON CONFLICT (subscription_id, due_at) DO UPDATE SET claimed_at = excluded.claimed_at
  WHERE payment_claims.claimed_at < $2
  RETURNING subscription_id, due_at`;
}

/** The admin's "charge now" claims its payment whatever a run did, so no later run queues it again. */
export const CLAIM_PAYMENT_NOW = `
  INSERT INTO payment_claims (subscription_id, due_at, claimed_at) VALUES ($1, $2, $3)
  ON CONFLICT (subscription_id, due_at) DO UPDATE SET claimed_at = excluded.claimed_at`;

/** A run's totals; a summary job that runs twice (a crash before it was marked done) writes its row again. */
export const RECORD_RUN = `
  INSERT INTO payment_runs (id, started_at, finished_at, payments, succeeded, skipped, failed, amount_cents)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
  ON CONFLICT (id) DO UPDATE SET finished_at = excluded.finished_at, payments = excluded.payments,
    succeeded = excluded.succeeded, skipped = excluded.skipped, failed = excluded.failed, amount_cents = excluded.amount_cents`;

export const LIST_RUNS = `
  SELECT id, started_at, finished_at, payments, succeeded, skipped, failed, amount_cents FROM payment_runs ORDER BY started_at, id`;
