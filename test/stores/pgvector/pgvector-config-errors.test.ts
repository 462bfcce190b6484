import { describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../../src/errors.ts';
import { PgVectorStore } from '../../../stores/pgvector/pgvector-store.ts';
import { PostgresChatHistory } from '../../../stores/pgvector/postgres-chat-history.ts';

// No server needed: these are refused by the constructors, before any connection.
describe('the PostgreSQL components refuse a contradictory configuration as a ConfigError with its issues', () => {
  const pool = { query: async () => ({ rows: [] }), connect: async () => undefined, end: async () => undefined };

  it.each([
    ['PgVectorStore', () => new PgVectorStore({ url: 'postgres://localhost/axon', pool } as never)],
    ['PostgresChatHistory', () => new PostgresChatHistory({ url: 'postgres://localhost/axon', pool } as never)],
  ])('%s given both url and pool', (_name, create) => {
    let error: unknown;
    try {
      create();
    } catch (caught) {
      error = caught;
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).issues).toEqual([{ path: 'pool', code: 'incompatible', message: 'Give either url or pool, not both.' }]);
    expect((error as ConfigError).fix).toBe('Drop one of the two options.');
  });

  it('PgVectorStore without any connection names the url option', () => {
    vi.stubEnv('DATABASE_URL', '');
    let error: unknown;
    try {
      new PgVectorStore({});
    } catch (caught) {
      error = caught;
    } finally {
      vi.unstubAllEnvs();
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).issues.map(({ path, code }) => ({ path, code }))).toEqual([{ path: 'url', code: 'invalid_type' }]);
  });
});
