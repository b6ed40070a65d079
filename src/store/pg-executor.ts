/** The seam between tickwork's PostgreSQL SQL and a driver (`pg` in Node). */
export interface PgExecutor {
  /** Runs one statement (prepared and cached per connection) and returns its rows. */
  query<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** PostgreSQL's limit of bound values per statement (the protocol's 16-bit count). */
  readonly maxParams: number;
}
