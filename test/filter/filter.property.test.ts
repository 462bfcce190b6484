/**
 * Filter property suite (issue 13): any value, however nested or malformed, either parses or is a FilterError;
 * and MemoryStore, FileStore and Qdrant's translation (through its loopback server) select the same documents.
 */
import fc from 'fast-check';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VectorStore } from '../../src/contracts/vector-store.ts';
import { FilterError } from '../../src/errors.ts';
import { parseFilter, type Filter } from '../../src/filter/index.ts';
import { FileStore } from '../../stores/file-store/file-store.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import { QdrantStore } from '../../stores/qdrant/qdrant-store.ts';
import { propertyRuns } from '../helpers/property.ts';
import { startQdrantServer, type QdrantLoopbackServer } from '../servers/qdrant-server.ts';
import { temporaryDirectories } from '../stores/support.ts';
import { mulberry32, randomDocument, randomFilter } from '../stores/qdrant/qdrant-filter-generator.ts';

const OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$contains', '$exists', '$and', '$or', '$not', '$regex', '$', ''];
const FIELDS = ['lang', 'year', 'tags', 'author.name', 'id', 'sourceType', 'a..b', '.x', 'odd key', '__proto__', 'constructor'];

/** Values of every JSON shape (and a few that are not JSON), nested and wide, with operator keys mixed in. */
const filterLike = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.double(), fc.boolean(), fc.constantFrom(null, undefined, Number.NaN), fc.date()),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...OPERATORS, ...FIELDS), tie('value'), { maxKeys: 4 }),
  ),
}));

/** A chain of logical operators of random kinds, up to far past the depth limit. */
const operatorChain = fc.array(fc.constantFrom('$and', '$or', '$not'), { minLength: 1, maxLength: 200 });
const deepChain = fc.tuple(operatorChain, fc.integer({ min: 1, max: 20 })).map(([operators, repeat]) => {
  let filter: unknown = { lang: 'en' };
  for (let round = 0; round < repeat; round++) for (const operator of operators) filter = operator === '$not' ? { $not: filter } : { [operator]: [filter] };
  return filter;
});

describe('parseFilter is total', () => {
  it('property: any value parses or is a FilterError, never another error', () => {
    fc.assert(
      fc.property(fc.oneof(fc.dictionary(fc.constantFrom(...OPERATORS, ...FIELDS), filterLike.value, { maxKeys: 5 }), filterLike.value, deepChain), (value) => {
        try {
          parseFilter(value);
        } catch (error) {
          if (!(error instanceof FilterError)) throw error;
        }
      }),
      propertyRuns(500),
    );
  });
});

describe('the stores agree on which documents a filter selects', () => {
  const temporaryDirectory = temporaryDirectories('axon-filter-property-');
  const random = mulberry32(13);
  const documents = Array.from({ length: 40 }, (_, index) => randomDocument(index, random));
  let server: QdrantLoopbackServer;
  let stores: [string, VectorStore][];

  beforeAll(async () => {
    server = await startQdrantServer();
    stores = [
      ['memory', new MemoryStore()],
      ['qdrant', new QdrantStore({ url: server.url, collection: 'filter-property' })],
    ];
    for (const [, store] of stores) await store.add(documents);
  });
  afterAll(async () => {
    await server.close();
  });

  it('property: memory, file and qdrant return the same ids for random nested filters', async () => {
    const file = new FileStore({ directory: join(await temporaryDirectory(), 'store'), keywordIndex: false });
    await file.add(documents);
    const all: [string, VectorStore][] = [...stores, ['file', file]];
    await fc.assert(
      fc.asyncProperty(fc.integer(), fc.integer({ min: 0, max: 2 }), async (seed, depth) => {
        const filter: Filter = randomFilter(mulberry32(seed), depth);
        const results = new Map<string, string[] | 'refused'>();
        for (const [name, store] of all) {
          try {
            results.set(name, (await store.search([1, 0, 0], { filter, topK: 100 })).map((document) => document.id).sort());
          } catch (error) {
            if (!(error instanceof FilterError)) throw error;
            results.set(name, 'refused');
          }
        }
        const expected = results.get('memory');
        expect(results.get('file'), JSON.stringify(filter)).toEqual(expected);
        // Qdrant refuses $contains by design (docs/qdrant.md); every other filter must select the same documents.
        if (results.get('qdrant') === 'refused') expect(JSON.stringify(filter)).toContain('$contains');
        else expect(results.get('qdrant'), JSON.stringify(filter)).toEqual(expected);
      }),
      propertyRuns(150),
    );
  });
});
