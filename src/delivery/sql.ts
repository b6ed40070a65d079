import { atomically, type SqlDb } from "../db/sql-db.js";
import type { DeliveryCounts, DeliveryOutcomes, DeliveryRow, DeliveryStore, DroppedRow } from "./store.js";

/** The delivery outbox; one SQL text for SQLite and PostgreSQL. */

const COLUMNS = `id, delivery, key, payload, attempts, run_at, last_error, created_at`;

/** Batches are sized by the bindings the store allows (a Durable Object: 100), at most this many rows. */
const MAX_ROWS = 500;

// The lease is checked again in the outer WHERE: on PostgreSQL a row another process leased between
// the subquery and the update is re-checked after its lock and skipped, so no item is sent twice at once.
const claim = (retries: boolean) => `
  UPDATE tickwork_deliveries SET lease_until = $4
  WHERE id IN (
    SELECT id FROM tickwork_deliveries
    WHERE delivery = $1 AND ${retries ? "attempts > 0" : "attempts = 0"} AND run_at <= $2 AND lease_until <= $2
    ORDER BY run_at${retries ? "" : ", created_at"} LIMIT $3
  ) AND lease_until <= $2
  RETURNING ${COLUMNS}`;
const CLAIM_FRESH = claim(false);
const CLAIM_RETRIES = claim(true);

// An item leased by a pass still sending it is due again only when its lease lapses: waking at its
// run_at (already past) would have the runtime spin until then.
const NEXT_DUE = `min(CASE WHEN lease_until > run_at THEN lease_until ELSE run_at END)`;

// A pass's outcomes, a chunk of rows per statement. The values go through a VALUES list, cast so
// PostgreSQL types its columns as the table's (an untyped parameter would be text); SQLite reads the
// same text (UPDATE ... FROM since 3.33).
const rescheduleMany = (rows: number) => `
  WITH v (id, attempts, run_at, last_error) AS (VALUES ${placeholders(rows, 4, (p) => `(${p[0]}, CAST(${p[1]} AS INTEGER), CAST(${p[2]} AS BIGINT), ${p[3]})`)})
  UPDATE tickwork_deliveries SET attempts = v.attempts, run_at = v.run_at, last_error = v.last_error, lease_until = 0
  FROM v WHERE tickwork_deliveries.id = v.id`;

// "WHERE true": SQLite needs a WHERE between a join and ON CONFLICT to parse them apart.
const deadLetterMany = (rows: number) => `
  WITH v (id, attempts, last_error, dropped_at) AS (VALUES ${placeholders(rows, 4, (p) => `(${p[0]}, CAST(${p[1]} AS INTEGER), ${p[2]}, CAST(${p[3]} AS BIGINT))`)})
  INSERT INTO tickwork_delivery_dead (id, delivery, key, payload, attempts, last_error, created_at, dropped_at)
  SELECT d.id, d.delivery, d.key, d.payload, v.attempts, v.last_error, d.created_at, v.dropped_at
  FROM tickwork_deliveries d JOIN v ON d.id = v.id WHERE true
  ON CONFLICT DO NOTHING`;

const deleteMany = (rows: number) => `DELETE FROM tickwork_deliveries WHERE id IN (${placeholders(rows, 1, (p) => p[0]!)})`;

