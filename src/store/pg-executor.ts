/** The seam between tickwork's PostgreSQL SQL and a driver (`pg` in Node). */
export interface PgExecutor {
  /** Runs one statement (prepared and cached per connection) and returns its rows. */
  query<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}
