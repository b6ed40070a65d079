import type { Store } from "../../src/store/store.js";
import { openDatabase as openShared, type AppDatabase, type DatabaseTarget } from "../support/database.js";
import { CREATE_TABLES } from "./sql.js";

export { describeTarget, type AppDatabase, type DatabaseTarget, type SqlParam, type Statement } from "../support/database.js";

/** tickwork's store and this example's connection on one database, with this example's tables created. */
export function openDatabase(target: DatabaseTarget): Promise<{ store: Store; db: AppDatabase }> {
  return openShared(target, CREATE_TABLES);
}
