/**
 * A real PostgreSQL (PGlite: Postgres compiled to WebAssembly, with pgvector) served over the Postgres wire
 * protocol on a loopback port by `@electric-sql/pglite-socket`, for the pgvector store's tests.
 *
 * PGlite is one session underneath: with several client connections, SETs, temporary tables and open
 * transactions would be shared, and a large Bind arriving in several TCP chunks can interleave with another
 * client's Parse. So the tests share one `pg.Pool` with `max: 1` and run one after another; the server takes a few
 * connections only so that a test can open a second, separate client (a store with its own url) while the
 * shared one sits idle.
 *
 * initdb costs seconds on a busy machine, so the first start saves the fresh data directory as a tarball in the
 * system's temporary folder and later starts load it (about half a second).
 */
import { randomUUID } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import pg from 'pg';

export interface PgliteServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (PGlite accepts any password). */
  url: string;
  host: string;
  port: number;
  /** One shared connection: pass it as the store's `pool`. */
  pool: pg.Pool;
  /** Stop accepting connections (the database stays), e.g. to test a refused connection; `resume` restarts. */
  suspend(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

const SNAPSHOT = join(tmpdir(), 'axon-pglite-0.5.14-pgvector.tar');

async function openDatabase(withVector: boolean): Promise<PGlite> {
  const extensions: Record<string, typeof vector> = withVector ? { vector } : {};
  const saved = await readFile(SNAPSHOT).catch(() => undefined);
  if (saved) {
    try {
      return await PGlite.create({ loadDataDir: new Blob([saved]), extensions });
    } catch {
      // A damaged snapshot: fall through to a fresh initdb, which rewrites it.
    }
  }
  const database = await PGlite.create({ extensions });
  const dump = await database.dumpDataDir('none');
  const temporary = `${SNAPSHOT}.${randomUUID()}`;
  await writeFile(temporary, new Uint8Array(await dump.arrayBuffer()));
  await rename(temporary, SNAPSHOT);
  return database;
}

/** Start PGlite on a loopback port; `vector: false` leaves the pgvector extension out (CREATE EXTENSION then fails). */
export async function startPgliteServer(options: { vector?: boolean } = {}): Promise<PgliteServer> {
  const database = await openDatabase(options.vector ?? true);
  let server = new PGLiteSocketServer({ db: database, host: '127.0.0.1', port: 0, maxConnections: 4 });
  await server.start();
  const port = Number(server.getServerConn().split(':').pop());
  const host = '127.0.0.1';
  const url = `postgres://postgres@${host}:${port}/postgres`;
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on('error', () => undefined);
  return {
    url,
    host,
    port,
    pool,
    async suspend() {
      await server.stop();
    },
    async resume() {
      server = new PGLiteSocketServer({ db: database, host, port, maxConnections: 4 });
      await server.start();
    },
    async close() {
      await pool.end();
      await server.stop();
      await database.close();
    },
  };
}
