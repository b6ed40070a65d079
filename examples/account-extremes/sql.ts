/**
 * The example's SQL, one text for SQLite and PostgreSQL (`$1, $2...` bind by number on both). Tables
 * are prefixed `extremes_` so this example can share a database, and an engine, with the others.
 * Times are BIGINT epoch milliseconds, days `YYYY-MM-DD` text; values are DOUBLE PRECISION (REAL
 * affinity on SQLite), so the same IEEE arithmetic runs in either database and in the tests.
 */

export const CREATE_TABLES = [
  // The price feed, as it arrives: one row per tick. The tracker folds ticks in `at` order.
  `CREATE TABLE IF NOT EXISTS extremes_price_ticks (
     at    BIGINT           PRIMARY KEY,
     price DOUBLE PRECISION NOT NULL
   )`,
  // One row per tracked account (the seed's tracking records). An account's value at a price is
  // base_value + exposure * price (the seed's coefficients; exposure < 0 is a short position).
  // hour_start and hourly_*: the hour being accumulated. day and daily_*: the day being accumulated.
  // daily_date: the first day whose daily callback has not been delivered (the seed's per-row
  // progress; onDelivered moves it on). last_tick_at: the last tick folded into this row.
  `CREATE TABLE IF NOT EXISTS extremes_trackings (
     account_id    TEXT             PRIMARY KEY,
     base_value    DOUBLE PRECISION NOT NULL,
     exposure      DOUBLE PRECISION NOT NULL,
     hour_start    BIGINT           NOT NULL,
     hourly_peak   DOUBLE PRECISION,
     hourly_bottom DOUBLE PRECISION,
     hourly_close  DOUBLE PRECISION,
     day           TEXT             NOT NULL,
     daily_peak    DOUBLE PRECISION,
     daily_bottom  DOUBLE PRECISION,
     daily_date    TEXT             NOT NULL,
     last_tick_at  BIGINT           NOT NULL,
     created_at    BIGINT           NOT NULL
   )`,
  // A closed hour per account (the seed's hourly snapshots): written when the feed passes the hour,
  // emitted as hourly callbacks, and cleaned up after two days.
  `CREATE TABLE IF NOT EXISTS extremes_hourly_snapshots (
     hour       BIGINT           NOT NULL,
     account_id TEXT             NOT NULL,
     peak       DOUBLE PRECISION NOT NULL,
     bottom     DOUBLE PRECISION NOT NULL,
     close      DOUBLE PRECISION NOT NULL,
     emitted_at BIGINT,
     PRIMARY KEY (hour, account_id)
   )`,
  `CREATE INDEX IF NOT EXISTS extremes_hourly_snapshots_unemitted ON extremes_hourly_snapshots (hour, account_id) WHERE emitted_at IS NULL`,
  // A closed day per account: its extremes frozen at midnight, so the next day's ticks have a place
  // to go while the daily callback waits for a retry. midnight_value is null when the feed had no
  // price at midnight.
  `CREATE TABLE IF NOT EXISTS extremes_daily_closes (
     account_id     TEXT             NOT NULL,
     day            TEXT             NOT NULL,
     peak           DOUBLE PRECISION NOT NULL,
     bottom         DOUBLE PRECISION NOT NULL,
     midnight_value DOUBLE PRECISION,
     PRIMARY KEY (account_id, day)
   )`,
  // Progress markers: how far the feed has been folded, which dropped daily callbacks were seen.
  `CREATE TABLE IF NOT EXISTS extremes_state (
     name  TEXT   PRIMARY KEY,
     value BIGINT NOT NULL
   )`,
];

// ---- state --------------------------------------------------------------------------------------

export const GET_STATE = `SELECT value FROM extremes_state WHERE name = $1`;

/** Markers only move forward: a late or repeated write never sends the tracker back over old ticks. */
export const ADVANCE_STATE = `
  INSERT INTO extremes_state (name, value) VALUES ($1, $2)
  ON CONFLICT (name) DO UPDATE SET value = excluded.value WHERE extremes_state.value < excluded.value`;

// ---- the feed and the trackings -----------------------------------------------------------------

