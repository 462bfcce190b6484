import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileFilter, parseFilter, type Filter } from '../../../src/filter/index.ts';
import { qdrantPayloadKey, toQdrantFilter } from '../../../stores/qdrant/qdrant-filter.ts';
import { QdrantStore } from '../../../stores/qdrant/qdrant-store.ts';
import { startQdrantServer, type QdrantLoopbackServer } from '../../servers/qdrant-server.ts';
import { mulberry32, randomDocument, randomFilter } from './qdrant-filter-generator.ts';

const translate = (filter: Filter) => toQdrantFilter(parseFilter(filter));

describe('toQdrantFilter', () => {
  it('maps reserved fields to the top of the payload and the rest under metadata, quoting odd keys', () => {
    expect(['id', 'sourceType', 'sourceName', 'lang', 'author.name', 'sourceType.x', 'author name.first-name', 'ünïcode'].map(qdrantPayloadKey)).toEqual([
      'id',
      'sourceType',
      'sourceName',
      'metadata.lang',
      'metadata.author.name',
      'metadata.sourceType.x',
      'metadata."author name".first-name',
      'metadata."ünïcode"',
    ]);
    expect(() => qdrantPayloadKey('a.b\\c')).toThrow(expect.objectContaining({ name: 'FilterError', component: 'qdrant-store', path: 'a.b\\c' }));
  });

  it('translates equality by value type: match for strings, booleans and integers, a closed range for fractions', () => {
    expect(translate({ lang: 'en', draft: true, year: 2020, score: 0.5 })).toEqual({
      must: [
        { key: 'metadata.lang', match: { value: 'en' } },
        { key: 'metadata.draft', match: { value: true } },
        { key: 'metadata.year', match: { value: 2020 } },
        { key: 'metadata.score', range: { gte: 0.5, lte: 0.5 } },
      ],
    });
    expect(translate({ big: 2 ** 60 })).toEqual({ must: [{ key: 'metadata.big', range: { gte: 2 ** 60, lte: 2 ** 60 } }] });
  });

  it('wraps $ne and $nin in must_not, so documents without the field match', () => {
    expect(translate({ lang: { $ne: 'en' } })).toEqual({ must_not: [{ key: 'metadata.lang', match: { value: 'en' } }] });
    expect(translate({ lang: { $nin: ['en', 'fr'] } })).toEqual({ must_not: [{ key: 'metadata.lang', match: { any: ['en', 'fr'] } }] });
  });

  it('splits $in by type, since match.any takes only strings or only integers', () => {
    expect(translate({ value: { $in: ['a', 1, true, 2.5, 'a', 3] } })).toEqual({
      should: [
        { key: 'metadata.value', match: { any: ['a'] } },
        { key: 'metadata.value', match: { any: [1, 3] } },
        { key: 'metadata.value', match: { value: true } },
        { key: 'metadata.value', range: { gte: 2.5, lte: 2.5 } },
      ],
    });
  });

  it('keeps each comparison its own range (an array may satisfy them with different elements)', () => {
    expect(translate({ year: { $gte: 2019, $lt: 2023 } })).toEqual({
      must: [
        { key: 'metadata.year', range: { gte: 2019 } },
        { key: 'metadata.year', range: { lt: 2023 } },
      ],
    });
  });

  it('translates $exists to is_empty, and logic to must / should / must_not', () => {
    expect(translate({ $or: [{ author: { $exists: false } }, { $not: { 'author.name': { $exists: true } } }], id: 'd1' })).toEqual({
      must: [
        {
          should: [{ is_empty: { key: 'metadata.author' } }, { must_not: [{ must_not: [{ is_empty: { key: 'metadata.author.name' } }] }] }],
        },
        { key: 'id', match: { value: 'd1' } },
      ],
    });
  });

  it('rejects $contains with a FilterError that names the path and the alternative', () => {
    expect(() => translate({ $or: [{ lang: 'en' }, { tags: { $contains: 'billing' } }] })).toThrow(
      expect.objectContaining({
        name: 'FilterError',
        code: 'FILTER_INVALID',
        component: 'qdrant-store',
        path: 'tags.$contains',
        message: expect.stringContaining('{ "tags": "billing" }'),
      }),
    );
  });
});

describe('the translated filter on the loopback Qdrant selects what compileFilter selects', () => {
  const random = mulberry32(20_240_611);
  const DOCUMENTS = Array.from({ length: 48 }, (_, index) => randomDocument(index, random));
  const FILTERS = Array.from({ length: 400 }, () => randomFilter(random, 0));
  let server: QdrantLoopbackServer;
  let store: QdrantStore;

  beforeAll(async () => {
    server = await startQdrantServer();
    store = new QdrantStore({ url: server.url, collection: 'equivalence', indexedFields: ['lang'] });
    await store.add(DOCUMENTS);
  });
  afterAll(async () => {
    await server.close();
  });

  it('for 400 seeded random filters over 48 seeded random documents', async () => {
    let selective = 0;
    for (const filter of FILTERS) {
      const expected = DOCUMENTS.filter(compileFilter(parseFilter(filter)))
        .map((document) => document.id)
        .sort();
      const actual = (await store.search([1, 0, 0], { filter, topK: 100 })).map((document) => document.id).sort();
      expect(actual, JSON.stringify(filter)).toEqual(expected);
      if (expected.length > 0 && expected.length < DOCUMENTS.length) selective++;
    }
    // The generator must produce filters that split the documents, or the comparison proves little.
    expect(selective).toBeGreaterThan(FILTERS.length * 0.5);
  });

  it('rejects every generated filter that uses $contains instead of answering it', async () => {
    await expect(store.search([1, 0, 0], { filter: { $and: [randomFilter(random, 2), { tags: { $contains: 'a' } }] } })).rejects.toMatchObject({
      name: 'FilterError',
    });
  });
});
