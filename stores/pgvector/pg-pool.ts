/**
 * A connection pool given to the store as `pool`: node-postgres's `pg.Pool` (the store checks out a client with
 * `connect()`, runs each operation in a transaction on it and releases it). Declared here rather than imported
 * from `pg`, so that an application that does not use PostgreSQL type-checks without `pg` or its types installed.
 */
export interface PgPool {
  connect(): Promise<unknown>;
}
