import type { SqlDb, SqlTx } from "../../src/db/sql-db.js";

/** What a transaction did: its value, or its error's message. */
export type Outcome = { value: unknown } | { error: string };

/**
 * The same transactions on any store's SQL seam, and what they left behind. It imports nothing but
 * types, so it runs in the test process for SQLite and PostgreSQL and inside workerd for the Durable
 * Object (test/cloudflare/fixtures/store-host.ts), and one expectation covers every store.
 */
export async function transactionFacts(db: SqlDb) {
  await db.query(`CREATE TABLE tw_probe (k TEXT PRIMARY KEY, n INTEGER NOT NULL)`);
  const insert = `INSERT INTO tw_probe (k, n) VALUES ($1, $2)`;
  const outcome = (p: Promise<unknown>): Promise<Outcome> => p.then((value) => ({ value }), (error: Error) => ({ error: error.message }));
  const innerInsert = function* (tx: SqlTx, k: string) {
    yield* tx.query(insert, [k, 1]);
  };

  // A body that throws after two writes: neither stays.
  const thrown = await outcome(
    db.transaction(function* (tx) {
      yield* tx.query(insert, ["thrown", 1]);
      yield* tx.query(`UPDATE tw_probe SET n = n + 1 WHERE k = $1`, ["thrown"]);
      throw new Error("the body failed");
    }),
  );
  // A statement that fails (a duplicate key) takes the body's earlier writes with it.
  await db.query(insert, ["taken", 0]);
  const failedStatement = await outcome(
    db.transaction(function* (tx) {
      yield* tx.query(insert, ["before-the-failure", 1]);
      yield* tx.query(insert, ["taken", 1]);
    }),
  );
  // A nested body is part of the outer transaction: the outer throw undoes the inner's write too.
  const nested = await outcome(
    db.transaction(function* (tx) {
      yield* tx.query(insert, ["outer", 1]);
      yield* innerInsert(tx, "inner");
      throw new Error("the outer body failed");
    }),
  );
  // A body that ends commits every write, nested ones included, and reads its own writes.
  const committed = await outcome(
    db.transaction(function* (tx) {
      yield* tx.query(insert, ["kept", 1]);
      yield* innerInsert(tx, "kept-inner");
      const [row] = yield* tx.query<{ n: number | string }>(`SELECT count(*) AS n FROM tw_probe WHERE k LIKE 'kept%'`);
      return Number(row?.n);
    }),
  );
  // A statement issued outside while a transaction runs is not part of it.
  const [alongside] = await Promise.all([
    outcome(
      db.transaction(function* (tx) {
        yield* tx.query(insert, ["inside", 1]);
        throw new Error("the body failed");
      }),
    ),
    db.query(insert, ["outside", 1]),
  ]);
  const rows = await db.query<{ k: string; n: number | string }>(`SELECT k, n FROM tw_probe`);
  return {
    thrown,
    failedStatement: "error" in failedStatement,
    nested,
    committed,
    alongside,
    rows: rows.map((r) => `${r.k}=${Number(r.n)}`).sort(),
  };
}
