/** An outbox row, mapped. Times are epoch ms; `payload` is JSON text. */
export interface DeliveryRow {
  id: string;
  delivery: string;
  key: string | null;
  payload: string;
  attempts: number;
  runAt: number;
  lastError: string | null;
  createdAt: number;
}

export interface DroppedRow extends DeliveryRow {
  droppedAt: number;
}

export interface DeliveryCounts {
  /** Waiting for their first send. */
  pending: number;
  /** Failed at least once, waiting for their next attempt. */
  retrying: number;
  /** In the dead-letter table. */
  dropped: number;
  /** The soonest time a pending or retrying item can be sent (its due time, or the end of the lease of a send in flight), or null. */
  nextAt: number | null;
}

/** What one pass's sends came to. */
export interface DeliveryOutcomes {
  /** Delivered: removed from the outbox. */
  delivered: string[];
  /** Failed, to be tried again at `runAt`. */
  retries: { id: string; attempts: number; runAt: number; error: string }[];
  /** Failed for the last time: moved to the dead-letter table. */
  dropped: { id: string; attempts: number; error: string; droppedAt: number }[];
}

/** The delivery module's storage seam: an outbox and a dead-letter table. */
export interface DeliveryStore {
  /** Adds items; an item whose key is already held by another outstanding item is skipped. Returns the ids inserted. */
  insertMany(params: { delivery: string; items: { id: string; key: string | null; payload: string }[]; now: number }): Promise<string[]>;
  /**
   * Leases due items until `leaseUntil`: first sends when `retries` is false, failed items when it is true.
   * An item leased by another process whose lease has not lapsed is never returned.
   */
  claimDue(params: { delivery: string; retries: boolean; now: number; limit: number; leaseUntil: number }): Promise<DeliveryRow[]>;
  /**
   * Writes a pass's outcomes together, in one transaction of a few batched statements: delivered
   * items leave the outbox, failed ones get their next attempt's time, dropped ones move to the
   * dead-letter table. All or none, so an item is never in both tables.
   */
  recordOutcomes(params: DeliveryOutcomes): Promise<void>;
  /**
   * Deletes up to `limit` dead letters of `delivery`: those of `ids`, or those dropped before `before`;
   * returns the ids deleted.
   */
  purgeDropped(params: { delivery: string; ids?: string[]; before?: number; limit: number }): Promise<string[]>;
  /** Moves dropped items back to the outbox as fresh items, keeping their ids; returns the ids moved. */
  replay(params: { delivery: string; ids?: string[]; since?: number; now: number; limit: number }): Promise<string[]>;
  listOutstanding(params: { delivery: string; retrying: boolean; limit: number; after?: string }): Promise<DeliveryRow[]>;
  listDropped(params: { delivery: string; limit: number; before?: { droppedAt: number; id: string } }): Promise<DroppedRow[]>;
  /** One item by id, outstanding (`droppedAt` null) or in the dead-letter table; null if neither holds it. */
  getItem(params: { delivery: string; id: string }): Promise<(DeliveryRow & { droppedAt: number | null }) | null>;
  counts(params: { delivery: string }): Promise<DeliveryCounts>;
  /** When the soonest outstanding item is due (a leased one when its lease lapses), or null. */
  nextAt(params: { delivery: string }): Promise<number | null>;
}
