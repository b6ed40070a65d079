import type { SqlDb } from "./sql-db.js";

/** The seam between tickwork's PostgreSQL SQL and a driver (`pg` in Node). */
export interface PgExecutor extends SqlDb {
  /** Runs one statement (prepared and cached per connection, unless `options.replan`) and returns its rows. */
  query<T>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<T[]>;
  /**
   * Runs `body` on one connection between BEGIN and COMMIT (ROLLBACK when it throws), like
   * `transaction`, but with an async body that may start a statement and work on while it runs:
   * the driver sends a connection's statements one after another, in the order they were made.
   */
  overlapped<T>(body: (query: PgExecutor["query"]) => Promise<T>): Promise<T>;
  /** PostgreSQL's limit of bound values per statement (the protocol's 16-bit count). */
  readonly maxParams: number;
}

export interface QueryOptions {
  /**
   * Plan the statement for every call instead of preparing it once per connection. For statements
   * whose best plan depends on how big the table is now: a prepared statement switches to a generic
   * plan after five calls and keeps it, and one built while the table was small (where a sequential
   * scan is cheapest) is kept while the table grows, until an ANALYZE happens to invalidate it.
   * Planning costs about 0.1 ms of server time, against a batch's commit.
   */
  replan?: boolean;
}
