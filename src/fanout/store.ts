/** A `tickwork_fanouts` row, mapped. Times are epoch ms; `state` is JSON text. */
export interface FanoutRow {
  name: string;
  state: string | null;
  version: number;
  nextAt: number | null;
  nextReason: "push" | "retry" | "reconcile" | null;
  consecutiveFailures: number;
  lastError: string | null;
  lastPushAt: number | null;
  lastSuccessAt: number | null;
}

/** A target's acknowledged state version and its failures. */
export interface TargetRow {
  target: string;
  group: string;
  version: number;
  failures: number;
  lastError: string | null;
  pushedAt: number | null;
}

export interface TargetResult {
  target: string;
  group: string;
  version: number;
  /** null: the push succeeded. */
  error: string | null;
}

/** The fan-out module's storage seam. */
export interface FanoutStore {
  /** Creates the fan-out's row if missing; with `reconcileNow`, its first round is due at once. */
  ensure(params: { name: string; now: number; reconcileNow: boolean }): Promise<void>;
  get(params: { name: string }): Promise<FanoutRow | null>;
  /** Stores a state that differs from the current one as a new version, due now; returns the version current after. */
  saveState(params: { name: string; state: string; now: number }): Promise<{ version: number; changed: boolean }>;
  /** Leases the fan-out's round if its wake-up is due and no other process holds it. */
  claimDue(params: { name: string; now: number; leaseUntil: number }): Promise<FanoutRow | null>;
  loadTargets(params: { fanout: string }): Promise<TargetRow[]>;
  recordTargets(params: { fanout: string; results: TargetResult[]; now: number }): Promise<void>;
  /**
   * Moves the next wake-up to `at` (a manual reconciliation); a round in progress keeps its lease.
   * With `ifNone`, only a fan-out with no wake-up at all gets this one.
   */
  scheduleRound(params: { name: string; at: number; reason: FanoutRow["nextReason"]; ifNone?: boolean }): Promise<void>;
  /**
   * Ends a round: failure count, last error, next wake-up, lease released. If the wake-up moved
   * during the round (a push saved a newer version; a reconciliation was asked for), that wake-up is
   * kept. Returns the wake-up stored after it, whichever it is.
   */
  finish(params: {
    name: string;
    roundVersion: number;
    /** The wake-up the round was claimed for (`claimDue`'s row): a different one stored now was set during the round. */
    claimed: { at: number | null; reason: FanoutRow["nextReason"] };
    consecutiveFailures: number;
    lastError: string | null;
    nextAt: number | null;
    nextReason: FanoutRow["nextReason"];
    pushed: boolean;
    succeeded: boolean;
    now: number;
  }): Promise<{ nextAt: number | null; nextReason: FanoutRow["nextReason"] }>;
}