/** `rows` groups of `width` placeholders ($1, $2...), each group shaped by `shape`, comma-separated. */
function placeholders(rows: number, width: number, shape: (p: string[]) => string): string {
  return Array.from({ length: rows }, (_, r) => shape(Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`))).join(", ");
}

/** `items` in chunks of at most `size`. */
function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

interface Raw {
  id: string;
  delivery: string;
  key: string | null;
  payload: string;
  attempts: number | string;
  run_at: number | string;
  last_error: string | null;
  created_at: number | string;
  dropped_at?: number | string;
}

function toRow(r: Raw): DeliveryRow {
  return {
    id: r.id,
    delivery: r.delivery,
    key: r.key,
    payload: r.payload,
    attempts: Number(r.attempts),
    runAt: Number(r.run_at),
    lastError: r.last_error,
    createdAt: Number(r.created_at),
  };
}

export class SqlDeliveryStore implements DeliveryStore {
  constructor(private readonly db: SqlDb) {}

  async insertMany({ delivery, items, now }: Parameters<DeliveryStore["insertMany"]>[0]): Promise<string[]> {
    // An outbox row's insert binds 6 values on SQLite (delivery and now appear in every row).
    const rowsPer = Math.min(MAX_ROWS, Math.floor(this.db.maxParams / 6));
    // All chunks or none: after an emit that failed halfway, the caller's retry of it would write the
    // unkeyed items of the first half again (under new ids) and report its keyed ones as skipped.
    return atomically(this.db, Math.ceil(items.length / rowsPer), function* (tx) {
      const inserted: string[] = [];
      for (let i = 0; i < items.length; i += rowsPer) {
        const chunk = items.slice(i, i + rowsPer);
        const values = chunk.map((_, j) => `($${j * 3 + 1}, $${chunk.length * 3 + 1}, $${j * 3 + 2}, $${j * 3 + 3}, $${chunk.length * 3 + 2}, $${chunk.length * 3 + 2})`);
        const params = [...chunk.flatMap((item) => [item.id, item.key, item.payload]), delivery, now];
        const rows = yield* tx.query<{ id: string }>(
          `INSERT INTO tickwork_deliveries (id, delivery, key, payload, run_at, created_at) VALUES ${values.join(", ")} ON CONFLICT DO NOTHING RETURNING id`,
          params,
        );
        inserted.push(...rows.map((r) => r.id));
      }
      return inserted;
    });
  }

  async claimDue({ delivery, retries, now, limit, leaseUntil }: Parameters<DeliveryStore["claimDue"]>[0]): Promise<DeliveryRow[]> {
    if (limit <= 0) return [];
    const rows = await this.db.query<Raw>(retries ? CLAIM_RETRIES : CLAIM_FRESH, [delivery, now, limit, leaseUntil]);
    return rows.map(toRow).sort((a, b) => a.runAt - b.runAt || a.createdAt - b.createdAt);
  }

  async recordOutcomes({ delivered, retries, dropped }: DeliveryOutcomes): Promise<void> {
    // Four values per row for the reschedule and the dead-letter insert, one per id for the delete;
    // a Durable Object binds at most 100 per statement.
    const rowsPer = Math.min(MAX_ROWS, Math.floor(this.db.maxParams / 4));
    const idsPer = Math.min(MAX_ROWS, this.db.maxParams);
    const statements = [
      ...chunks(retries, rowsPer).map((chunk) => ({ sql: rescheduleMany(chunk.length), params: chunk.flatMap((r) => [r.id, r.attempts, r.runAt, r.error]) })),
      // Into the dead-letter table before out of the outbox, in the same transaction.
      ...chunks(dropped, rowsPer).map((chunk) => ({ sql: deadLetterMany(chunk.length), params: chunk.flatMap((r) => [r.id, r.attempts, r.error, r.droppedAt]) })),
      ...chunks([...delivered, ...dropped.map((r) => r.id)], idsPer).map((chunk) => ({ sql: deleteMany(chunk.length), params: chunk })),
    ];
    await atomically(this.db, statements.length, function* (tx) {
      for (const { sql, params } of statements) yield* tx.query(sql, params);
    });
  }

  async replay({ delivery, ids, since, now, limit }: Parameters<DeliveryStore["replay"]>[0]): Promise<string[]> {
    // One transaction: an item moved back but still in the dead-letter table could be replayed twice.
    return this.db.transaction(function* (tx) {
      const picked = ids
        ? yield* tx.query<{ id: string }>(
            `SELECT id FROM tickwork_delivery_dead WHERE delivery = $1 AND id IN (${ids.map((_, j) => `$${j + 2}`).join(", ")})`,
            [delivery, ...ids],
          )
        : yield* tx.query<{ id: string }>(
            `SELECT id FROM tickwork_delivery_dead WHERE delivery = $1 AND dropped_at >= $2 ORDER BY dropped_at, id LIMIT $3`,
            [delivery, since ?? 0, limit],
          );
      const moved: string[] = [];
      for (const { id } of picked) {
        // A key now held by a newer outstanding item stays dropped: replaying it would send an old value twice.
        const [row] = yield* tx.query<{ id: string }>(
          `INSERT INTO tickwork_deliveries (id, delivery, key, payload, attempts, run_at, created_at)
           SELECT id, delivery, key, payload, 0, $2, created_at FROM tickwork_delivery_dead WHERE id = $1
           ON CONFLICT DO NOTHING RETURNING id`,
          [id, now],
        );
        if (!row) continue;
        yield* tx.query(`DELETE FROM tickwork_delivery_dead WHERE id = $1`, [id]);
        moved.push(id);
      }
      return moved;
    });
  }

  async purgeDropped({ delivery, ids, before, limit }: Parameters<DeliveryStore["purgeDropped"]>[0]): Promise<string[]> {
    const rows = ids
      ? await this.db.query<{ id: string }>(
          `DELETE FROM tickwork_delivery_dead WHERE delivery = $1 AND id IN (${ids.map((_, j) => `$${j + 2}`).join(", ")}) RETURNING id`,
          [delivery, ...ids],
        )
      : await this.db.query<{ id: string }>(
          `DELETE FROM tickwork_delivery_dead WHERE id IN (
             SELECT id FROM tickwork_delivery_dead WHERE delivery = $1 AND dropped_at < $2 ORDER BY dropped_at, id LIMIT $3
           ) AND delivery = $1 RETURNING id`,
          [delivery, before ?? 0, limit],
        );
    return rows.map((r) => r.id);
  }

  async listOutstanding({ delivery, retrying, limit, after }: Parameters<DeliveryStore["listOutstanding"]>[0]): Promise<DeliveryRow[]> {
    const rows = await this.db.query<Raw>(
      `SELECT ${COLUMNS} FROM tickwork_deliveries WHERE delivery = $1 AND ${retrying ? "attempts > 0" : "attempts = 0"} AND id > $2 ORDER BY id LIMIT $3`,
      [delivery, after ?? "", limit],
    );
    return rows.map(toRow);
  }

  async listDropped({ delivery, limit, before }: Parameters<DeliveryStore["listDropped"]>[0]): Promise<DroppedRow[]> {
    const rows = await this.db.query<Raw>(
      // The dead-letter table has no run_at; its dropped_at stands in for it.
      `SELECT id, delivery, key, payload, attempts, dropped_at AS run_at, last_error, created_at, dropped_at FROM tickwork_delivery_dead
       WHERE delivery = $1 AND (dropped_at < $2 OR (dropped_at = $2 AND id < $3))
       ORDER BY dropped_at DESC, id DESC LIMIT $4`,
      [delivery, before?.droppedAt ?? Number.MAX_SAFE_INTEGER, before?.id ?? "\uffff", limit],
    );
    return rows.map((r) => ({ ...toRow(r), droppedAt: Number(r.dropped_at) }));
  }

  async getItem({ delivery, id }: Parameters<DeliveryStore["getItem"]>[0]): Promise<(DeliveryRow & { droppedAt: number | null }) | null> {
    const [outstanding] = await this.db.query<Raw>(`SELECT ${COLUMNS} FROM tickwork_deliveries WHERE delivery = $1 AND id = $2`, [delivery, id]);
    if (outstanding) return { ...toRow(outstanding), droppedAt: null };
    const [dead] = await this.db.query<Raw>(
      `SELECT id, delivery, key, payload, attempts, dropped_at AS run_at, last_error, created_at, dropped_at FROM tickwork_delivery_dead WHERE delivery = $1 AND id = $2`,
      [delivery, id],
    );
    return dead ? { ...toRow(dead), droppedAt: Number(dead.dropped_at) } : null;
  }

  async nextAt({ delivery }: { delivery: string }): Promise<number | null> {
    const [row] = await this.db.query<{ next_at: number | string | null }>(`SELECT ${NEXT_DUE} AS next_at FROM tickwork_deliveries WHERE delivery = $1`, [delivery]);
    return row?.next_at == null ? null : Number(row.next_at);
  }

  async counts({ delivery }: { delivery: string }): Promise<DeliveryCounts> {
    const [outbox] = await this.db.query<{ pending: number | string | null; retrying: number | string | null; next_at: number | string | null }>(
      `SELECT sum(CASE WHEN attempts = 0 THEN 1 ELSE 0 END) AS pending, sum(CASE WHEN attempts > 0 THEN 1 ELSE 0 END) AS retrying,
         ${NEXT_DUE} AS next_at
       FROM tickwork_deliveries WHERE delivery = $1`,
      [delivery],
    );
    const [dead] = await this.db.query<{ n: number | string }>(`SELECT count(*) AS n FROM tickwork_delivery_dead WHERE delivery = $1`, [delivery]);
    return {
      pending: Number(outbox?.pending ?? 0),
      retrying: Number(outbox?.retrying ?? 0),
      dropped: Number(dead?.n ?? 0),
      nextAt: outbox?.next_at == null ? null : Number(outbox.next_at),
    };
  }
}
