/**
 * Input that is hostile or absurd gets a typed error on every store, never a RangeError or a hang (issue 13: D5, D6, D14).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VectorStore } from '../../src/contracts/vector-store.ts';
import { normalizeDocument, type Document } from '../../src/document.ts';
import { FilterError } from '../../src/errors.ts';
import { MAX_FILTER_CONDITIONS, MAX_FILTER_DEPTH, parseFilter } from '../../src/filter/parse.ts';
import { FileStore } from '../../stores/file-store/file-store.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import { QdrantStore } from '../../stores/qdrant/qdrant-store.ts';
import { doc } from '../../testing/vector-store.ts';
import { startQdrantServer, type QdrantLoopbackServer } from '../servers/qdrant-server.ts';
import { temporaryDirectories } from './support.ts';

const temporaryDirectory = temporaryDirectories('axon-hostile-');
let server: QdrantLoopbackServer;
let collection = 0;
beforeAll(async () => {
  server = await startQdrantServer();
});
afterAll(async () => {
  await server.close();
});

const stores: [string, () => Promise<VectorStore>][] = [
  ['memory', async () => new MemoryStore()],
  ['file', async () => new FileStore({ directory: join(await temporaryDirectory(), 'store') })],
  ['qdrant', async () => new QdrantStore({ url: server.url, collection: `hostile-${++collection}` })],
];

function nested(depth: number, operator: '$and' | '$or' | '$not'): unknown {
  let filter: unknown = { lang: 'en' };
  for (let level = 0; level < depth; level++) filter = operator === '$not' ? { $not: filter } : { [operator]: [filter] };
  return filter;
}

function deepMetadata(depth: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let current = root;
  for (let level = 0; level < depth; level++) {
    const next: Record<string, unknown> = {};
    current.child = next;
    current = next;
  }
  return root;
}

function circularMetadata(): Record<string, unknown> {
  const metadata: Record<string, unknown> = { name: 'loop', list: [] };
  metadata.self = metadata;
  return metadata;
}

describe('D6: filter depth and size limits', () => {
  it.each(['$and', '$or', '$not'] as const)('a filter of %s nested past the limit is FILTER_INVALID naming the limit', (operator) => {
    expect(() => parseFilter(nested(MAX_FILTER_DEPTH, operator))).not.toThrow();
    for (const depth of [MAX_FILTER_DEPTH + 1, 1352, 100_000]) {
      expect(() => parseFilter(nested(depth, operator))).toThrow(FilterError);
      expect(() => parseFilter(nested(depth, operator))).toThrow(new RegExp(`${MAX_FILTER_DEPTH} levels`));
    }
  });

  it('a filter of more conditions than the limit is FILTER_INVALID', () => {
    const wide = { $or: Array.from({ length: MAX_FILTER_CONDITIONS + 1 }, (_, index) => ({ n: index })) };
    expect(() => parseFilter(wide)).toThrow(FilterError);
    expect(() => parseFilter({ n: { $in: Array.from({ length: MAX_FILTER_CONDITIONS + 1 }, (_, index) => index) } })).toThrow(/conditions/);
    // The $or counts as one condition itself.
    expect(() => parseFilter({ $or: Array.from({ length: MAX_FILTER_CONDITIONS - 1 }, (_, index) => ({ n: index })) })).not.toThrow();
  });

  it.each(stores)('%s store: a deeply nested filter is a FilterError, not a RangeError', async (_name, create) => {
    const store = await create();
    await store.add([doc('a', [1, 0], { metadata: { lang: 'en' } })]);
    for (const operator of ['$and', '$or', '$not'] as const) {
      await expect(store.search([1, 0], { filter: nested(1352, operator) as never })).rejects.toMatchObject({ code: 'FILTER_INVALID' });
    }
  });
});

describe('D5: circular or absurdly deep metadata', () => {
  it('normalizeDocument refuses circular and too-deep metadata with INVALID_DOCUMENT and the path', () => {
    expect(() => normalizeDocument({ content: 'x', metadata: circularMetadata() as never }, 0)).toThrow(
      expect.objectContaining({ code: 'INVALID_DOCUMENT', message: expect.stringContaining('documents[0].metadata.self') }),
    );
    expect(() => normalizeDocument({ content: 'x', metadata: deepMetadata(3672) as never }, 2)).toThrow(
      expect.objectContaining({ code: 'INVALID_DOCUMENT', message: expect.stringMatching(/documents\[2\]\.metadata\.child.*deeper than 64/) }),
    );
    expect(() => normalizeDocument({ content: 'x', metadata: deepMetadata(63) as never }, 0)).not.toThrow();
    // The same object twice (not a cycle) is fine.
    const shared = { a: 1 };
    expect(() => normalizeDocument({ content: 'x', metadata: { one: shared, two: [shared, shared] } }, 0)).not.toThrow();
  });

  it.each(stores)('%s store: add refuses circular and too-deep metadata with INVALID_DOCUMENT, writing nothing', async (_name, create) => {
    const store = await create();
    for (const metadata of [circularMetadata(), deepMetadata(3672)]) {
      const bad: Document = doc('bad', [1, 0], { metadata: metadata as never });
      await expect(store.add([doc('good', [0, 1]), bad])).rejects.toMatchObject({ code: 'INVALID_DOCUMENT', message: expect.stringContaining('metadata') });
    }
    expect(await store.count()).toBe(0);
  });
});

describe('D14: one ef check on every store', () => {
  it.each(stores)('%s store: search refuses an ef that is not a positive integer', async (_name, create) => {
    const store = await create();
    await store.add([doc('a', [1, 0])]);
    for (const ef of [-1, 0, 1.5, 'abc', Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(store.search([1, 0], { ef: ef as never })).rejects.toMatchObject({ code: 'INVALID_OPTION', message: expect.stringContaining('ef') });
    }
    expect(await store.search([1, 0], { ef: 10 })).toHaveLength(1);
  });
});
