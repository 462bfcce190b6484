/**
 * The pgvector store's behaviour on a PostgreSQL server with pgvector: filters (against the in-memory
 * reference), approximate search, SQL injection, keyword search, tables, concurrent writers and dropped
 * connections, configuration and the CLI. Run by test/stores/pgvector/pgvector-store.test.ts on PGlite and by
 * test/live/pgvector-store.live.test.ts on a real server.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createRag } from '../../../app/config/create-rag.ts';
import type { Document } from '../../../src/document.ts';
import { compileFilter, parseFilter, type Filter } from '../../../src/filter/index.ts';
import { MemoryStore } from '../../../stores/memory/memory-store.ts';
import { PgVectorStore, PGVECTOR_REGISTRY_TABLE, type PgVectorStoreOptions } from '../../../stores/pgvector/pgvector-store.ts';
import { doc } from '../../../testing/vector-store.ts';
import { runAxon } from '../../helpers/cli.ts';
import { mulberry32, randomDocument, randomFilter, type Random } from '../qdrant/qdrant-filter-generator.ts';
import { random as seeded } from '../support.ts';
import { dropTable } from './support.ts';

/** The server a run of the suite uses, known once the file's `beforeAll` started or reached it. */
export interface PgTarget {
  /** A pool on the server's database, for the stores under test and the checks. */
  pool: pg.Pool;
  /** The URL of that database (for configuration and the CLI). */
  url: string;
  /** The server's loopback port, its database and a user that may create tables there. */
  port: number;
  database: string;
  user: string;
  /** Whether the server lets `user` in with any password (loopback trust), which the dropped-connection test needs. */
  acceptsAnyPassword: boolean;
  /** A fresh table name; the suite drops every table it named. */
  table(): string;
}

/** Filters for `$contains` too, which the Qdrant generator leaves out (Qdrant refuses it). */
function containsFilter(random: Random): Filter {
  const field = ['tags', 'lang', 'author.name', 'odd key', 'sourceName', 'id', 'score'][Math.floor(random() * 7)];
  const needle = [
    ['a', 'b', 'en', '', 'A'],
    [0, 1, 2.5],
    [true, false],
  ][Math.floor(random() * 3)];
  return { [field]: { $contains: needle[Math.floor(random() * needle.length)] } };
}

