/**
 * The behaviour every `VectorStore` must have, as one suite that each store runs:
 *
 * ```ts
 * describeVectorStoreConformance('memory-store', async () => ({ store: new MemoryStore() }));
 * ```
 *
 * Only the public contract is used, so remote stores (Qdrant on a loopback server) run it too. A store that
 * cannot honour a case skips it through `options.skip`: `{ reason, tests }`, the reason shown in the report.
 * Stores that declare keyword search (`capabilities.keywordSearch`, `KeywordSearchable`) pass `keywordSearch: true`
 * to run its cases as well; for the others they show as skipped. Either way the declaration is checked.
 */
import { afterEach, describe, expect } from 'vitest';
import { supportsKeywordSearch } from '../src/contracts/keyword-search.ts';
import type { VectorStore } from '../src/contracts/vector-store.ts';
import type { Document, JsonValue } from '../src/document.ts';
import type { Filter } from '../src/filter/types.ts';
import { conformanceCases, type ConformanceSkip } from './skip.ts';

export interface VectorStoreHandle {
  store: VectorStore;
  cleanup?: () => Promise<void>;
}

export interface VectorStoreConformanceOptions {
  /** Cases (the `it` titles) this store cannot run, each group with its reason. */
  skip?: ConformanceSkip[];
  /** The store declares `capabilities.keywordSearch` (checked), and its keyword search cases run. @default false */
  keywordSearch?: boolean;
}