export const insertTicks = (count: number) => `
  INSERT INTO extremes_price_ticks (at, price) VALUES ${rows(count, 2)}
  ON CONFLICT (at) DO NOTHING`;

export const insertTrackings = (count: number) => `
  INSERT INTO extremes_trackings (account_id, base_value, exposure, hour_start, day, daily_date, last_tick_at, created_at)
  VALUES ${rows(count, 8)}
  ON CONFLICT (account_id) DO NOTHING`;

export const TICKS_AFTER = `
  SELECT at, price FROM extremes_price_ticks WHERE at > $1 AND at <= $2 ORDER BY at LIMIT $3`;

/** The price at midnight: the last tick at or before it, if the feed had one within the tolerance. */
export const PRICE_AT = `
  SELECT price FROM extremes_price_ticks WHERE at <= $1 AND at >= $2 ORDER BY at DESC LIMIT 1`;

// The value of an account at a price; the CAST tells PostgreSQL the parameter's type.
const valueAt = (param: string) => `(base_value + exposure * CAST(${param} AS DOUBLE PRECISION))`;
// value = base + exposure * price is monotonic in the price, so a run of ticks' highest value is at
// its highest price for a long position and at its lowest for a short one: a segment of ticks is
// folded in one statement from its low, high and last price, whatever its length.
const SEGMENT_PEAK = `(base_value + exposure * CASE WHEN exposure >= 0 THEN CAST($2 AS DOUBLE PRECISION) ELSE CAST($1 AS DOUBLE PRECISION) END)`;
const SEGMENT_BOTTOM = `(base_value + exposure * CASE WHEN exposure >= 0 THEN CAST($1 AS DOUBLE PRECISION) ELSE CAST($2 AS DOUBLE PRECISION) END)`;
const higher = (column: string, value: string) => `CASE WHEN ${column} IS NULL OR ${value} > ${column} THEN ${value} ELSE ${column} END`;
const lower = (column: string, value: string) => `CASE WHEN ${column} IS NULL OR ${value} < ${column} THEN ${value} ELSE ${column} END`;

/**
 * Folds ticks of one hour into every tracking that has not seen them: $1 low, $2 high, $3 last
 * price, $4 the last tick's time, $5 the hour. A tracking added after that hour skips it.
 */
export const FOLD_SEGMENT = `
  UPDATE extremes_trackings SET
    hourly_peak   = ${higher("hourly_peak", SEGMENT_PEAK)},
    hourly_bottom = ${lower("hourly_bottom", SEGMENT_BOTTOM)},
    hourly_close  = ${valueAt("$3")},
    daily_peak    = ${higher("daily_peak", SEGMENT_PEAK)},
    daily_bottom  = ${lower("daily_bottom", SEGMENT_BOTTOM)},
    last_tick_at  = $4
  WHERE last_tick_at < $4 AND hour_start <= $5`;

/** The feed reached hour $1: every earlier hour being accumulated is closed into a snapshot. */
export const SNAPSHOT_HOURS = `
  INSERT INTO extremes_hourly_snapshots (hour, account_id, peak, bottom, close)
  SELECT hour_start, account_id, hourly_peak, hourly_bottom, hourly_close FROM extremes_trackings
  WHERE hour_start < $1 AND hourly_peak IS NOT NULL
  ON CONFLICT (hour, account_id) DO NOTHING`;

export const START_HOUR = `
  UPDATE extremes_trackings SET hour_start = $1, hourly_peak = NULL, hourly_bottom = NULL, hourly_close = NULL
  WHERE hour_start < $1`;

/** The feed reached day $1: earlier days are frozen, with the value at midnight ($2, the price) if known. */
export const CLOSE_DAYS = `
  INSERT INTO extremes_daily_closes (account_id, day, peak, bottom, midnight_value)
  SELECT account_id, day, daily_peak, daily_bottom, ${valueAt("$2")} FROM extremes_trackings
  WHERE day < $1 AND daily_peak IS NOT NULL
  ON CONFLICT (account_id, day) DO NOTHING`;

export const START_DAY = `
  UPDATE extremes_trackings SET day = $1, daily_peak = NULL, daily_bottom = NULL WHERE day < $1`;

