import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresChatHistory } from '../../../stores/pgvector/postgres-chat-history.ts';
import { CHAT_HISTORY_PROCESS_CASES, conformanceTurn, describeChatHistoryConformance } from '../../../testing/chat-history.ts';
import { startPgliteServer, type PgliteServer } from '../../servers/pglite-server.ts';

let server: PgliteServer;
let tableNumber = 0;

beforeAll(async () => {
  server = await startPgliteServer({ vector: false });
}, 60_000);
afterAll(async () => {
  await server?.close();
});

/** A fresh table on the shared PGlite connection, dropped after the test. */
function freshHistory(options: { createTable?: boolean } = {}): { history: PostgresChatHistory; table: string; cleanup: () => Promise<void> } {
  const table = `chat_history_${++tableNumber}`;
  return {
    history: new PostgresChatHistory({ pool: server.pool, table, ...options }),
    table,
    cleanup: async () => {
      await server.pool.query(`DROP TABLE IF EXISTS ${table}`);
    },
  };
}

describeChatHistoryConformance('postgres-chat-history (PGlite)', async () => freshHistory(), {
  skip: [
    {
      reason: "PGlite is one session under every connection, so two processes' statements would interleave inside it; test/live runs these on a server",
      tests: [...CHAT_HISTORY_PROCESS_CASES],
    },
  ],
});

describe('PostgresChatHistory', () => {
  it('keeps one row per turn in its table, positions counting from 1, the turn as jsonb', async () => {
    const { history, table, cleanup } = freshHistory();
    try {
      await history.append('rows', conformanceTurn(0));
      await history.append('rows', conformanceTurn(1));
      const { rows } = await server.pool.query(`SELECT conversation_id, position, turn->>'runId' AS run_id FROM ${table} ORDER BY position`);
      expect(rows).toEqual([
        { conversation_id: 'rows', position: 1, run_id: 'run-0' },
        { conversation_id: 'rows', position: 2, run_id: 'run-1' },
      ]);
    } finally {
      await cleanup();
    }
  });

  it('stores hostile text as data: quotes and SQL in a turn and an id reach no statement', async () => {
    const { history, table, cleanup } = freshHistory();
    try {
      const turn = conformanceTurn(0, { question: `'); DROP TABLE ${table}; --`, answer: `$1 $$ \\'" ${'\\'}` });
      await history.append('hostile', turn);
      expect(await history.load('hostile')).toEqual([turn]);
      await expect(history.load(`x'; DROP TABLE ${table}; --`)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      expect((await server.pool.query(`SELECT count(*)::integer AS n FROM ${table}`)).rows[0].n).toBe(1);
    } finally {
      await cleanup();
    }
  });

  it('two histories on one table see each other’s turns', async () => {
    const first = freshHistory();
    const second = new PostgresChatHistory({ pool: server.pool, table: first.table });
    try {
      await first.history.append('shared', conformanceTurn(0));
      await second.append('shared', conformanceTurn(1));
      expect((await first.history.load('shared')).map((turn) => turn.runId)).toEqual(['run-0', 'run-1']);
    } finally {
      await first.cleanup();
    }
  });

  it('a stored row that is not a turn is STORE_CORRUPT, not returned', async () => {
    const { history, table, cleanup } = freshHistory();
    try {
      await history.append('bad-row', conformanceTurn(0));
      await server.pool.query(`UPDATE ${table} SET turn = '{"question": 1}'::jsonb`);
      await expect(history.load('bad-row')).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    } finally {
      await cleanup();
    }
  });

  it('with createTable: false, a missing table reads as a ProviderError naming it', async () => {
    const { history } = freshHistory({ createTable: false });
    await expect(history.append('none', conformanceTurn(0))).rejects.toMatchObject({
      code: 'PROVIDER_NOT_FOUND',
      message: expect.stringMatching(/does not exist/),
    });
  });

  it('validates its options: a table name that needs quoting, url and pool together, no connection at all', () => {
    expect(() => new PostgresChatHistory({ pool: server.pool, table: 'Bad-Name' })).toThrow(/table/);
    expect(() => new PostgresChatHistory({ pool: server.pool, url: 'postgres://x@localhost/db' })).toThrow(/either url or pool/);
    const saved = process.env.DATABASE_URL;
    delete process.env.DATABASE_URL;
    try {
      expect(() => new PostgresChatHistory()).toThrow(/No PostgreSQL connection/);
    } finally {
      if (saved !== undefined) process.env.DATABASE_URL = saved;
    }
  });

  it('a refused connection is a retryable ProviderError without the password', async () => {
    const history = new PostgresChatHistory({ url: 'postgres://axon:hunter2secret@127.0.0.1:1/postgres', connectionTimeoutMs: 2000 });
    try {
      const error = await history.load('any').then(
        () => undefined,
        (caught: unknown) => caught as Error,
      );
      expect(error).toMatchObject({ code: 'PROVIDER_UNREACHABLE', retryable: true });
      expect(JSON.stringify({ message: error?.message, details: (error as { details?: unknown }).details })).not.toContain('hunter2secret');
    } finally {
      await history.close();
    }
  });

  it('loads pg only on first use and ends only the pool it made', async () => {
    const own = new PostgresChatHistory({ url: server.url });
    await own.append('own-pool', conformanceTurn(0));
    await own.close();
    await expect(own.load('own-pool')).rejects.toMatchObject({ code: 'STORE_CLOSED' });
    const given = new PostgresChatHistory({ pool: server.pool });
    expect((await given.load('own-pool')).map((turn) => turn.runId)).toEqual(['run-0']);
    await given.close();
    // The given pool is still open.
    expect((await server.pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    await server.pool.query('DROP TABLE axon_conversations');
    expect(pg.Pool).toBeDefined();
  });
});
