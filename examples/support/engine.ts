import { createTickwork, type Tickwork, type TickworkOptions } from "../../src/index.js";
import { openDatabase, type AppDatabase, type DatabaseTarget } from "./database.js";

/**
 * Where an example runs: on its own engine and database (`database`), or declared on an engine and
 * database it is given (`shared`), so that one process can host every example on one engine, as
 * `npm start` does.
 */
export type Hosting = { database: DatabaseTarget; shared?: undefined } | { shared: { tw: Tickwork; db: AppDatabase }; database?: undefined };

export interface HostedEngine {
  tw: Tickwork;
  db: AppDatabase;
  /** Stops the engine and closes the database when the example opened them; a shared engine is left to its owner. */
  close(): Promise<void>;
}

/** Opens (or adopts) the engine and the database, with the example's tables created. */
export async function hostExample(hosting: Hosting, createTables: readonly string[], engine: Omit<TickworkOptions, "store">): Promise<HostedEngine> {
  if (hosting.shared) {
    const { tw, db } = hosting.shared;
    await db.transaction(createTables.map((sql) => ({ sql })));
    return { tw, db, close: async () => {} };
  }
  const { store, db } = await openDatabase(hosting.database, createTables);
  let tw: Tickwork;
  try {
    tw = await createTickwork({ handleSignals: false, ...engine, store });
  } catch (error) {
    await Promise.allSettled([store.close(), db.close()]);
    throw error;
  }
  return {
    tw,
    db,
    async close() {
      await tw.stop();
      await db.close();
    },
  };
}