export function describeVectorStoreConformance(name: string, factory: () => Promise<VectorStoreHandle>, options: VectorStoreConformanceOptions = {}): void {
  const cases = conformanceCases(options.skip);
  const cleanups: (() => Promise<void>)[] = [];
  const open = async (): Promise<VectorStore> => {
    const handle = await factory();
    if (handle.cleanup) cleanups.push(handle.cleanup);
    return handle.store;
  };
  const test = cases.test;

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  describe(`${name}: VectorStore conformance`, () => {
    describe('add and search', () => {
      test('returns documents best first with cosine scores', async () => {
        const store = await open();
        await store.add([doc('left', [-1, 0, 0]), doc('same', [3, 0, 0]), doc('diagonal', [1, 1, 0]), doc('orthogonal', [0, 0, 5])]);
        const results = await store.search([2, 0, 0]);
        expect(results.map((result) => result.id)).toEqual(['same', 'diagonal', 'orthogonal', 'left']);
        expect(results[0].score).toBeCloseTo(1, 5);
        expect(results[1].score).toBeCloseTo(Math.SQRT1_2, 5);
        expect(results[2].score).toBeCloseTo(0, 5);
        expect(results[3].score).toBeCloseTo(-1, 5);
      });

      test('scores a hand-computed cosine', async () => {
        const store = await open();
        await store.add([doc('a', [1, 2, 2]), doc('b', [4, 0, 3])]);
        // cos([1,2,2],[0,3,4]) = 14/15; cos([4,0,3],[0,3,4]) = 12/25.
        const results = await store.search([0, 3, 4]);
        expect(results.map((result) => [result.id, round(result.score)])).toEqual([
          ['a', round(14 / 15)],
          ['b', round(12 / 25)],
        ]);
      });

      test('returns every field with the embedding pointing the same way', async () => {
        const store = await open();
        await store.add([doc('a', [0, 2, 0], { sourceType: 'file', sourceName: 'notes.md', content: 'Alpha', metadata: { chunkIndex: 3, tags: ['x'] } })]);
        const [result] = await store.search([0, 1, 0]);
        expect(result).toMatchObject({ id: 'a', content: 'Alpha', sourceType: 'file', sourceName: 'notes.md', metadata: { chunkIndex: 3, tags: ['x'] } });
        expect(result.embedding).toBeDefined();
        expect(result.embedding!.length).toBe(3);
        expect(cosine(Array.from(result.embedding!), [0, 2, 0])).toBeCloseTo(1, 5);
      });

      test('accepts Float32Array vectors for documents and queries', async () => {
        const store = await open();
        await store.add([doc('a', new Float32Array([1, 0, 0])), doc('b', new Float32Array([0, 1, 0]))]);
        const results = await store.search(new Float32Array([0, 1, 0]), { topK: 1 });
        expect(results.map((result) => result.id)).toEqual(['b']);
      });

      test('returns an empty list from an empty store', async () => {
        const store = await open();
        expect(await store.search([1, 0, 0])).toEqual([]);
        expect(await store.count()).toBe(0);
      });

      test('adding an empty batch does nothing', async () => {
        const store = await open();
        await store.add([]);
        expect(await store.count()).toBe(0);
      });
    });

    describe('topK', () => {
      test('defaults to 50 and can be set per query', async () => {
        const store = await open();
        expect(store.topK).toBe(50);
        await store.add(Array.from({ length: 60 }, (_, index) => doc(`d${index}`, [1, index / 60, 0])));
        expect(await store.search([1, 0, 0])).toHaveLength(50);
        const five = await store.search([1, 0, 0], { topK: 5 });
        expect(five.map((result) => result.id)).toEqual(['d0', 'd1', 'd2', 'd3', 'd4']);
        expect(await store.search([1, 0, 0], { topK: 100 })).toHaveLength(60);
      });

      for (const topK of [0, 1.5, -1]) {
        test(`rejects topK ${topK} with INVALID_TOP_K`, async () => {
          const store = await open();
          await store.add([doc('a', [1, 0, 0])]);
          await expect(store.search([1, 0, 0], { topK })).rejects.toMatchObject({ code: 'INVALID_TOP_K' });
        });
      }
    });

    describe('upsert, delete, read back', () => {
      test('re-adding an id replaces the document', async () => {
        const store = await open();
        await store.add([doc('x', [1, 0, 0], { content: 'old' }), doc('y', [0, 0, 1])]);
        await store.add([doc('x', [0, 1, 0], { content: 'new' })]);
        expect(await store.count()).toBe(2);
        const [best] = await store.search([0, 1, 0], { topK: 1 });
        expect(best).toMatchObject({ id: 'x', content: 'new' });
        expect(best.score).toBeCloseTo(1, 5);
        const [old] = await store.search([1, 0, 0], { topK: 1 });
        expect(old.score).toBeLessThan(0.01);
      });

      test('deleteBySource removes a whole source type, or one source', async () => {
        const store = await open();
        await store.add([
          doc('a1', [1, 0, 0], { sourceType: 'file', sourceName: 'a.md' }),
          doc('a2', [1, 1, 0], { sourceType: 'file', sourceName: 'a.md' }),
          doc('b1', [0, 1, 0], { sourceType: 'file', sourceName: 'b.md' }),
          doc('u1', [0, 0, 1], { sourceType: 'url', sourceName: 'a.md' }),
        ]);
        expect(await store.deleteBySource('file', 'a.md')).toBe(2);
        expect(await ids(store.search([1, 0, 0], { topK: 10 }))).toEqual(['b1', 'u1']);
        expect(await store.deleteBySource('file', 'missing.md')).toBe(0);
        expect(await store.deleteBySource('file')).toBe(1);
        expect(await ids(store.search([1, 0, 0], { topK: 10 }))).toEqual(['u1']);
        expect(await store.count()).toBe(1);
      });

      test('getByIds keeps the order asked and leaves out unknown ids', async () => {
        const store = await open();
        await store.add([doc('a', [1, 0, 0]), doc('b', [0, 1, 0]), doc('c', [0, 0, 1])]);
        const found = await store.getByIds(['c', 'a', 'missing', 'b']);
        expect(found.map((document) => document.id)).toEqual(['c', 'a', 'b']);
        expect(found[0]).toMatchObject({ content: 'content of c', sourceType: 'test' });
        expect(await store.getByIds([])).toEqual([]);
      });

      test('getBySource orders a source by metadata.chunkIndex', async () => {
        const store = await open();
        await store.add([
          doc('z-2', [1, 0, 0], { sourceType: 'file', sourceName: 'guide.md', metadata: { chunkIndex: 2 } }),
          doc('y-0', [0, 1, 0], { sourceType: 'file', sourceName: 'guide.md', metadata: { chunkIndex: 0 } }),
          doc('other', [0, 0, 1], { sourceType: 'file', sourceName: 'other.md', metadata: { chunkIndex: 1 } }),
          doc('x-10', [1, 1, 0], { sourceType: 'file', sourceName: 'guide.md', metadata: { chunkIndex: 10 } }),
          doc('w-1', [1, 0, 1], { sourceType: 'file', sourceName: 'guide.md', metadata: { chunkIndex: 1 } }),
        ]);
        const chunks = await store.getBySource('file', 'guide.md');
        expect(chunks.map((document) => document.id)).toEqual(['y-0', 'w-1', 'z-2', 'x-10']);
        const all = await store.getBySource('file');
        expect(all.map((document) => document.id).sort()).toEqual(['other', 'w-1', 'x-10', 'y-0', 'z-2']);
        expect(await store.getBySource('url')).toEqual([]);
      });

      test('count follows adds, upserts and deletes', async () => {
        const store = await open();
        await store.add([doc('a', [1, 0, 0]), doc('b', [0, 1, 0])]);
        expect(await store.count()).toBe(2);
        await store.add([doc('b', [0, 1, 1]), doc('c', [0, 0, 1])]);
        expect(await store.count()).toBe(3);
        await store.deleteBySource('test');
        expect(await store.count()).toBe(0);
      });

      test('returned documents are copies', async () => {
        const store = await open();
        const input = doc('a', [1, 0, 0], { metadata: { tags: ['one'], nested: { level: 1 } } });
        await store.add([input]);
        (input.metadata.tags as JsonValue[]).push('mutated input');
        input.content = 'mutated input';
        const [first] = await store.search([1, 0, 0]);
        first.content = 'mutated result';
        (first.metadata.nested as Record<string, JsonValue>).level = 99;
        first.embedding![0] = -5;
        const [fromIds] = await store.getByIds(['a']);
        fromIds.metadata.tags = [];
        const [again] = await store.search([1, 0, 0]);
        expect(again.content).toBe('content of a');
        expect(again.metadata).toEqual({ tags: ['one'], nested: { level: 1 } });
        expect(again.score).toBeCloseTo(1, 5);
        expect(again.embedding![0]).toBeGreaterThan(0);
      });
    });

    describe('metadata filters', () => {
      // Expected ids are worked out by hand from FILTER_DOCUMENTS; see the semantics in src/filter/evaluate.ts.
      const cases: [string, Filter, string[]][] = [
        ['implicit equality', { lang: 'en' }, ['d1', 'd3']],
        ['$eq', { lang: { $eq: 'en' } }, ['d1', 'd3']],
        ['$eq on a boolean', { draft: true }, ['d1']],
        ['$ne (missing fields match)', { lang: { $ne: 'en' } }, ['d2', 'd4', 'd5']],
        ['$gt (numbers only)', { year: { $gt: 2019 } }, ['d2', 'd3']],
        ['$gte', { year: { $gte: 2021 } }, ['d2', 'd3']],
        ['$lt', { year: { $lt: 2021 } }, ['d1']],
        ['$lte', { year: { $lte: 2021 } }, ['d1', 'd2']],
        ['a range', { year: { $gte: 2019, $lt: 2023 } }, ['d1', 'd2']],
        ['$in', { lang: { $in: ['fr', 'de'] } }, ['d2', 'd4']],
        ['$nin (missing fields match)', { lang: { $nin: ['en'] } }, ['d2', 'd4', 'd5']],
        ['equality on an array field', { tags: 'api' }, ['d1', 'd2']],
        ['$in on an array field', { tags: { $in: ['billing', 'nothing'] } }, ['d1']],
        ['$nin on an array field', { tags: { $nin: ['api'] } }, ['d3', 'd4', 'd5']],
        ['$contains on an array', { tags: { $contains: 'billing' } }, ['d1']],
        ['$contains on a string (case-sensitive substring)', { title: { $contains: 'billing' } }, ['d4']],
        ['$exists true', { author: { $exists: true } }, ['d1', 'd2', 'd4']],
        ['$exists false', { author: { $exists: false } }, ['d3', 'd5']],
        ['$exists treats null and [] as absent', { tags: { $exists: false } }, ['d3', 'd4', 'd5']],
        ['$exists false on a null field', { rating: { $exists: false } }, ['d1', 'd2', 'd3', 'd4', 'd5']],
        ['a nested dotted path', { 'author.name': 'Ada' }, ['d1', 'd4']],
        ['a comparison on a nested path', { 'author.age': { $gte: 30 } }, ['d1']],
        ['$and', { $and: [{ lang: 'en' }, { year: { $gt: 2020 } }] }, ['d3']],
        ['$or', { $or: [{ lang: 'fr' }, { 'author.name': 'Ada' }] }, ['d1', 'd2', 'd4']],
        ['$not', { $not: { lang: 'en' } }, ['d2', 'd4', 'd5']],
        ['several fields at once (and)', { sourceType: 'file', lang: 'en' }, ['d1']],
        ['reserved field sourceType', { sourceType: 'file' }, ['d1', 'd2', 'd4']],
        ['reserved field sourceName', { sourceName: 'a.md' }, ['d1', 'd4']],
        ['reserved field id', { id: { $in: ['d1', 'd5'] } }, ['d1', 'd5']],
        ['nothing matches', { lang: 'it' }, []],
      ];
      for (const [title, filter, expected] of cases) {
        test(`filter: ${title}`, async () => {
          const store = await open();
          await store.add(FILTER_DOCUMENTS);
          const results = await store.search([1, 1, 1, 1], { topK: 10, filter });
          expect(results.map((result) => result.id).sort()).toEqual(expected);
        });
      }

      test('the filter is applied inside the search, so topK results all match', async () => {
        const store = await open();
        // 95 documents close to the query that do not match, 5 far ones that do.
        const documents = Array.from({ length: 100 }, (_, index) =>
          index < 95
            ? doc(`near${index}`, [1, index / 95, 0], { metadata: { group: 'near' } })
            : doc(`far${index}`, [-1, index / 100, 0.1], { metadata: { group: 'far' } }),
        );
        await store.add(documents);
        const results = await store.search([1, 0, 0], { topK: 5, filter: { group: 'far' } });
        expect(results.map((result) => result.id).sort()).toEqual(['far95', 'far96', 'far97', 'far98', 'far99']);
        const three = await store.search([1, 0, 0], { topK: 3, filter: { group: { $eq: 'far' } } });
        expect(three).toHaveLength(3);
        expect(three.every((result) => result.metadata.group === 'far')).toBe(true);
        expect(three[0].score).toBeGreaterThanOrEqual(three[1].score);
      });

      test('an unknown operator throws FilterError', async () => {
        const store = await open();
        await store.add(FILTER_DOCUMENTS);
        await expect(store.search([1, 0, 0, 0], { filter: { lang: { $regex: 'e' } } })).rejects.toMatchObject({ name: 'FilterError', code: 'FILTER_INVALID' });
        await expect(store.search([1, 0, 0, 0], { filter: { $nor: [{ lang: 'en' }] } })).rejects.toMatchObject({ code: 'FILTER_INVALID' });
      });
    });

    test('declares its capabilities truthfully', async () => {
      const store = await open();
      const capabilities = store.capabilities ?? {};
      expect(typeof capabilities).toBe('object');
      expect(capabilities.keywordSearch === undefined || typeof capabilities.keywordSearch === 'boolean').toBe(true);
      expect(capabilities.keywordSearch === true).toBe(options.keywordSearch === true);
      if (capabilities.keywordSearch === true) expect(typeof (store as { keywordSearch?: unknown }).keywordSearch).toBe('function');
      expect(supportsKeywordSearch(store)).toBe(capabilities.keywordSearch === true);
    });

    (options.keywordSearch ? describe : describe.skip)('keyword search (KeywordSearchable; skipped for stores without a keyword index)', () => {
      const keywordStore = async () => {
        const store = await open();
        if (!supportsKeywordSearch(store)) throw new Error(`${store.name} was declared keyword-capable but supportsKeywordSearch() is false.`);
        return store;
      };

      test('keyword: scores BM25 by hand on a tiny corpus, best first', async () => {
        const store = await keywordStore();
        await store.add([
          doc('d1', [1, 0, 0], { content: 'apple banana' }),
          doc('d2', [0, 1, 0], { content: 'apple apple cherry' }),
          doc('d3', [0, 0, 1], { content: 'cherry date' }),
        ]);
        // Lucene BM25, k1 0.9, b 0.4: N = 3, df(apple) = 2, lengths 2, 3, 2 (avgdl 7/3).
        const idf = Math.log(1 + (3 - 2 + 0.5) / (2 + 0.5));
        const norm = (length: number) => 0.9 * (1 - 0.4 + (0.4 * length) / (7 / 3));
        const results = await store.keywordSearch('apple');
        expect(results.map((result) => result.id)).toEqual(['d2', 'd1']);
        expect(results[0].score).toBeCloseTo((idf * 2) / (2 + norm(3)), 6);
        expect(results[1].score).toBeCloseTo((idf * 1) / (1 + norm(2)), 6);
      });

      test('keyword: finds an exact identifier and returns every field with the embedding', async () => {
        const store = await keywordStore();
        await store.add([
          doc('incident', [0, 2, 0], {
            content: 'Postmortem of INC-2023-Q4-011: the cache expired early.',
            sourceType: 'file',
            sourceName: 'incidents.md',
            metadata: { chunkIndex: 4 },
          }),
          doc('other', [0, 2, 1], { content: 'Postmortem of INC-2022-Q1-003: a disk filled up.' }),
          doc('unrelated', [1, 0, 0], { content: 'Release notes for version 4.' }),
        ]);
        const results = await store.keywordSearch('what happened in INC-2023-Q4-011?');
        expect(results[0]).toMatchObject({
          id: 'incident',
          content: 'Postmortem of INC-2023-Q4-011: the cache expired early.',
          sourceType: 'file',
          sourceName: 'incidents.md',
          metadata: { chunkIndex: 4 },
        });
        expect(results[0].score).toBeGreaterThan(results[1]?.score ?? 0);
        expect(results.map((result) => result.id)).not.toContain('unrelated');
        expect(cosine(Array.from(results[0].embedding!), [0, 2, 0])).toBeCloseTo(1, 5);
      });

      test('keyword: only documents containing a query term come back; none for unknown words', async () => {
        const store = await keywordStore();
        expect(await store.keywordSearch('anything')).toEqual([]);
        await store.add([doc('a', [1, 0, 0], { content: 'alpha beta' }), doc('b', [0, 1, 0], { content: 'gamma delta' })]);
        expect((await store.keywordSearch('beta epsilon')).map((result) => result.id)).toEqual(['a']);
        expect(await store.keywordSearch('zeta')).toEqual([]);
        expect(await store.keywordSearch('the of and')).toEqual([]);
      });

      test('keyword: topK limits the results and is validated', async () => {
        const store = await keywordStore();
        await store.add(Array.from({ length: 60 }, (_, index) => doc(`d${index}`, [1, index, 0], { content: `shared word ${'filler '.repeat(index)}` })));
        expect(await store.keywordSearch('shared')).toHaveLength(50);
        // Shorter documents score higher (length normalisation), so the first three are the shortest.
        expect((await store.keywordSearch('shared', { topK: 3 })).map((result) => result.id)).toEqual(['d0', 'd1', 'd2']);
        await expect(store.keywordSearch('shared', { topK: 0 })).rejects.toMatchObject({ code: 'INVALID_TOP_K' });
      });

      test('keyword: follows upserts and deletes', async () => {
        const store = await keywordStore();
        await store.add([doc('x', [1, 0, 0], { content: 'original wording' }), doc('y', [0, 1, 0], { content: 'original text', sourceName: 'other' })]);
        await store.add([doc('x', [1, 0, 0], { content: 'replacement wording' })]);
        expect((await store.keywordSearch('original')).map((result) => result.id)).toEqual(['y']);
        expect((await store.keywordSearch('replacement')).map((result) => result.id)).toEqual(['x']);
        expect(await store.deleteBySource('test', 'other')).toBe(1);
        expect(await store.keywordSearch('original')).toEqual([]);
        expect((await store.keywordSearch('wording')).map((result) => result.id)).toEqual(['x']);
      });

      test('keyword: metadata filters apply inside the search', async () => {
        const store = await keywordStore();
        await store.add(FILTER_DOCUMENTS.map((document) => ({ ...document, content: `shared ${document.id}` })));
        expect((await store.keywordSearch('shared', { topK: 10, filter: { lang: 'en' } })).map((result) => result.id).sort()).toEqual(['d1', 'd3']);
        expect(
          (await store.keywordSearch('shared', { topK: 10, filter: { 'author.name': 'Ada', sourceType: 'file' } })).map((result) => result.id).sort(),
        ).toEqual(['d1', 'd4']);
        await expect(store.keywordSearch('shared', { filter: { lang: { $regex: 'e' } } })).rejects.toMatchObject({ code: 'FILTER_INVALID' });
      });

      test('keyword: an aborted signal is ABORTED', async () => {
        const store = await keywordStore();
        const controller = new AbortController();
        controller.abort();
        await expect(store.keywordSearch('anything', { signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
      });
    });

    describe('bad input writes nothing', () => {
      test('a vector of the wrong dimension is DIMENSION_MISMATCH', async () => {
        const store = await open();
        await store.add([doc('a', [1, 0, 0])]);
        await expect(store.add([doc('b', [0, 1, 0]), doc('c', [1, 0])])).rejects.toMatchObject({ code: 'DIMENSION_MISMATCH' });
        await expect(store.search([1, 0])).rejects.toMatchObject({ code: 'DIMENSION_MISMATCH' });
        expect(await store.count()).toBe(1);
        expect(await store.getByIds(['b', 'c'])).toEqual([]);
      });

      test('NaN is INVALID_VECTOR, in documents and queries', async () => {
        const store = await open();
        await expect(store.add([doc('a', [1, 0, 0]), doc('b', [1, Number.NaN, 0])])).rejects.toMatchObject({ code: 'INVALID_VECTOR' });
        expect(await store.count()).toBe(0);
        await store.add([doc('a', [1, 0, 0])]);
        await expect(store.search([Number.NaN, 0, 0])).rejects.toMatchObject({ code: 'INVALID_VECTOR' });
      });

      test('a zero vector is INVALID_VECTOR', async () => {
        const store = await open();
        await expect(store.add([doc('zero', [0, 0, 0])])).rejects.toMatchObject({ code: 'INVALID_VECTOR' });
        await store.add([doc('a', [1, 0, 0])]);
        await expect(store.search([0, 0, 0])).rejects.toMatchObject({ code: 'INVALID_VECTOR' });
        expect(await store.count()).toBe(1);
      });

      test('a document without an embedding is MISSING_EMBEDDINGS', async () => {
        const store = await open();
        const bare = doc('bare', [1, 0, 0]);
        delete bare.embedding;
        await expect(store.add([doc('a', [1, 0, 0]), bare])).rejects.toMatchObject({ code: 'MISSING_EMBEDDINGS' });
        expect(await store.count()).toBe(0);
      });

      test('an id twice in one batch is DUPLICATE_ID', async () => {
        const store = await open();
        await expect(store.add([doc('a', [1, 0, 0]), doc('a', [0, 1, 0])])).rejects.toMatchObject({ code: 'DUPLICATE_ID' });
        expect(await store.count()).toBe(0);
      });

      test('a failed add leaves earlier documents untouched', async () => {
        const store = await open();
        await store.add([doc('keep', [1, 0, 0], { content: 'original' })]);
        await expect(store.add([doc('keep', [0, 1, 0], { content: 'replacement' }), doc('bad', [Number.POSITIVE_INFINITY, 0, 0])])).rejects.toMatchObject({
          code: 'INVALID_VECTOR',
        });
        const [kept] = await store.getByIds(['keep']);
        expect(kept.content).toBe('original');
        expect(await store.count()).toBe(1);
      });

      test('an aborted signal is ABORTED and writes nothing', async () => {
        const store = await open();
        const controller = new AbortController();
        controller.abort();
        await expect(store.add([doc('a', [1, 0, 0])], { signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
        expect(await store.count()).toBe(0);
        await expect(store.search([1, 0, 0], { signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
      });
    });

    cases.assertAllKnown(`${name}: VectorStore conformance`);
  });
}

/** A test document with readable defaults. */
export function doc(id: string, embedding: number[] | Float32Array, overrides: Partial<Omit<Document, 'id' | 'embedding'>> = {}): Document {
  return { id, content: `content of ${id}`, sourceType: 'test', sourceName: 'suite', score: 0, metadata: {}, embedding, ...overrides };
}

/** Five documents covering every filter case; the vectors are all different and irrelevant to the filters. */
export const FILTER_DOCUMENTS: Document[] = [
  doc('d1', [1, 0, 0, 0], {
    sourceType: 'file',
    sourceName: 'a.md',
    metadata: { lang: 'en', year: 2019, tags: ['billing', 'api'], title: 'Billing guide', author: { name: 'Ada', age: 36 }, draft: true },
  }),
  doc('d2', [0, 1, 0, 0], {
    sourceType: 'file',
    sourceName: 'b.md',
    metadata: { lang: 'fr', year: 2021, tags: ['api'], title: 'API reference', author: { name: 'Grace' }, draft: false },
  }),
  doc('d3', [0, 0, 1, 0], {
    sourceType: 'url',
    sourceName: 'https://example.com',
    metadata: { lang: 'en', year: 2023, tags: [], title: 'Release notes', rating: null },
  }),
  doc('d4', [0, 0, 0, 1], {
    sourceType: 'file',
    sourceName: 'a.md',
    metadata: { lang: 'de', year: '2020', title: 'Old billing FAQ', author: { name: 'Ada' } },
  }),
  doc('d5', [1, 1, 0, 0], { sourceType: 'manual', sourceName: '', metadata: {} }),
];

async function ids(results: Promise<Document[]>): Promise<string[]> {
  return (await results).map((result) => result.id).sort();
}

function cosine(left: number[], right: number[]): number {
  let dot = 0;
  let leftNorm = 0;
  let rightNorm = 0;
  left.forEach((value, index) => {
    dot += value * right[index];
    leftNorm += value * value;
    rightNorm += right[index] * right[index];
  });
  return dot / Math.sqrt(leftNorm * rightNorm);
}

function round(value: number): number {
  return Math.round(value * 1e5) / 1e5;
}
