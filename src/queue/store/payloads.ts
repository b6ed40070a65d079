/**
 * Where a job's payload lives on SQLite. SQLite rewrites a whole row on every UPDATE, and a job's row
 * is updated at least twice (its claim, its outcome): with a 2 KB payload inline, each of those wrote
 * a page of its own, and jobs ran at a quarter of the rate of small ones. A payload longer than
 * INLINE_PAYLOAD_MAX characters is written once, at insert, to `tickwork_job_payloads` under the job's
 * id, and the job's own column holds OUT_OF_LINE; deleting the job deletes it (a trigger). PostgreSQL
 * needs none of this: it moves long values out of its rows itself (TOAST).
 */

/** Longest payload (JSON characters) kept in the job's row on SQLite: the row then stays a few hundred bytes. */
export const INLINE_PAYLOAD_MAX = 512;

/** The job row's payload column when the payload is in `tickwork_job_payloads`: never a JSON text. */
const OUT_OF_LINE = "";

/** Whether `payload` goes to `tickwork_job_payloads` on SQLite. */
function isLongPayload(payload: string): boolean {
  return payload.length > INLINE_PAYLOAD_MAX;
}

/** What a new SQLite job row's payload column holds for `payload` (JSON text). */
export function inlinePayload(payload: string): string {
  return isLongPayload(payload) ? OUT_OF_LINE : payload;
}

/** Writes (or replaces) the out-of-line payload of a job: `$1` its id, `$2` the payload. */
const STORE_PAYLOAD = `INSERT INTO tickwork_job_payloads (id, payload) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET payload = excluded.payload`;

/**
 * The statement that puts the payload of the job row just written (`id`) beside it, or undefined when
 * the row holds it. Every SQLite write of a job's payload runs what this returns, in its transaction.
 */
export function payloadWrite(id: number | string, payload: string): { sql: string; params: [number, string] } | undefined {
  return isLongPayload(payload) ? { sql: STORE_PAYLOAD, params: [Number(id), payload] } : undefined;
}

/**
 * A SQLite expression for the payload of the job row `table` names (an alias, or `tickwork_jobs`):
 * `inline` where the row holds it, the out-of-line one (looked up by primary key) where it does not.
 */
export function payloadExpression(table: string, inline: string): string {
  return `CASE WHEN ${table}.payload = '${OUT_OF_LINE}' THEN (SELECT stored.payload FROM tickwork_job_payloads stored WHERE stored.id = ${table}.id) ELSE ${inline} END`;
}

/**
 * The extra column a SQLite read of whole job rows adds: the out-of-line payload as `stored_payload`,
 * null for a row that holds its own.
 */
function storedPayloadColumn(table: string): string {
  return `${payloadExpression(table, "NULL")} AS stored_payload`;
}

/**
 * A whole job row's columns in a SELECT (`returning` false) or a RETURNING clause: every column, and
 * on SQLite the out-of-line payload too. SQLite's RETURNING takes `*` only, never `table.*`.
 */
export function jobColumns(postgres: boolean, { table = "tickwork_jobs", returning = false }: { table?: string; returning?: boolean } = {}): string {
  if (postgres) return `${table}.*`;
  return `${returning ? "*" : `${table}.*`}, ${storedPayloadColumn(table)}`;
}
