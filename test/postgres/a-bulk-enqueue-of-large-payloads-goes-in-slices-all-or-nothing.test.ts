import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidPayloadError } from "../../src/core/errors.js";
import { postgres } from "../../src/store/postgres.js";
import { JOBS_CHANNEL } from "../../src/queue/store/postgres/notify.js";
import { createTickwork, type Tickwork } from "../../src/tickwork.js";
import { DATABASE_URL, dropSchema, uniqueSchema, withPg } from "../support/stores.js";
import { eventually } from "../support/real-time.js";

/**
 * A bulk enqueue of large payloads is written a slice of rows per statement, each serialised while
 * the server writes the one before, inside one transaction. These tests hold it to what insertMany
 * promises: every row in order, keys deduplicated across slices, all or nothing, one notify at the
 * commit (inside the transaction: a slice's statement carries it). The pool records the statements each of its connections sends.
 */
class RecordingPool extends pg.Pool {
  readonly sent: string[] = [];
  constructor(schema: string) {
    super({ connectionString: DATABASE_URL, options: `-c search_path="${schema}"` });
    this.on("connect", (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        const first = args[0];
        this.sent.push(typeof first === "string" ? first : (first as { text: string }).text);
        return query(...args);
      };
    });
  }

  /**
   * What was sent since `from`, each statement named by its first words; a notification on its own
   * is "NOTIFY". `withoutNotifies` leaves those out: an earlier enqueue's notification, sent once its
   * insert committed, may land among a later call's statements.
   */
  statements(from = 0, { withoutNotifies = false } = {}): string[] {
    const named = this.sent.slice(from).map((sql) => {
      const text = sql.replace(/\s+/g, " ").trim();
      if (text.startsWith("WITH ins AS ( INSERT")) return text.includes("pg_notify") ? "INSERT+NOTIFY" : "INSERT";
      // The insert outside a transaction, which may take slots idle workers of other processes offer.
      if (text.startsWith("WITH picked AS") && text.includes("INSERT INTO tickwork_jobs")) return "INSERT";
      return text.startsWith("SELECT") && text.includes("pg_notify") ? "NOTIFY" : text.split(" ")[0]!;
    });
    return withoutNotifies ? named.filter((s) => s !== "NOTIFY") : named;
  }
}

const order = (n: number) => ({ n, lines: Array.from({ length: 20 }, (_, k) => ({ sku: `SKU-${n}-${k}`, name: `Item ${k} "deluxe" \\ édition` })) });

