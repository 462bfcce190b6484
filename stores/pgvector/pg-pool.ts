/**
 * A node-postgres connection pool given to a store as `pool` (`pg.Pool`): the pgvector store checks out a client
 * with `connect()` for each transaction, the chat history runs single statements with `query()`. Declared here
 * rather than imported from `pg`, so that an application that does not use PostgreSQL type-checks without `pg` or
 * its types installed.
 */
export interface PgPool {
  connect(): Promise<unknown>;
  query(text: string, values?: unknown[]): Promise<unknown>;
}
