import type { SqlDb } from "../db/sql-db.js";
import type { IdempotencyRecord, IdempotencyStore, KeyRef, ListCursor } from "./store.js";

interface Raw {
  scope: string;
  key: string;
  operation: string;
  status: "processing" | "completed";
  claim_id: string;
  fingerprint: string | null;
  result: string | null;
  created_at: number | string;
  renewed_at: number | string;
  completed_at: number | string | null;
}

const REF = "scope = $1 AND key = $2 AND operation = $3";

/** Idempotency keys in the store; every transition is one conditional statement. */
export class SqlIdempotencyStore implements IdempotencyStore {
  constructor(private readonly db: SqlDb) {}

  async claim({ scope, key, operation, claimId, fingerprint, now }: KeyRef & { claimId: string; fingerprint: string | null; now: number }) {
    const rows = await this.db.query(
      `INSERT INTO tickwork_idempotency (scope, key, operation, status, claim_id, fingerprint, created_at, renewed_at)
       VALUES ($1, $2, $3, 'processing', $4, $5, $6, $6) ON CONFLICT (scope, key, operation) DO NOTHING RETURNING claim_id`,
      [scope, key, operation, claimId, fingerprint, now],
    );
    return rows.length > 0;
  }

  async find({ scope, key, operation }: KeyRef) {
    const [row] = await this.db.query<Raw>(`SELECT * FROM tickwork_idempotency WHERE ${REF}`, [scope, key, operation]);
    return row ? toRecord(row) : null;
  }

  async findByKey({ key, operation }: { key: string; operation: string }) {
    const [row] = await this.db.query<Raw>(`SELECT * FROM tickwork_idempotency WHERE key = $1 AND operation = $2 ORDER BY created_at DESC LIMIT 1`, [key, operation]);
    return row ? toRecord(row) : null;
  }

  async reclaim({ scope, key, operation, expectedClaimId, claimId, fingerprint, now }: KeyRef & { expectedClaimId: string; claimId: string; fingerprint: string | null; now: number }) {
    const rows = await this.db.query(
      `UPDATE tickwork_idempotency SET status = 'processing', claim_id = $5, fingerprint = $6, result = NULL,
         created_at = $7, renewed_at = $7, completed_at = NULL
       WHERE ${REF} AND claim_id = $4 RETURNING claim_id`,
      [scope, key, operation, expectedClaimId, claimId, fingerprint, now],
    );
    return rows.length > 0;
  }

  async renew({ scope, key, operation, claimId, now }: KeyRef & { claimId: string; now: number }) {
    const rows = await this.db.query(
      `UPDATE tickwork_idempotency SET renewed_at = $5 WHERE ${REF} AND claim_id = $4 AND status = 'processing' RETURNING claim_id`,
      [scope, key, operation, claimId, now],
    );
    return rows.length > 0;
  }

  async complete({ scope, key, operation, claimId, result, now }: KeyRef & { claimId: string; result: string | null; now: number }) {
    const rows = await this.db.query(
      `UPDATE tickwork_idempotency SET status = 'completed', result = $5, completed_at = $6
       WHERE ${REF} AND claim_id = $4 AND status = 'processing' RETURNING claim_id`,
      [scope, key, operation, claimId, result, now],
    );
    return rows.length > 0;
  }

  async release({ scope, key, operation, claimId }: KeyRef & { claimId: string }) {
    const rows = await this.db.query(`DELETE FROM tickwork_idempotency WHERE ${REF} AND claim_id = $4 RETURNING claim_id`, [scope, key, operation, claimId]);
    return rows.length > 0;
  }

  async prune({ before, limit }: { before: number; limit: number }) {
    const rows = await this.db.query(
      `DELETE FROM tickwork_idempotency WHERE (scope, key, operation) IN (
         SELECT scope, key, operation FROM tickwork_idempotency WHERE created_at < $1 ORDER BY created_at LIMIT $2
       ) RETURNING key`,
      [before, limit],
    );
    return rows.length;
  }

  async list({ scope, limit, before }: { scope: string; limit: number; before?: ListCursor }) {
    const rows = before
      ? await this.db.query<Raw>(
          `SELECT * FROM tickwork_idempotency WHERE scope = $1 AND (created_at, key, operation) < ($2, $3, $4)
           ORDER BY created_at DESC, key DESC, operation DESC LIMIT $5`,
          [scope, before.createdAt, before.key, before.operation, limit],
        )
      : await this.db.query<Raw>(`SELECT * FROM tickwork_idempotency WHERE scope = $1 ORDER BY created_at DESC, key DESC, operation DESC LIMIT $2`, [scope, limit]);
    return rows.map(toRecord);
  }
}

function toRecord(r: Raw): IdempotencyRecord {
  return {
    scope: r.scope,
    key: r.key,
    operation: r.operation,
    status: r.status,
    claimId: r.claim_id,
    fingerprint: r.fingerprint,
    result: r.result,
    createdAt: Number(r.created_at),
    renewedAt: Number(r.renewed_at),
    completedAt: r.completed_at === null ? null : Number(r.completed_at),
  };
}
