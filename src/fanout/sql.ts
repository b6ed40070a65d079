import { atomically, type SqlDb } from "../db/sql-db.js";
import type { FanoutRow, FanoutStore, TargetResult, TargetRow } from "./store.js";

/** Fan-out state and per-target acknowledgements; one SQL text for SQLite and PostgreSQL. */

const COLUMNS = `name, state, version, next_at, next_reason, consecutive_failures, last_error, last_push_at, last_success_at`;


interface Raw {
  name: string;
  state: string | null;
  version: number | string;
  next_at: number | string | null;
  next_reason: FanoutRow["nextReason"];
  consecutive_failures: number | string;
  last_error: string | null;
  last_push_at: number | string | null;
  last_success_at: number | string | null;
}

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

function toRow(r: Raw): FanoutRow {
  return {
    name: r.name,
    state: r.state,
    version: Number(r.version),
    nextAt: num(r.next_at),
    nextReason: r.next_reason,
    consecutiveFailures: Number(r.consecutive_failures),
    lastError: r.last_error,
    lastPushAt: num(r.last_push_at),
    lastSuccessAt: num(r.last_success_at),
  };
}

export class SqlFanoutStore implements FanoutStore {
  constructor(private readonly db: SqlDb) {}

  async ensure({ name, now, reconcileNow }: { name: string; now: number; reconcileNow: boolean }): Promise<void> {
    await this.db.query(
      `INSERT INTO tickwork_fanouts (name, next_at, next_reason, updated_at) VALUES ($1, $3, $4, $2) ON CONFLICT (name) DO NOTHING`,
      [name, now, reconcileNow ? now : null, reconcileNow ? "reconcile" : null],
    );
  }

  async get({ name }: { name: string }): Promise<FanoutRow | null> {
    const [row] = await this.db.query<Raw>(`SELECT ${COLUMNS} FROM tickwork_fanouts WHERE name = $1`, [name]);
    return row ? toRow(row) : null;
  }

  async saveState({ name, state, now }: { name: string; state: string; now: number }): Promise<{ version: number; changed: boolean }> {
    const [changed] = await this.db.query<{ version: number | string }>(
      `UPDATE tickwork_fanouts SET state = $2, version = version + 1, next_at = $3, next_reason = 'push', updated_at = $3
       WHERE name = $1 AND (state IS NULL OR state <> $2) RETURNING version`,
      [name, state, now],
    );
    if (changed) return { version: Number(changed.version), changed: true };
    const current = await this.get({ name });
    return { version: current?.version ?? 0, changed: false };
  }

  async claimDue({ name, now, leaseUntil }: { name: string; now: number; leaseUntil: number }): Promise<FanoutRow | null> {
    const [row] = await this.db.query<Raw>(
      `UPDATE tickwork_fanouts SET lease_until = $3 WHERE name = $1 AND next_at <= $2 AND lease_until <= $2 RETURNING ${COLUMNS}`,
      [name, now, leaseUntil],
    );
    return row ? toRow(row) : null;
  }

  async loadTargets({ fanout }: { fanout: string }): Promise<TargetRow[]> {
    const rows = await this.db.query<{ target: string; grp: string; version: number | string; failures: number | string; last_error: string | null; pushed_at: number | string | null }>(
      `SELECT target, grp, version, failures, last_error, pushed_at FROM tickwork_fanout_targets WHERE fanout = $1 ORDER BY target`,
      [fanout],
    );
    return rows.map((r) => ({ target: r.target, group: r.grp, version: Number(r.version), failures: Number(r.failures), lastError: r.last_error, pushedAt: num(r.pushed_at) }));
  }

  async recordTargets({ fanout, results, now }: { fanout: string; results: TargetResult[]; now: number }): Promise<void> {
    // A target's row binds 7 values on SQLite (fanout and now appear in every row); a Durable Object allows 100 per statement.
    const rowsPer = Math.min(500, Math.floor(this.db.maxParams / 7));
    // One round's results commit together: a crash halfway would leave some targets of the round
    // recorded and the rest as they were before it.
    await atomically(this.db, Math.ceil(results.length / rowsPer), function* (tx) {
      for (let i = 0; i < results.length; i += rowsPer) {
        const chunk = results.slice(i, i + rowsPer);
        const n = chunk.length * 5;
        const values = chunk.map((_, j) => `($${n + 1}, $${j * 5 + 1}, $${j * 5 + 2}, $${j * 5 + 3}, $${j * 5 + 4}, $${j * 5 + 5}, $${n + 2})`);
        // A failed push keeps the version the target last acknowledged.
        yield* tx.query(
          `INSERT INTO tickwork_fanout_targets (fanout, target, grp, version, failures, last_error, pushed_at) VALUES ${values.join(", ")}
           ON CONFLICT (fanout, target) DO UPDATE SET
             grp = excluded.grp,
             version = CASE WHEN excluded.last_error IS NULL THEN excluded.version ELSE tickwork_fanout_targets.version END,
             failures = CASE WHEN excluded.last_error IS NULL THEN 0 ELSE tickwork_fanout_targets.failures + 1 END,
             last_error = excluded.last_error,
             pushed_at = excluded.pushed_at`,
          [...chunk.flatMap((r) => [r.target, r.group, r.error === null ? r.version : 0, r.error === null ? 0 : 1, r.error]), fanout, now],
        );
      }
    });
  }

  async scheduleRound({ name, at, reason, ifNone = false }: Parameters<FanoutStore["scheduleRound"]>[0]): Promise<void> {
    await this.db.query(`UPDATE tickwork_fanouts SET next_at = $2, next_reason = $3 WHERE name = $1${ifNone ? " AND next_at IS NULL" : ""}`, [name, at, reason]);
  }

  async finish(p: Parameters<FanoutStore["finish"]>[0]): Promise<{ nextAt: number | null; nextReason: FanoutRow["nextReason"] }> {
    // The round's own wake-up is replaced only if it is still the one the round was claimed for, at
    // the round's version: a push or a reconciliation asked for during the round keeps its own.
    const ours = `version = $4 AND next_at = $10 AND next_reason IS NOT DISTINCT FROM $11`;
    const [row] = await this.db.query<{ next_at: number | string | null; next_reason: FanoutRow["nextReason"] }>(
      `UPDATE tickwork_fanouts SET
         consecutive_failures = $2, last_error = $3,
         next_at = CASE WHEN ${ours} THEN $5 ELSE next_at END,
         next_reason = CASE WHEN ${ours} THEN $6 ELSE next_reason END,
         last_push_at = CASE WHEN $7 = 1 THEN $9 ELSE last_push_at END,
         last_success_at = CASE WHEN $8 = 1 THEN $9 ELSE last_success_at END,
         lease_until = 0, updated_at = $9
       WHERE name = $1
       RETURNING next_at, next_reason`,
      [p.name, p.consecutiveFailures, p.lastError, p.roundVersion, p.nextAt, p.nextReason, p.pushed ? 1 : 0, p.succeeded ? 1 : 0, p.now, p.claimed.at, p.claimed.reason],
    );
    return { nextAt: num(row?.next_at ?? null), nextReason: row?.next_reason ?? null };
  }
}
