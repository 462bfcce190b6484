import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgVectorStore } from '../../../stores/pgvector/pgvector-store.ts';
import { doc } from '../../../testing/vector-store.ts';
import { runAxon } from '../../helpers/cli.ts';
import { startPgliteServer, type PgliteServer } from '../../servers/pglite-server.ts';
import { describePgVectorStore } from './pgvector-store-suite.ts';

let server: PgliteServer;
let tableNumber = 0;

beforeAll(async () => {
  server = await startPgliteServer();
}, 60_000);
afterAll(async () => {
  await server?.close();
});

// PGlite is one session: the suite's stores share its single connection, one test after another.
describePgVectorStore('pgvector-store (PGlite)', () => ({
  pool: server.pool,
  url: server.url,
  port: server.port,
  database: 'postgres',
  user: 'postgres',
  acceptsAnyPassword: true,
  table: () => `store_${++tableNumber}`,
}));

describe('pgvector-store', () => {
  describe('connection failures', () => {
    it('names the server, never the password, when the connection is refused', async () => {
      const closed = await unusedPort();
      const store = new PgVectorStore({ url: `postgres://axon:hunter2-secret@127.0.0.1:${closed}/rag`, table: 'never_made', connectionTimeoutMs: 2000 });
      const error = await store.count().catch((caught: unknown) => caught);
      const refused = new RegExp(`Could not connect to PostgreSQL at 127\\.0\\.0\\.1:${closed}/rag .*ECONNREFUSED`);
      expect(error).toMatchObject({ name: 'ProviderError', retryable: true, message: refused });
      expect(JSON.stringify((error as { toJSON(): unknown }).toJSON())).not.toContain('hunter2');
      expect(String((error as Error).message)).not.toContain('hunter2');
      await store.close();
    });

    it('reports a failed login as authentication failed, without the password', async () => {
      const fake = await startRefusingServer('28P01', 'password authentication failed for user "axon"');
      try {
        const store = new PgVectorStore({ url: `postgres://axon:hunter2-secret@127.0.0.1:${fake.port}/rag`, table: 'never_made' });
        const error = await store.add([doc('a', [1, 0, 0])]).catch((caught: unknown) => caught);
        expect(error).toMatchObject({ name: 'ProviderError', message: /refused the login .*authentication failed/ });
        expect((error as Error).message).not.toContain('hunter2');
        expect((error as { fix?: string }).fix).toMatch(/user name and password/);
        await store.close();
      } finally {
        fake.server.close();
      }
    });
  });

  describe('filters', () => {
    it('refuses a filter that needs more parameters than one statement binds with FilterError, before any query', async () => {
      const store = new PgVectorStore({ pool: server.pool, table: `store_${++tableNumber}` });
      // One condition whose dotted path has 1.1 million keys: 68,750 array parameters of 16 keys each.
      const path = Array.from({ length: 1_100_000 }, (_, index) => `k${index}`).join('.');
      await expect(store.search([1, 0, 0], { filter: { [path]: 1 } })).rejects.toMatchObject({
        name: 'FilterError',
        code: 'FILTER_INVALID',
        message: /past the 65535/,
      });
    });
  });

  describe('options', () => {
    it('needs a connection, and takes the URL from DATABASE_URL or { env }', () => {
      const saved = process.env.DATABASE_URL;
      delete process.env.DATABASE_URL;
      try {
        expect(() => new PgVectorStore()).toThrow(/No PostgreSQL connection/);
        expect(() => new PgVectorStore({ url: { env: 'AXON_TEST_UNSET_DATABASE_URL' } })).toThrow(/AXON_TEST_UNSET_DATABASE_URL/);
        process.env.DATABASE_URL = 'postgres://localhost/db';
        expect(new PgVectorStore().table).toBe('axon_documents');
        expect(() => new PgVectorStore({ url: 'postgres://localhost/db', pool: server.pool })).toThrow(/either url or pool/);
        expect(() => new PgVectorStore({ pool: server.pool, index: { type: 'hnsw', m: 16, efConstruction: 8 } })).toThrow(/efConstruction/);
      } finally {
        if (saved === undefined) delete process.env.DATABASE_URL;
        else process.env.DATABASE_URL = saved;
      }
    });
  });
});

/** A server that answers every startup with a FATAL ErrorResponse, as Postgres does for a failed login. */
async function startRefusingServer(code: string, message: string): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => {
    socket.once('data', () => {
      const fields = Buffer.concat([field('S', 'FATAL'), field('V', 'FATAL'), field('C', code), field('M', message), Buffer.from([0])]);
      const header = Buffer.alloc(5);
      header.write('E', 0);
      header.writeInt32BE(fields.length + 4, 1);
      socket.end(Buffer.concat([header, fields]));
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

function field(type: string, value: string): Buffer {
  return Buffer.concat([Buffer.from(type), Buffer.from(value), Buffer.from([0])]);
}

async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('pgvector-store on a Postgres without the vector extension', () => {
  let bare: PgliteServer;
  beforeAll(async () => {
    bare = await startPgliteServer({ vector: false });
  }, 60_000);
  afterAll(async () => {
    await bare?.close();
  });

  it('says to install pgvector and run CREATE EXTENSION vector, and writes nothing', async () => {
    const store = new PgVectorStore({ pool: bare.pool, table: 'no_extension' });
    const error = await store.add([doc('a', [1, 0, 0])]).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'ProviderError', message: /vector extension is not available/, fix: /CREATE EXTENSION vector/ });
    expect((await bare.pool.query(`SELECT to_regclass('no_extension') IS NOT NULL AS found`)).rows[0].found).toBe(false);
  });

  it('is DEPENDENCY_MISSING, saying pgvector is not installed on the server and how to install and enable it', async () => {
    const store = new PgVectorStore({ pool: bare.pool, table: 'no_extension' });
    const error = await store.add([doc('a', [1, 0, 0])]).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      name: 'ProviderError',
      code: 'DEPENDENCY_MISSING',
      message: /pgvector is not installed on the PostgreSQL server \(PostgreSQL \d+\)\. Nothing was written\./,
    });
    expect((error as { fix: string }).fix).toMatch(/apt install postgresql-\d+-pgvector.*then run CREATE EXTENSION vector; in this database/);
  });

  it('stops axon ingest with that message once, instead of a "could not be written … run again" line per file', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'axon-pgvector-no-extension-'));
    try {
      await mkdir(join(directory, 'notes'));
      for (const name of ['billing', 'account']) await writeFile(join(directory, 'notes', `${name}.md`), `# ${name}\n\nSome text about ${name}.\n`);
      await writeFile(join(directory, 'axon.config.json'), JSON.stringify({ store: { type: 'pgvector', url: bare.url, table: 'no_extension_cli' } }));
      const ingest = await runAxon(directory, ['ingest', 'notes']);
      const output = `${ingest.stdout}\n${ingest.stderr}`;
      expect(ingest.code).toBe(1);
      expect(output).not.toMatch(/could not be written|run again to restore it/);
      expect(output.match(/vector extension is not available/g)).toHaveLength(1);
      expect(ingest.stderr).toMatch(
        /^axon: \[pgvector-store\] The vector extension is not available in this database: pgvector is not installed .*CREATE EXTENSION vector;/m,
      );
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
