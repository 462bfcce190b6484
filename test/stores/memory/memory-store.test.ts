import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../stores/memory/memory-store.ts';
import { describeVectorStoreConformance, doc } from '../../../testing/vector-store.ts';

describeVectorStoreConformance('memory-store', async () => ({ store: new MemoryStore() }), { keywordSearch: true });
// The int8 scan re-scores its candidates exactly, so the whole contract must hold with it too.
describeVectorStoreConformance('memory-store (int8 precision)', async () => ({ store: new MemoryStore({ precision: 'int8' }) }), { keywordSearch: true });

describe('MemoryStore', () => {
  it('takes topK from its options', async () => {
    const store = new MemoryStore({ topK: 2 });
    await store.add([doc('a', [1, 0]), doc('b', [1, 1]), doc('c', [0, 1])]);
    expect((await store.search([1, 0])).map((result) => result.id)).toEqual(['a', 'b']);
  });

  it('rejects invalid options with CONFIG_INVALID', () => {
    expect(() => new MemoryStore({ topK: 0 })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    expect(() => new MemoryStore({ topK: 5, extra: true } as never)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });

  it('keeps the dimensions of the first insert after everything is deleted', async () => {
    const store = new MemoryStore();
    await store.add([doc('a', [1, 0, 0])]);
    await store.deleteBySource('test');
    await expect(store.add([doc('b', [1, 0])])).rejects.toMatchObject({ code: 'DIMENSION_MISMATCH' });
  });
});