describe("PostgreSQL: a bulk enqueue of large payloads goes in slices, all or nothing", () => {
  let schema: string;
  let pool: RecordingPool;
  let tw: Tickwork;

  const open = async () => {
    schema = uniqueSchema();
    await withPg((c) => c.query(`CREATE SCHEMA "${schema}"`));
    pool = new RecordingPool(schema);
    tw = await createTickwork({ store: postgres({ pool }), logger: () => {}, handleSignals: false });
  };

  afterEach(async () => {
    await tw?.stop();
    await pool?.end();
    if (schema) await dropSchema(schema);
  });

  it("writes every row in order, in several statements of one transaction, with keys deduplicated across slices", async () => {
    await open();
    const queue = tw.queue<ReturnType<typeof order>>("orders");
    const holder = await queue.enqueue(order(-1), { key: "held-before" });
    const items = Array.from({ length: 800 }, (_, n) => ({ payload: order(n), key: n === 0 || n === 700 ? "twice" : n === 650 ? "held-before" : `k${n}` }));
    const from = pool.sent.length;
    const jobs = await queue.enqueueMany(items);

    const statements = pool.statements(from, { withoutNotifies: true });
    expect(statements[0]).toBe("BEGIN");
    expect(statements.at(-1)).toBe("COMMIT");
    const inserts = statements.filter((s) => s.startsWith("INSERT"));
    expect(inserts.length).toBeGreaterThanOrEqual(4);
    // One notify, riding on the first slice, fires at the commit for every row.
    expect(inserts.filter((s) => s === "INSERT+NOTIFY")).toHaveLength(1);

    expect(jobs).toHaveLength(800);
    expect(jobs[650]).toMatchObject({ duplicate: true, id: holder.id, payload: order(-1) });
    expect(jobs[700]).toMatchObject({ duplicate: true, id: jobs[0]!.id, payload: order(0) });
    const fresh = jobs.filter((j) => !j.duplicate);
    expect(fresh).toHaveLength(798);
    // Ids ascend in the order the items were given, across slices.
    expect(fresh.map((j) => BigInt(j.id))).toEqual(fresh.map((j) => BigInt(j.id)).sort((a, b) => (a < b ? -1 : 1)));
    const stored = await withPg((c) => c.query<{ id: string; payload: unknown; key: string }>(`SELECT id::text AS id, payload, key FROM tickwork_jobs j WHERE j.id <> $1 ORDER BY j.id`, [holder.id]), schema);
    expect(stored.rows).toEqual(fresh.map((j) => ({ id: j.id, payload: j.payload, key: j.key })));
  });

  it("a payload that fails to serialise in a later slice rolls back the slices already written, and the pool goes on", async () => {
    await open();
    const queue = tw.queue<unknown>("orders");
    let calls = 0;
    // Passes the up-front check (its first toJSON call), fails when its slice is serialised.
    const fickle = { toJSON: () => (++calls === 1 ? { ok: true } : 1n) };
    const items = Array.from({ length: 800 }, (_, n) => ({ payload: n === 750 ? fickle : order(n) }));
    const from = pool.sent.length;
    const error = await queue.enqueueMany(items).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidPayloadError);
    expect((error as Error).message).toMatch(/enqueueMany\[750\]/);
    const statements = pool.statements(from);
    // Earlier slices had been sent before the failing one was serialised.
    expect(statements.filter((s) => s.startsWith("INSERT")).length).toBeGreaterThanOrEqual(2);
    expect(statements.at(-1)).toBe("ROLLBACK");
    const count = await withPg((c) => c.query<{ n: string }>(`SELECT count(*) AS n FROM tickwork_jobs`), schema);
    expect(count.rows[0]!.n).toBe("0");

    const again = await queue.enqueueMany(Array.from({ length: 800 }, (_, n) => ({ payload: order(n) })));
    expect(again.every((j) => !j.duplicate)).toBe(true);
    expect(pool.totalCount - pool.idleCount).toBe(0);
  });

  it("the notify reaches another connection only at the commit, with every row visible", async () => {
    await open();
    const listener = new pg.Client({ connectionString: DATABASE_URL, options: `-c search_path="${schema}"` });
    await listener.connect();
    try {
      const seen: number[] = [];
      listener.on("notification", (message) => {
        // Other schemas' enqueues (test files running beside this one) notify on the same channel.
        if (message.channel !== JOBS_CHANNEL || !message.payload?.startsWith(`${schema}/`)) return;
        // Counted on a third connection at the moment the notify arrives.
        void withPg((c) => c.query<{ n: string }>(`SELECT count(*) AS n FROM tickwork_jobs`), schema).then((r) => seen.push(Number(r.rows[0]!.n)));
      });
      await listener.query(`LISTEN ${JOBS_CHANNEL}`);
      await tw.queue("orders").enqueueMany(Array.from({ length: 800 }, (_, n) => ({ payload: order(n) })));
      await eventually(() => seen.length > 0, "the notify and the count after it");
      expect(seen).toEqual([800]);
    } finally {
      await listener.end();
    }
  });

  it("small payloads in the same call size go as one statement, without a transaction", async () => {
    await open();
    const from = pool.sent.length;
    const jobs = await tw.queue("tiny").enqueueMany(Array.from({ length: 800 }, (_, n) => ({ payload: { n } })));
    expect(jobs).toHaveLength(800);
    // Outside a transaction, the notification follows the insert's commit as a statement of its own.
    await eventually(() => pool.statements(from).length === 2, "the notification after the insert");
    expect(pool.statements(from)).toEqual(["INSERT", "NOTIFY"]);
  });
});
