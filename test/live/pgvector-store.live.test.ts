/**
 * The store conformance suite, the filter equivalence check and true multi-connection behaviour against a
 * server PostgreSQL with pgvector. Runs only when PG_URL is set, and is reported skipped otherwise:
 *
 *   docker run --rm -e POSTGRES_PASSWORD=axon -p 5432:5432 pgvector/pgvector:pg17
 *   PG_URL=postgres://postgres:axon@localhost:5432/postgres npx vitest run test/live/pgvector-store.live.test.ts
 *
 * Every table it makes is named axon_live_<run>_<n> and dropped afterwards.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileFilter, parseFilter } from '../../src/filter/index.ts';
import { PgVectorStore, type PgVectorStoreOptions } from '../../stores/pgvector/pgvector-store.ts';
import { describeVectorStoreConformance, doc } from '../../testing/vector-store.ts';
import { mulberry32, randomDocument, randomFilter } from '../stores/qdrant/qdrant-filter-generator.ts';
import { dropTable } from '../stores/pgvector/support.ts';

const url = process.env.PG_URL;
const run = `axon_live_${Date.now().toString(36)}_${randomUUID().slice(0, 8)}`;
let tableNumber = 0;

describe.skipIf(!url)('pgvector-store against a live PostgreSQL (PG_URL)', () => {
  let admin: pg.Pool;
  const stores: PgVectorStore[] = [];
  const tables: string[] = [];
  /** A store with its own pool of several connections, on a fresh table. */
  const liveStore = (options: PgVectorStoreOptions = {}): PgVectorStore => {
    const table = `${run}_${++tableNumber}`;
    tables.push(table);
    const store = new PgVectorStore({ url, table, maxConnections: 4, ...options });
    stores.push(store);
    return store;
  };

  beforeAll(() => {
    admin = new pg.Pool({ connectionString: url, max: 2 });
  });
  afterAll(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const table of tables) await dropTable(admin, table);
    await admin.end();
  });

  describeVectorStoreConformance(
    'pgvector-store (live)',
    async () => {
      const store = liveStore({ maxConnections: 2 });
      return { store, cleanup: () => store.close() };
    },
    { keywordSearch: true },
  );

  it('selects with the translated filter what compileFilter selects, on 200 seeded filters', async () => {
    const random = mulberry32(20_251_201);
    const documents = Array.from({ length: 48 }, (_, index) => randomDocument(index, random));
    const store = liveStore({ index: 'none' });
    await store.add(documents);
    for (const filter of Array.from({ length: 200 }, () => randomFilter(random, 0))) {
      const expected = documents
        .filter(compileFilter(parseFilter(filter)))
        .map((document) => document.id)
        .sort();
      const actual = (await store.search([1, 0, 0], { filter, topK: 100 })).map((document) => document.id).sort();
      expect(actual, JSON.stringify(filter)).toEqual(expected);
    }
  });

  it('concurrent writers on separate connections create the table once and keep every document', async () => {
    const table = `${run}_${++tableNumber}`;
    tables.push(table);
    const writers = Array.from({ length: 4 }, () => {
      const store = new PgVectorStore({ url, table, maxConnections: 2, batchSize: 7 });
      stores.push(store);
      return store;
    });
    await Promise.all(writers.map((writer, number) => writer.add(Array.from({ length: 40 }, (_, index) => doc(`w${number}-${index}`, [1, number, index])))));
    await Promise.all(writers.map((writer, number) => writer.add([doc('shared', [1, number, 0], { content: `from ${number}` })])));
    expect(await writers[0].count()).toBe(161);
    // Parallel searches on several connections each see their own SET LOCAL settings.
    const searches = writers.map((writer, number) => writer.search([1, number, 0], { topK: 5, ef: 10 + number, filter: { sourceType: 'test' } }));
    const results = await Promise.all(searches);
    for (const result of results) expect(result).toHaveLength(5);
  });

  it('keeps topK under a 1%-selective filter through HNSW', async () => {
    const random = mulberry32(7);
    const store = liveStore({ index: { type: 'hnsw', m: 8, efConstruction: 16, efSearch: 10 } });
    const vector = () => Array.from({ length: 16 }, () => random() - 0.5);
    await store.add(Array.from({ length: 2000 }, (_, index) => doc(`d${index}`, vector(), { metadata: { group: index % 100 === 0 ? 'rare' : 'common' } })));
    const results = await store.search(vector(), { topK: 20, filter: { group: 'rare' } });
    expect(results).toHaveLength(20);
    expect(results.every((result) => result.metadata.group === 'rare')).toBe(true);
  });
});
