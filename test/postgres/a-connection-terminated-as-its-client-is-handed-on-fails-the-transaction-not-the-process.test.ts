import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../src/core/errors.js";
import { pgExecutor } from "../../src/store/pg.js";
import { DATABASE_URL } from "../support/stores.js";
import { DatabaseProxy } from "../support/database-proxy.js";
import { eventually } from "../support/real-time.js";

/** A ReadyForQuery message ('Z', length 5, the transaction status) ends the bytes. */
const endsReady = (bytes: Buffer) => bytes.length >= 6 && bytes[bytes.length - 6] === 0x5a && bytes.readInt32BE(bytes.length - 5) === 5;

describe("PostgreSQL: the server ends a connection just as its client passes from one caller to the next", () => {
  const proxy = new DatabaseProxy();
  let pool: pg.Pool | undefined;
  // What would have ended a process outside the test runner (which catches it and reports it too).
  const uncaught: unknown[] = [];
  const heard = (error: unknown) => uncaught.push(error);
  afterEach(async () => {
    process.removeListener("uncaughtException", heard);
    await pool?.end();
    await proxy.close();
  });

  // What a loaded worker process saw when PostgreSQL restarted: the answer to one statement and the
  // server's FATAL goodbye came in one read. Ending the first statement hands its client to a
  // transaction waiting for the pool, and the goodbye is parsed in that same read, before a promise's
  // continuation could listen for it; an "error" event nobody hears ends the process.
  it("fails the waiting transaction with StoreUnavailableError and the process goes on", async () => {
    process.prependListener("uncaughtException", heard);
    await proxy.open();
    pool = new pg.Pool({ connectionString: proxy.url, max: 1 });
    pool.on("error", () => {});
    const db = pgExecutor(pool);
    const [backend] = await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");

    proxy.hold();
    const first = db.query<{ one: number }>("SELECT $1::int AS one", [1]);
    // The pool's one client is busy: the transaction waits for it.
    const waiting = db.transaction(function* (tx) {
      return yield* tx.query<{ two: number }>("SELECT $1::int AS two", [2]);
    });
    await eventually(() => proxy.held().some((c) => endsReady(c.bytes)), "the first statement's answer, held");
    const admin = new pg.Client(DATABASE_URL);
    await admin.connect();
    try {
      await admin.query("SELECT pg_terminate_backend($1)", [backend!.pid]);
    } finally {
      await admin.end();
    }
    await eventually(() => proxy.held().some((c) => c.serverEnded), "the server to end the connection");
    proxy.deliver();

    expect(await first).toEqual([{ one: 1 }]);
    await expect(waiting).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(uncaught).toEqual([]);
    // The pool replaces the dead client: the next statement runs.
    expect(await db.query<{ three: number }>("SELECT $1::int AS three", [3])).toEqual([{ three: 3 }]);
  });
});
