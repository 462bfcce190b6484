/**
 * The pgvector store on a real PostgreSQL server with pgvector: the store conformance suite, the suite PGlite
 * runs (test/stores/pgvector/pgvector-store-suite.ts: filters against the in-memory reference, approximate
 * search, SQL injection, keyword search, tables, concurrent writers, dropped connections, configuration and
 * the CLI), and what only a server with many sessions shows: writers on separate pools and many connections
 * of one pool writing at once. Runs only when PG_URL is set, and is reported skipped otherwise. CI
 * (`.ci/run`) starts a server for it; by hand:
 *
 *   eval "$(../shared/tools/pg-server start)"    # PostgreSQL 15 with pgvector on loopback; exports PG_URL
 *   npx vitest run test/live/pgvector-store.live.test.ts
 *   ../shared/tools/pg-server stop "$PG_SERVER_DIR"
 *
 * or against any server: PG_URL=postgres://postgres:axon@localhost:5432/postgres (e.g. the pgvector/pgvector
 * Docker image). Every table it makes is named axon_live_<run>_<n> and dropped afterwards.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileFilter, parseFilter } from '../../src/filter/index.ts';
import { PGVECTOR_REGISTRY_TABLE, PgVectorStore, type PgVectorStoreOptions } from '../../stores/pgvector/pgvector-store.ts';
import { describeVectorStoreConformance, doc } from '../../testing/vector-store.ts';
import { mulberry32, randomDocument, randomFilter } from '../stores/qdrant/qdrant-filter-generator.ts';
import { describePgVectorStore, type PgTarget } from '../stores/pgvector/pgvector-store-suite.ts';
import { dropTable } from '../stores/pgvector/support.ts';

const url = process.env.PG_URL;
const run = `axon_live_${Date.now().toString(36)}_${randomUUID().slice(0, 8)}`;
let tableNumber = 0;

describe.skipIf(!url)('pgvector-store against a live PostgreSQL (PG_URL)', () => {
  let admin: pg.Pool;
  let target: PgTarget;
  const stores: PgVectorStore[] = [];
  const tables: string[] = [];
  const nextTable = () => {
    const table = `${run}_${++tableNumber}`;
    tables.push(table);
    return table;
  };
  /** A store with its own pool of several connections, on a fresh table. */
  const liveStore = (options: PgVectorStoreOptions = {}): PgVectorStore => {
    const store = new PgVectorStore({ url, table: nextTable(), maxConnections: 4, ...options });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    admin = new pg.Pool({ connectionString: url, max: 8 });
    admin.on('error', () => undefined);
    const parsed = new URL(url!);
    const user = decodeURIComponent(parsed.username) || 'postgres';
    // A password the server does not know: accepted only where loopback logins are trusted.
    const probe = new pg.Client({
      host: parsed.hostname,
      port: Number(parsed.port || 5432),
      user,
      database: parsed.pathname.slice(1),
      password: 'not-the-password',
    });
    const acceptsAnyPassword = await probe.connect().then(
      () => true,
      () => false,
    );
    await probe.end().catch(() => undefined);
    target = {
      pool: admin,
      url: url!,
      port: Number(parsed.port || 5432),
      database: decodeURIComponent(parsed.pathname.slice(1)) || user,
      user,
      acceptsAnyPassword,
      table: () => `${run}_${++tableNumber}`,
    };
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

  // The same suite as on PGlite, its stores sharing one pool of eight connections.
  describePgVectorStore('pgvector-store (live server)', () => target);

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
    const table = nextTable();
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

  it('many connections of one pool writing at once create the table once, keep every document once and each row whole', async () => {
    const table = nextTable();
    const pool = new pg.Pool({ connectionString: url, max: 16 });
    pool.on('error', () => undefined);
    try {
      const store = new PgVectorStore({ pool, table, batchSize: 20 });
      // 48 adds at once (each one transaction on a connection of its own), each overlapping the next by 10 ids,
      // with searches and counts running among them.
      const writes = Array.from({ length: 48 }, (_, writer) =>
        store.add(
          Array.from({ length: 60 }, (_, index) =>
            doc(`d${writer * 50 + index}`, [1, writer, index], { content: `writer ${writer} wrote document ${index}`, metadata: { writer } }),
          ),
        ),
      );
      const reads = Array.from({ length: 16 }, (_, reader) =>
        reader % 2 === 0 ? store.search([1, reader, 0], { topK: 10 }) : store.keywordSearch('writer document', { topK: 10 }),
      );
      await Promise.all([...writes, ...reads]);
      expect(pool.totalCount).toBeGreaterThan(4);
      expect(await store.count()).toBe(47 * 50 + 60);
      const { rows } = await admin.query(`SELECT count(*)::int AS count FROM ${PGVECTOR_REGISTRY_TABLE} WHERE table_name = $1`, [table]);
      expect(rows[0].count).toBe(1);
      // An id two writers wrote holds one writer's row whole: content, metadata and embedding agree.
      const overlapping = Array.from({ length: 47 }, (_, writer) => `d${writer * 50 + 55}`);
      for (const document of await store.getByIds(overlapping)) {
        const writer = document.metadata.writer as number;
        expect(document.embedding?.[1]).toBe(writer);
        expect(document.content).toMatch(new RegExp(`^writer ${writer} wrote`));
      }
    } finally {
      await pool.end();
    }
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
