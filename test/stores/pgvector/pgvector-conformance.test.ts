import { afterAll, beforeAll } from 'vitest';
import { PgVectorStore } from '../../../stores/pgvector/pgvector-store.ts';
import { describeVectorStoreConformance } from '../../../testing/vector-store.ts';
import { startPgliteServer, type PgliteServer } from '../../servers/pglite-server.ts';
import { dropTable } from './support.ts';

let server: PgliteServer;
let tableNumber = 0;

beforeAll(async () => {
  server = await startPgliteServer();
}, 60_000);
afterAll(async () => {
  await server?.close();
});

describeVectorStoreConformance(
  'pgvector-store (PGlite, HNSW)',
  async () => {
    const table = `conformance_${++tableNumber}`;
    return { store: new PgVectorStore({ pool: server.pool, table }), cleanup: () => dropTable(server.pool, table) };
  },
  { keywordSearch: true },
);