/** Daily callbacks wait for this to find nothing: a tracking that owes a day and has not seen its end. */
export const BEHIND_MIDNIGHT = `
  SELECT account_id FROM extremes_trackings WHERE daily_date < $1 AND last_tick_at < $2 LIMIT 1`;

// ---- callbacks ----------------------------------------------------------------------------------

export interface SnapshotRow {
  hour: number | string;
  account_id: string;
  peak: number;
  bottom: number;
  close: number;
}

/** Closed hours not yet emitted, by keyset on (hour, account_id): $1 hour and $2 account of the cursor. */
export const UNEMITTED_SNAPSHOTS = `
  SELECT hour, account_id, peak, bottom, close FROM extremes_hourly_snapshots
  WHERE emitted_at IS NULL AND (hour > $1 OR (hour = $1 AND account_id > $2))
  ORDER BY hour, account_id LIMIT $3`;

/** Marks a page emitted: the rows after the cursor ($2, $3) up to the page's last row ($4, $5). */
export const MARK_SNAPSHOTS_EMITTED = `
  UPDATE extremes_hourly_snapshots SET emitted_at = $1
  WHERE emitted_at IS NULL
    AND (hour > $2 OR (hour = $2 AND account_id > $3))
    AND (hour < $4 OR (hour = $4 AND account_id <= $5))`;

export interface OwedDayRow {
  account_id: string;
  day: string;
  peak: number;
  bottom: number;
  midnight_value: number | null;
}

/**
 * The seed's daily pass: trackings that owe a day before $2 (today), by keyset on account_id after
 * $1, each with its first closed day not yet delivered. A delivery moves `daily_date` past the day,
 * so the row leaves the filter while the pass is still paging: hence keyset, not OFFSET.
 */
export const OWED_DAYS = `
  SELECT t.account_id, c.day, c.peak, c.bottom, c.midnight_value
  FROM extremes_trackings t
  JOIN extremes_daily_closes c ON c.account_id = t.account_id
   AND c.day = (SELECT min(m.day) FROM extremes_daily_closes m WHERE m.account_id = t.account_id AND m.day >= t.daily_date)
  WHERE t.account_id > $1 AND t.daily_date < $2 AND c.day < $2
  ORDER BY t.account_id LIMIT $3`;

/** After a delivered (or dropped) daily callback for day $2: the tracking owes the days after it. */
export const ADVANCE_DAILY_DATE = `
  UPDATE extremes_trackings SET daily_date = $3 WHERE account_id = $1 AND daily_date <= $2`;

// ---- cleanup (the seed's step 5) ----------------------------------------------------------------

export const DELETE_OLD_SNAPSHOTS = `DELETE FROM extremes_hourly_snapshots WHERE hour < $1 AND emitted_at IS NOT NULL`;

/** Closed days already delivered (the tracking's daily_date is past them) and older than $1. */
export const DELETE_OLD_CLOSES = `
  DELETE FROM extremes_daily_closes WHERE day < $1
    AND day < (SELECT t.daily_date FROM extremes_trackings t WHERE t.account_id = extremes_daily_closes.account_id)`;

export const DELETE_OLD_TICKS = `DELETE FROM extremes_price_ticks WHERE at < $1`;

// ---- reading back (tests, the demo) -------------------------------------------------------------

export interface TrackingRow {
  account_id: string;
  base_value: number;
  exposure: number;
  hour_start: number | string;
  hourly_peak: number | null;
  hourly_bottom: number | null;
  hourly_close: number | null;
  day: string;
  daily_peak: number | null;
  daily_bottom: number | null;
  daily_date: string;
  last_tick_at: number | string;
}

export const GET_TRACKING = `
  SELECT account_id, base_value, exposure, hour_start, hourly_peak, hourly_bottom, hourly_close, day, daily_peak, daily_bottom, daily_date, last_tick_at
  FROM extremes_trackings WHERE account_id = $1`;

export const COUNT_BY_DAILY_DATE = `SELECT daily_date, count(*) AS n FROM extremes_trackings GROUP BY daily_date`;

/** `($1, $2), ($3, $4)...`: `count` rows of `width` placeholders. */
function rows(count: number, width: number): string {
  return Array.from({ length: count }, (_, r) => `(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`).join(", ")})`).join(", ");
}
