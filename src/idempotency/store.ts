/** An idempotency record as the store keeps it. Times are epoch ms. */
export interface IdempotencyRecord {
  scope: string;
  key: string;
  operation: string;
  status: "processing" | "completed";
  claimId: string;
  fingerprint: string | null;
  /** The result as JSON text; null for a void result. */
  result: string | null;
  createdAt: number;
  /** When the claim was made or last renewed by its running owner. */
  renewedAt: number;
  completedAt: number | null;
}

export type KeyRef = { scope: string; key: string; operation: string };

/** Where a page of `list` starts: the position of the previous page's last record. */
export type ListCursor = { createdAt: number; key: string; operation: string };

/** The idempotency module's storage seam; one SQL text serves SQLite and PostgreSQL. */
export interface IdempotencyStore {
  /** Inserts a processing claim unless a row holds (scope, key, operation); true if inserted. */
  claim(params: KeyRef & { claimId: string; fingerprint: string | null; now: number }): Promise<boolean>;
  find(params: KeyRef): Promise<IdempotencyRecord | null>;
  /** For scope-changing operations: the record of (key, operation) in any scope. */
  findByKey(params: { key: string; operation: string }): Promise<IdempotencyRecord | null>;
  /**
   * Takes over a row whose claim went stale (its owner crashed) or that expired: only if it still
   * carries `expectedClaimId`, so two processes cannot both take it.
   */
  reclaim(params: KeyRef & { expectedClaimId: string; claimId: string; fingerprint: string | null; now: number }): Promise<boolean>;
  /** Keeps a running owner's claim fresh. */
  renew(params: KeyRef & { claimId: string; now: number }): Promise<boolean>;
  /** Records the result; false if the claim is no longer this owner's. */
  complete(params: KeyRef & { claimId: string; result: string | null; now: number }): Promise<boolean>;
  /** Deletes the row if it still carries `claimId` (a failure's claim, so the client may retry; or an expired row). */
  release(params: KeyRef & { claimId: string }): Promise<boolean>;
  /** Deletes keys created before `before` (at most `limit`); returns how many. */
  prune(params: { before: number; limit: number }): Promise<number>;
  /**
   * Keys of a scope, newest first (created_at, then key and operation, descending); keyset pages:
   * `before` is the last record of the previous page.
   */
  list(params: { scope: string; limit: number; before?: ListCursor }): Promise<IdempotencyRecord[]>;
}