/** The suite, against the server `target()` returns (called inside tests, after the file's `beforeAll`). */
export function describePgVectorStore(label: string, target: () => PgTarget): void {
  const tables: string[] = [];

  /** A store on a fresh table of the target's pool; tables are dropped after the suite. */
  function open(options: PgVectorStoreOptions = {}): PgVectorStore {
    const table = target().table();
    tables.push(table);
    return new PgVectorStore({ pool: target().pool, table, ...options });
  }

  async function tableExists(table: string): Promise<boolean> {
    return (await target().pool.query(`SELECT to_regclass($1) IS NOT NULL AS found`, [table])).rows[0].found;
  }

  describe(label, () => {
    afterAll(async () => {
      for (const table of tables) await dropTable(target().pool, table);
    });

    describe('filters', () => {
      it('selects exactly what MemoryStore selects, for 200 random filters over documents of every value shape', async () => {
        const random = mulberry32(20_251_201);
        const documents = Array.from({ length: 48 }, (_, index) => randomDocument(index, random));
        const filters = [...Array.from({ length: 160 }, () => randomFilter(random, 0)), ...Array.from({ length: 40 }, () => containsFilter(random))];
        const store = open({ index: 'none' });
        const memory = new MemoryStore();
        await store.add(documents);
        await memory.add(documents);
        const query = [1, 0.3, 0.2];
        let nonTrivial = 0;
        for (const filter of filters) {
          const expected = (await memory.search(query, { topK: 100, filter })).map((result) => result.id).sort();
          const actual = (await store.search(query, { topK: 100, filter })).map((result) => result.id).sort();
          expect({ filter, ids: actual }).toEqual({ filter, ids: expected });
          // The reference itself: compileFilter over the documents.
          expect(expected).toEqual(
            documents
              .filter(compileFilter(parseFilter(filter)))
              .map((document) => document.id)
              .sort(),
          );
          if (expected.length > 0 && expected.length < documents.length) nonTrivial++;
        }
        // The generator must exercise real selections, not only all-or-nothing ones.
        expect(nonTrivial).toBeGreaterThan(80);
      });

      it('compares numbers as numbers and strings as strings', async () => {
        const store = open({ index: 'none' });
        await store.add([
          doc('nine', [1, 0, 0], { metadata: { version: 9, label: '9' } }),
          doc('ten', [1, 1, 0], { metadata: { version: 10, label: '10' } }),
          doc('fraction', [1, 0, 1], { metadata: { version: 9.5, label: '9.5' } }),
          doc('big', [0, 1, 1], { metadata: { version: 1e300, label: 'x' } }),
        ]);
        const ids = async (filter: Filter) => (await store.search([1, 0, 0], { filter })).map((result) => result.id).sort();
        // Text order would put "10" before "9": numbers compare numerically.
        expect(await ids({ version: { $gt: 9 } })).toEqual(['big', 'fraction', 'ten']);
        expect(await ids({ version: { $lte: 9.5 } })).toEqual(['fraction', 'nine']);
        expect(await ids({ version: 9.5 })).toEqual(['fraction']);
        expect(await ids({ version: 1e300 })).toEqual(['big']);
        // A string never equals a number, and comparisons skip strings.
        expect(await ids({ label: 9 })).toEqual([]);
        expect(await ids({ label: '9' })).toEqual(['nine']);
        expect(await ids({ label: { $gt: 0 } })).toEqual([]);
      });

      it('refuses what Postgres cannot express with FilterError, before any query', async () => {
        const store = open();
        await store.add([doc('a', [1, 0, 0])]);
        await expect(store.search([1, 0, 0], { filter: { name: 'nul\u0000byte' } })).rejects.toMatchObject({ name: 'FilterError', code: 'FILTER_INVALID' });
        await expect(store.search([1, 0, 0], { filter: { 'bad\u0000key': 'x' } })).rejects.toMatchObject({ code: 'FILTER_INVALID' });
        await expect(store.search([1, 0, 0], { filter: { name: { $in: ['ok', 'lone \ud800 surrogate'] } } })).rejects.toMatchObject({ code: 'FILTER_INVALID' });
        await expect(store.keywordSearch('content', { filter: { name: { $contains: '\u0000' } } })).rejects.toMatchObject({ code: 'FILTER_INVALID' });
      });

      it('takes a filter whose values would pass the 65,535 parameters one statement can bind', async () => {
        // 9,998 conditions, inside the 10,000 limit, of seven values each (six path keys and the value): about
        // 70,000 values, where a statement binds at most 65,535 parameters (the protocol counts them in 16 bits).
        const documents = Array.from({ length: 12 }, (_, index) =>
          doc(`d${index}`, [1, index, 0], { metadata: { [`k${index * 800}`]: { a: { b: { c: { d: { e: index % 3 === 0 ? index * 800 : -1 } } } } } } }),
        );
        const filter: Filter = { $or: Array.from({ length: 9_998 }, (_, index) => ({ [`k${index}.a.b.c.d.e`]: index })) };
        const store = open({ index: 'none' });
        await store.add(documents);
        const expected = documents
          .filter(compileFilter(parseFilter(filter)))
          .map((document) => document.id)
          .sort();
        expect(expected).toEqual(['d0', 'd3', 'd6', 'd9']);
        const ids = (found: { id: string }[]) => found.map((document) => document.id).sort();
        expect(ids(await store.search([1, 0, 0], { topK: 100, filter }))).toEqual(expected);
        expect(ids(await store.keywordSearch('content', { topK: 100, filter }))).toEqual(expected);
      }, 300_000);
    });

    describe('approximate search (HNSW)', () => {
      it('keeps topK under a 1%-selective filter, through the index with an iterative scan', async () => {
        const random = seeded(7);
        const store = open({ index: { type: 'hnsw', m: 8, efConstruction: 16, efSearch: 10 } });
        const documents = Array.from({ length: 600 }, (_, index) =>
          doc(
            `d${index}`,
            Array.from({ length: 8 }, () => random()),
            { metadata: { group: index % 100 === 0 ? 'rare' : 'common' } },
          ),
        );
        await store.add(documents);
        expect(await store.searchMethod({ filter: { group: 'rare' } })).toBe('ann');
        const query = Array.from({ length: 8 }, () => random());
        const results = await store.search(query, { topK: 6, filter: { group: 'rare' } });
        expect(results.map((result) => result.id).sort()).toEqual(['d0', 'd100', 'd200', 'd300', 'd400', 'd500']);
        for (let index = 1; index < results.length; index++) expect(results[index - 1].score).toBeGreaterThanOrEqual(results[index].score);
        // Unfiltered, topK above efSearch still comes back whole (ef_search is raised to topK).
        expect(await store.search(query, { topK: 50 })).toHaveLength(50);
      });

      it('plans the search through the HNSW index, and exact: true without it', async () => {
        const store = open({ index: { type: 'hnsw' } });
        await store.add(Array.from({ length: 20 }, (_, index) => doc(`d${index}`, [1, index, 0])));
        const plan = async (exact: boolean) => {
          const client = await target().pool.connect();
          try {
            await client.query('BEGIN');
            await client.query(exact ? `SELECT set_config('enable_indexscan', 'off', true)` : `SELECT set_config('enable_seqscan', 'on', true)`);
            const rows = (await client.query(`EXPLAIN SELECT id FROM "${store.table}" ORDER BY embedding <=> '[1,0,0]'::vector LIMIT 5`)).rows;
            await client.query('COMMIT');
            return rows.map((row) => row['QUERY PLAN']).join('\n');
          } finally {
            client.release();
          }
        };
        expect(await plan(false)).toMatch(new RegExp(`Index Scan using ${store.table}_embedding_idx`));
        expect(await plan(true)).not.toMatch(/Index Scan/);
        expect(await store.searchMethod({ exact: true })).toBe('exact');
        const exact = await store.search([1, 0, 0], { topK: 3, exact: true });
        const approximate = await store.search([1, 0, 0], { topK: 3, ef: 100 });
        expect(approximate.map((result) => result.id)).toEqual(exact.map((result) => result.id));
      });

      it('serves ivfflat and index-less tables', async () => {
        for (const index of ['none', { type: 'ivfflat', lists: 2, probes: 1 }] as const) {
          const store = open({ index });
          await store.add(Array.from({ length: 30 }, (_, position) => doc(`d${position}`, [1, position / 30, 0.1])));
          expect((await store.search([1, 0, 0], { topK: 3 })).map((result) => result.id)).toEqual(['d0', 'd1', 'd2']);
          expect(await store.searchMethod()).toBe(index === 'none' ? 'exact' : 'ann');
        }
      });

      it('validates ef', async () => {
        const store = open();
        await store.add([doc('a', [1, 0, 0])]);
        await expect(store.search([1, 0, 0], { ef: 0 })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
      });
    });

    describe('SQL injection', () => {
      it('refuses a table name that is not a plain identifier', () => {
        for (const table of ['docs"; DROP TABLE axon_pgvector_tables; --', 'Docs', 'a b', '1abc', 'x'.repeat(41), '']) {
          expect(() => new PgVectorStore({ pool: target().pool, table })).toThrow(/table/);
        }
      });

      it('stores and matches hostile metadata keys, values, filter paths and text as data', async () => {
        const store = open();
        const hostile = `'); DROP TABLE ${PGVECTOR_REGISTRY_TABLE}; --`;
        const quoteKey = `a'b"c\\d`;
        await store.add([
          doc('evil', [1, 0, 0], {
            content: `${hostile} $1 $$ '' \\`,
            sourceName: hostile,
            metadata: { [quoteKey]: hostile, [hostile]: 1, nested: { [hostile]: ['x', hostile] } },
          }),
          doc('plain', [0, 1, 0], { metadata: { [quoteKey]: 'ordinary' } }),
        ]);
        const ids = async (filter: Filter) => (await store.search([1, 1, 0], { filter })).map((result) => result.id).sort();
        expect(await ids({ [quoteKey]: hostile })).toEqual(['evil']);
        expect(await ids({ [hostile]: 1 })).toEqual(['evil']);
        expect(await ids({ [`nested.${hostile}`]: { $contains: hostile } })).toEqual(['evil']);
        expect(await ids({ sourceName: { $in: [hostile] } })).toEqual(['evil']);
        expect(await ids({ [`${hostile}" OR 1=1 --`]: { $exists: true } })).toEqual([]);
        expect(await ids({ [quoteKey]: { $ne: `ordinary' OR '1'='1` } })).toEqual(['evil', 'plain']);
        const [evil] = await store.getByIds(['evil']);
        expect(evil.metadata).toEqual({ [quoteKey]: hostile, [hostile]: 1, nested: { [hostile]: ['x', hostile] } });
        expect(evil.content).toBe(`${hostile} $1 $$ '' \\`);
        expect((await store.keywordSearch(`drop table ${PGVECTOR_REGISTRY_TABLE} ' | ! & \\ :*`)).map((result) => result.id)).toEqual(['evil']);
        expect(await store.deleteBySource('test', hostile)).toBe(1);
        expect(await tableExists(PGVECTOR_REGISTRY_TABLE)).toBe(true);
        expect(await tableExists(store.table)).toBe(true);
        expect(await store.count()).toBe(1);
      });

      it('refuses text Postgres cannot store, writing nothing', async () => {
        const store = open();
        await expect(store.add([doc('a', [1, 0, 0]), doc('b', [0, 1, 0], { content: 'nul \u0000 inside' })])).rejects.toMatchObject({
          code: 'INVALID_DOCUMENT',
        });
        await expect(store.add([doc('a', [1, 0, 0], { metadata: { 'key\u0000': 1 } })])).rejects.toMatchObject({ code: 'INVALID_DOCUMENT' });
        await expect(store.add([doc('a', [1, 0, 0], { metadata: { text: 'lone \udc00' } })])).rejects.toMatchObject({ code: 'INVALID_DOCUMENT' });
        expect(await store.count()).toBe(0);
      });

      it('refuses circular metadata and metadata nested 10,000 deep with INVALID_DOCUMENT, writing nothing', async () => {
        const store = open();
        const circular: Record<string, unknown> = { name: 'loop' };
        circular.self = circular;
        let deep: Record<string, unknown> = { leaf: true };
        for (let level = 0; level < 10_000; level++) deep = { next: deep };
        for (const metadata of [circular, deep]) {
          const documents = [doc('a', [1, 0, 0]), doc('b', [0, 1, 0], { metadata: metadata as Document['metadata'] })];
          await expect(store.add(documents)).rejects.toMatchObject({ name: 'AxonError', code: 'INVALID_DOCUMENT', component: 'pgvector-store' });
        }
        expect(await store.count()).toBe(0);
      });
    });

    describe('keyword search', () => {
      it('tokenises like the embedded store: identifiers, apostrophes, stopwords, stems', async () => {
        const store = open();
        const memory = new MemoryStore();
        const documents = [
          doc('incident', [1, 0, 0], { content: "O'Reilly's runbook for INC-2023-Q4-011 and ISO27001 audits" }),
          doc('other', [0, 1, 0], { content: 'Audit of the e-mail gateways, running since v2.1.0' }),
          doc('third', [0, 0, 1], { content: "Nothing relevant, just a back\\slash and a quote's edge" }),
        ];
        await store.add(documents);
        await memory.add(documents);
        for (const query of [
          'INC-2023-Q4-011',
          'inc2023q4011',
          'iso 27001',
          "o'reilly",
          'audited email',
          'run',
          'v2.1.0',
          "quote's back\\slash",
          'the and of',
        ]) {
          const expected = (await memory.keywordSearch(query)).map((result) => [result.id, result.score.toFixed(9)]);
          const actual = (await store.keywordSearch(query)).map((result) => [result.id, result.score.toFixed(9)]);
          expect({ query, actual }).toEqual({ query, actual: expected });
        }
      });

      it('is refused on a store built without it, and on a table filled without it', async () => {
        const store = open({ keywordIndex: false });
        expect(store.keywordIndexEnabled).toBe(false);
        await store.add([doc('a', [1, 0, 0])]);
        await expect(store.keywordSearch('content')).rejects.toMatchObject({ code: 'CAPABILITY_MISSING' });
        const reopened = new PgVectorStore({ pool: target().pool, table: store.table });
        await expect(reopened.keywordSearch('content')).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
        const otherTokenizer = new PgVectorStore({ pool: target().pool, table: open().table, keywordIndex: { tokenizer: { stemmer: 'none' } } });
        await otherTokenizer.add([doc('a', [1, 0, 0])]);
        await expect(new PgVectorStore({ pool: target().pool, table: otherTokenizer.table }).count()).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
      });
    });

    describe('tables', () => {
      it('records the schema version and refuses a newer one', async () => {
        const store = open();
        await store.add([doc('a', [1, 0, 0])]);
        const { rows } = await target().pool.query(`SELECT schema_version, dimensions FROM ${PGVECTOR_REGISTRY_TABLE} WHERE table_name = $1`, [store.table]);
        expect(rows).toEqual([{ schema_version: 1, dimensions: 3 }]);
        await target().pool.query(`UPDATE ${PGVECTOR_REGISTRY_TABLE} SET schema_version = 99 WHERE table_name = $1`, [store.table]);
        const reopened = new PgVectorStore({ pool: target().pool, table: store.table });
        await expect(reopened.count()).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: /schema version 99/ });
      });

      it('refuses a table it did not make, and a table of other dimensions', async () => {
        const foreign = open();
        await target().pool.query(`CREATE TABLE "${foreign.table}" (id text primary key)`);
        await expect(foreign.count()).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: /not made by the pgvector store/ });
        const store = open();
        await store.add([doc('a', [1, 0, 0])]);
        const configured = new PgVectorStore({ pool: target().pool, table: store.table, dimensions: 4 });
        await expect(configured.search([1, 0, 0, 0])).rejects.toMatchObject({ code: 'DIMENSION_MISMATCH', message: /holds vectors of 3 dimensions/ });
        const fresh = new PgVectorStore({ pool: target().pool, table: store.table });
        await expect(fresh.add([doc('b', [1, 0, 0, 0])])).rejects.toMatchObject({ code: 'DIMENSION_MISMATCH' });
        expect(await fresh.count()).toBe(1);
      });

      it("refuses an indexed table above pgvector's 2000 dimensions before any DDL, and takes it without an index", async () => {
        const wide = Array.from({ length: 2001 }, (_, index) => (index === 0 ? 1 : 0));
        const indexed = open();
        await expect(indexed.add([doc('a', wide)])).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: /at most 2000 dimensions/ });
        expect(await tableExists(indexed.table)).toBe(false);
        const plain = open({ index: 'none' });
        await plain.add([doc('a', wide)]);
        expect((await plain.search(wide, { topK: 1 }))[0].score).toBeCloseTo(1, 5);
      });

      it('reads and deletes nothing for source names Postgres cannot hold', async () => {
        const store = open();
        await store.add([doc('a', [1, 0, 0])]);
        expect(await store.getBySource('test\u0000')).toEqual([]);
        expect(await store.deleteBySource('test', 'suite\u0000')).toBe(0);
        expect(await store.getByIds(['a\u0000', 'a'])).toHaveLength(1);
      });

      it('with createTable false, uses only an existing table', async () => {
        const store = open({ createTable: false });
        await expect(store.add([doc('a', [1, 0, 0])])).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: /createTable is false/ });
        expect(await tableExists(store.table)).toBe(false);
      });
    });

    describe('concurrency and failures', () => {
      it('concurrent writers on one table (creating it too) end with every document once', async () => {
        const table = open().table;
        const writers = Array.from({ length: 4 }, () => new PgVectorStore({ pool: target().pool, table }));
        await Promise.all(
          writers.map((writer, number) =>
            writer.add(Array.from({ length: 25 }, (_, index) => doc(`w${number}-${index}`, [1, number, index], { content: `writer ${number}` }))),
          ),
        );
        // Overlapping upserts of the same ids: the last committed wins, each id stays once.
        await Promise.all(writers.map((writer, number) => writer.add([doc('shared', [1, number, 0], { content: `from ${number}` })])));
        expect(await writers[0].count()).toBe(101);
        const [shared] = await writers[1].getByIds(['shared']);
        expect(shared.content).toMatch(/^from [0-3]$/);
        const { rows } = await target().pool.query(`SELECT count(*)::int AS count FROM ${PGVECTOR_REGISTRY_TABLE} WHERE table_name = $1`, [table]);
        expect(rows[0].count).toBe(1);
      });

      it('a connection dropped mid-add writes nothing and reports a retryable error; with a retry the add completes', async ({ skip }) => {
        const { port, database, acceptsAnyPassword } = target();
        // The store's password must be one that appears nowhere else in the URL, so the message can be checked for it.
        if (!acceptsAnyPassword) skip('the server checks passwords; the test needs one that trusts loopback logins (as ../shared/tools/pg-server does)');
        const proxy = await startDroppingProxy(port);
        try {
          const table = open().table;
          const url = `postgres://${target().user}:proxy-password-93@127.0.0.1:${proxy.port}/${database}`;
          const documents = Array.from({ length: 40 }, (_, index) => doc(`d${index}`, [1, index, 0]));
          const failing = new PgVectorStore({ url, table, batchSize: 10, maxRetries: 0, maxConnections: 1 });
          await failing.add([doc('seed', [0, 0, 1])]);
          proxy.dropOnInsert(2);
          const error = await failing.add(documents).catch((caught: unknown) => caught);
          const lost = new RegExp(`connection to PostgreSQL at 127\\.0\\.0\\.1:\\d+/${database} was lost`);
          expect(error).toMatchObject({ name: 'ProviderError', code: 'PROVIDER_UNAVAILABLE', retryable: true, message: lost });
          expect((error as Error).message).not.toContain('proxy-password-93');
          expect(proxy.drops).toBe(1);
          // The first batch had reached the server inside the transaction: it was rolled back with it.
          const check = new PgVectorStore({ pool: target().pool, table });
          expect(await check.count()).toBe(1);
          expect(await check.getByIds(['d0', 'd9'])).toEqual([]);

          const retrying = new PgVectorStore({ url, table, batchSize: 10, maxRetries: 1, maxConnections: 1 });
          proxy.dropOnInsert(2);
          await retrying.add(documents);
          expect(proxy.drops).toBe(2);
          expect(await check.count()).toBe(41);
          await failing.close();
          await retrying.close();
        } finally {
          await proxy.close();
        }
      });

      it('an aborted signal is ABORTED before any query', async () => {
        const store = open();
        const controller = new AbortController();
        controller.abort();
        await expect(store.count({ signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
        await expect(store.getByIds(['a'], { signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
      });
    });

    describe('through configuration and the CLI', () => {
      it('builds from { "store": { "type": "pgvector", "url": { "env": … } } } and answers hybrid queries', async () => {
        const table = open().table;
        const rag = await createRag(
          { store: { type: 'pgvector', url: { env: 'AXON_TEST_PGVECTOR_URL' }, table }, searchMode: 'hybrid' },
          { environment: { AXON_TEST_PGVECTOR_URL: target().url } },
        );
        try {
          expect(rag.components().store).toBeInstanceOf(PgVectorStore);
          await rag.addDocuments([
            { id: 'refunds', content: 'Refunds for duplicate charges take five business days.', sourceType: 'manual', sourceName: 'billing.md', metadata: {} },
            {
              id: 'password',
              content: 'To reset your password, open Settings and choose Security.',
              sourceType: 'manual',
              sourceName: 'account.md',
              metadata: {},
            },
          ]);
          const result = await rag.retrieve('How long do refunds take?');
          expect(result.searchMode).toBe('hybrid');
          expect(result.documents[0].id).toBe('refunds');
        } finally {
          await rag.close();
        }
      });

      it('axon ingest and ask work against it unchanged', async () => {
        const directory = await mkdtemp(join(tmpdir(), 'axon-pgvector-cli-'));
        try {
          const table = open().table;
          await mkdir(join(directory, 'notes'));
          await writeFile(join(directory, 'notes', 'billing.md'), '# Billing\n\nRefunds for duplicate charges take five business days.\n');
          await writeFile(join(directory, 'notes', 'account.md'), '# Account\n\nTo reset your password, open Settings and choose Security.\n');
          await writeFile(join(directory, 'axon.config.json'), JSON.stringify({ store: { type: 'pgvector', url: target().url, table } }));
          const ingest = await runAxon(directory, ['ingest', 'notes']);
          expect(ingest.code, ingest.stderr).toBe(0);
          expect(await new PgVectorStore({ pool: target().pool, table }).count()).toBeGreaterThanOrEqual(2);
          const ask = await runAxon(directory, ['ask', 'How long do refunds take?', '--json']);
          expect(ask.code, ask.stderr).toBe(0);
          expect(ask.stdout).toContain('five business days');
        } finally {
          await rm(directory, { recursive: true, force: true });
        }
      });
    });
  });
}

/** A loopback proxy to the server that can cut the connection when the client sends its n-th INSERT of a transaction. */
async function startDroppingProxy(targetPort: number): Promise<{ port: number; drops: number; dropOnInsert(n: number): void; close(): Promise<void> }> {
  let armedAt = 0;
  const sockets = new Set<Socket>();
  const state = {
    port: 0,
    drops: 0,
    dropOnInsert(n: number) {
      armedAt = n;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
  const proxy: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    let inserts = 0;
    client.on('data', (data) => {
      if (armedAt > 0 && data.includes('INSERT INTO')) {
        inserts++;
        if (inserts >= armedAt) {
          armedAt = 0;
          state.drops++;
          client.destroy();
          upstream.destroy();
          return;
        }
      }
      upstream.write(data);
    });
    upstream.on('data', (data) => client.write(data));
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  state.port = (proxy.address() as { port: number }).port;
  return state;
}
