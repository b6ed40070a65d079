import { afterAll, describe, expect, it } from "vitest";
import { StoreSetupError } from "../../src/core/errors.js";
import { postgres } from "../../src/store/postgres.js";
import { createTickwork } from "../../src/tickwork.js";
import { DATABASE_URL, uniqueSchema, withPg } from "../support/stores.js";

/** The URL of the test server with another user or database. */
function urlWith(change: { user?: string; database?: string }): string {
  const url = new URL(DATABASE_URL);
  if (change.user) url.username = change.user;
  if (change.database) url.pathname = `/${change.database}`;
  return url.toString();
}

async function refusal(url: string, schema?: string): Promise<unknown> {
  try {
    const tw = await createTickwork({ store: postgres(schema ? { url, schema } : url), logger: () => {}, handleSignals: false });
    await tw.stop();
    return null;
  } catch (error) {
    return error;
  }
}

describe("a PostgreSQL database that cannot be used as given is a StoreSetupError with its remedy, never a raw driver error", () => {
  const role = `tw_setup_${process.pid}`;
  afterAll(() => withPg((c) => c.query(`DROP ROLE IF EXISTS ${role}`)));

  it("a database that does not exist: create it or fix the name", async () => {
    const error = await refusal(urlWith({ database: `tw_no_such_db_${process.pid}` }));
    expect(error).toBeInstanceOf(StoreSetupError);
    expect(error).toMatchObject({ code: "TW_STORE_SETUP", message: expect.stringMatching(/^PostgreSQL refused: database "tw_no_such_db_\d+" does not exist: create the database \(CREATE DATABASE\) or fix the database name in the URL$/) });
  });

  it("a user the server does not know: check the user and pg_hba.conf", async () => {
    const error = await refusal(urlWith({ user: `tw_nobody_${process.pid}` }));
    expect(error).toBeInstanceOf(StoreSetupError);
    expect((error as Error).message).toMatch(/^PostgreSQL refused: role "tw_nobody_\d+" does not exist: check the user in the URL and the server's pg_hba.conf$/);
  });

  it("a user that may not create tickwork's schema: the grants it needs, or a migrate by a user that has them", async () => {
    await withPg((c) => c.query(`CREATE ROLE ${role} LOGIN`));
    const error = await refusal(urlWith({ user: role }), uniqueSchema());
    expect(error).toBeInstanceOf(StoreSetupError);
    expect((error as Error).message).toMatch(/^PostgreSQL refused: permission denied for database \w+: the user needs CONNECT on the database and CREATE on it/);
  });
});
