import { describe, expect, it } from 'vitest';
import type { Document } from '../../../src/document.ts';
import { IdTable } from '../../../stores/indexes/id-table.ts';
import { scanTopK, type StoredRun, VectorIndex } from '../../../stores/indexes/vector-index.ts';
import { random } from '../support.ts';

function documents(count: number, dimensions: number, next: () => number): Document[] {
  return Array.from({ length: count }, (_, index) => ({
    id: `doc${index}`,
    content: `text ${index}`,
    sourceType: 'test',
    sourceName: `source${index % 7}`,
    score: 0,
    metadata: { bucket: index % 10 },
    embedding: Array.from({ length: dimensions }, next),
  }));
}

/** The obvious implementation: cosine in float64 against every document, sorted. */
function bruteForce(items: Document[], query: number[], topK: number): string[] {
  const norm = (vector: ArrayLike<number>) => Math.sqrt(Array.from(vector).reduce((sum, value) => sum + value * value, 0));
  return items
    .map((item) => {
      const embedding = item.embedding!;
      let dot = 0;
      for (let index = 0; index < query.length; index++) dot += embedding[index] * query[index];
      return { id: item.id, score: dot / (norm(embedding) * norm(query)) };
    })
    .sort((left, right) => right.score - left.score)
    .slice(0, topK)
    .map((entry) => entry.id);
}

describe('VectorIndex', () => {
  // 17 dimensions exercises both the unrolled loop and its remainder.
  const next = random(42);
  const items = documents(500, 17, next);
  const queries = Array.from({ length: 5 }, () => Array.from({ length: 17 }, next));

  it('finds the same top-K as a brute-force cosine, best first', () => {
    const index = new VectorIndex({ initialCapacity: 8 });
    index.add(items);
    for (const query of queries) {
      const results = index.search(query, { topK: 25 });
      expect(results.map((result) => result.id)).toEqual(bruteForce(items, query, 25));
      for (let rank = 1; rank < results.length; rank++) expect(results[rank - 1].score).toBeGreaterThanOrEqual(results[rank].score);
    }
  });

  it('stays correct after swap-remove deletes and upserts', () => {
    const index = new VectorIndex();
    index.add(items);
    const removed = items.filter((_, position) => position % 3 === 0).map((item) => item.id);
    expect(index.delete([...removed, 'unknown'])).toBe(removed.length);
    const replaced = items
      .filter((_, position) => position % 5 === 1 && position % 3 !== 0)
      .map((item) => ({ ...item, embedding: Array.from({ length: 17 }, next) }));
    index.add(replaced);
    const replacedById = new Map(replaced.map((item) => [item.id, item]));
    const remaining = items.filter((item) => !removed.includes(item.id)).map((item) => replacedById.get(item.id) ?? item);
    expect(index.size).toBe(remaining.length);
    for (const query of queries) expect(index.search(query, { topK: 40 }).map((result) => result.id)).toEqual(bruteForce(remaining, query, 40));
    for (const id of removed.slice(0, 5)) expect(index.get(id)).toBeUndefined();
    expect(index.get('doc1')!.embedding!.length).toBe(17);
  });

  it('scores only the rows a filter selects', () => {
    const index = new VectorIndex();
    index.add(items);
    const selected = items.filter((item) => item.metadata.bucket === 3);
    for (const query of queries) {
      expect(index.search(query, { topK: 10, filter: { bucket: 3 } }).map((result) => result.id)).toEqual(bruteForce(selected, query, 10));
    }
  });

  it('stores unit vectors', () => {
    const index = new VectorIndex();
    index.add([{ ...items[0], embedding: [3, 4] }]);
    expect(Array.from(index.get('doc0')!.embedding!)).toEqual([Math.fround(0.6), Math.fround(0.8)]);
  });

  it('normalises huge components without overflowing', () => {
    const index = new VectorIndex();
    index.add([{ ...items[0], embedding: [1e300, 1e300] }]);
    const [result] = index.search([1, 1], { topK: 1 });
    expect(result.score).toBeCloseTo(1, 6);
  });

  it('breaks score ties by insertion row', () => {
    const vectors = new Float32Array([1, 0, 1, 0, 0, 1, 1, 0]);
    const hits = scanTopK(vectors, 2, new Float32Array([1, 0]), null, 4, 2);
    expect(Array.from(hits.rows)).toEqual([0, 1]);
    const all = scanTopK(vectors, 2, new Float32Array([1, 0]), null, 4, 10);
    expect(Array.from(all.rows)).toEqual([0, 1, 3, 2]);
    expect(Array.from(all.scores)).toEqual([1, 1, 1, 0]);
  });

  it('rejects metadata that is not JSON', () => {
    const index = new VectorIndex({ component: 'test-store' });
    expect(() => index.add([{ ...items[0], metadata: { when: new Date() as never } }])).toThrow(expect.objectContaining({ code: 'INVALID_DOCUMENT' }));
    expect(() => index.add([{ ...items[0], metadata: { ratio: Number.NaN } }])).toThrow(expect.objectContaining({ code: 'INVALID_DOCUMENT' }));
    expect(index.size).toBe(0);
  });
});

describe('VectorIndex.appendStored (bulk load of checked rows)', () => {
  it.each([
    ['packed rows, exact', 8, 'exact'],
    ['packed rows, int8', 8, 'int8'],
    ['padded rows (dimensions not a multiple of 4)', 6, 'exact'],
  ] as const)('holds and finds what insert() would, with the dropped rows removed (%s)', async (_, dimensions, precision) => {
    const next = random(11);
    const items = documents(40, dimensions, next);
    const dropped = [0, 5, 6, 39];
    const reference = new VectorIndex({ precision });
    reference.add(items.filter((_, row) => !dropped.includes(row)));
    const prepared = reference.prepare(items);
    const loaded = new VectorIndex({ precision, initialCapacity: 4 });
    loaded.add(documents(3, dimensions, next).map((document) => ({ ...document, id: `before-${document.id}` })));
    let calls = 0;
    await loaded.appendStored(
      prepared.documents,
      dimensions,
      1,
      async (target) => {
        calls++;
        expect(target.length).toBe(40 * dimensions * 4);
        target.set(new Uint8Array(prepared.vectors.buffer, prepared.vectors.byteOffset, prepared.vectors.byteLength));
      },
      { dropped },
    );
    expect(calls).toBe(1);
    expect(loaded.size).toBe(3 + 36);
    for (const row of dropped) expect(loaded.has(`doc${row}`)).toBe(false);
    const query = Array.from({ length: dimensions }, next);
    const ids = (found: Document[]) => found.map((document) => `${document.id} ${document.score.toFixed(12)}`);
    const live = (found: Document[]) => found.filter((document) => !document.id.startsWith('before-'));
    expect(ids(live(loaded.search(query, { topK: 50 })))).toEqual(ids(reference.search(query, { topK: 50 })));
    expect(Array.from(loaded.get('doc7')!.embedding!)).toEqual(Array.from(reference.get('doc7')!.embedding!));
    // Every id maps to the row that holds it, the rows moved into the dropped ones' places included.
    for (let row = 0; row < loaded.size; row++) expect(loaded.rowOf(loaded.storedDocumentAt(row).id)).toBe(row);
  });

  it('takes the documents (and the dropped rows) as functions, called once the fill has started', async () => {
    const next = random(12);
    const items = documents(30, 8, next);
    const reference = new VectorIndex();
    reference.add(items.filter((_, row) => row !== 4 && row !== 29));
    const prepared = reference.prepare(items);
    const events: string[] = [];
    const loaded = new VectorIndex();
    await loaded.appendStored(
      () => {
        events.push('documents');
        return prepared.documents;
      },
      8,
      1,
      async (target) => {
        events.push('fill started');
        await new Promise((resolve) => setTimeout(resolve, 5));
        target.set(new Uint8Array(prepared.vectors.buffer, prepared.vectors.byteOffset, prepared.vectors.byteLength));
        events.push('fill done');
      },
      { count: 30, dropped: (stored) => stored.flatMap((document, row) => (document.id === 'doc4' || document.id === 'doc29' ? [row] : [])) },
    );
    expect(events).toEqual(['fill started', 'documents', 'fill done']);
    expect(loaded.size).toBe(28);
    const query = Array.from({ length: 8 }, next);
    expect(loaded.search(query, { topK: 28 }).map((document) => document.id)).toEqual(reference.search(query, { topK: 28 }).map((document) => document.id));
    for (let row = 0; row < loaded.size; row++) expect(loaded.rowOf(loaded.storedDocumentAt(row).id)).toBe(row);
    // A function without the count, or a count the documents do not match, is a caller's bug.
    const fill = async (target: Uint8Array) => target.set(new Uint8Array(prepared.vectors.buffer, prepared.vectors.byteOffset, prepared.vectors.byteLength));
    await expect(new VectorIndex().appendStored(() => prepared.documents, 8, 1, fill)).rejects.toMatchObject({ code: 'INTERNAL' });
    await expect(new VectorIndex().appendStored(() => prepared.documents, 8, 1, fill, { count: 29 })).rejects.toMatchObject({ code: 'INTERNAL' });
  });

  it('loads a stored run without making a document per row: only the rows a search returns get theirs', async () => {
    const next = random(21);
    const items = documents(50, 8, next);
    const prepared = new VectorIndex().prepare(items);
    const made: number[] = [];
    const stored: StoredRun = {
      ids: IdTable.fromStrings(items.map((item) => item.id)),
      document: (position) => {
        made.push(position);
        return prepared.documents[position];
      },
    };
    const loaded = new VectorIndex();
    const fill = async (target: Uint8Array) => target.set(new Uint8Array(prepared.vectors.buffer, prepared.vectors.byteOffset, prepared.vectors.byteLength));
    await loaded.appendStored(stored, 8, 1, fill, { dropped: [3] });
    expect(made).toEqual([]);
    expect(loaded.size).toBe(49);
    expect(loaded.has('doc3')).toBe(false);
    expect(loaded.rowOf('doc49')).toBe(3);
    const found = loaded.search(Array.from({ length: 8 }, next), { topK: 2 });
    expect(made.sort((left, right) => left - right)).toEqual(found.map((document) => Number(document.id.slice(3))).sort((left, right) => left - right));
  });

  it('refuses an id it already holds through the caller’s error', async () => {
    const index = new VectorIndex();
    index.add(documents(2, 4, random(3)));
    const prepared = index.prepare(documents(3, 4, random(4)));
    const fill = async (target: Uint8Array) => target.set(new Uint8Array(prepared.vectors.buffer));
    await expect(index.appendStored(prepared.documents, 4, 1, fill, { duplicate: (id) => new Error(`twice: ${id}`) })).rejects.toThrow('twice: doc0');
  });
});

describe('VectorIndex filter cache', () => {
  it('forgets cached matches when documents are added, replaced or deleted', () => {
    const index = new VectorIndex();
    const make = (id: string, bucket: number, embedding: number[]): Document => ({
      id,
      content: id,
      sourceType: 't',
      sourceName: 's',
      score: 0,
      metadata: { bucket },
      embedding,
    });
    index.add([make('a', 1, [1, 0]), make('b', 2, [0, 1])]);
    const search = () => index.search([1, 0], { topK: 10, filter: { bucket: 1 } }).map((result) => result.id);
    expect(search()).toEqual(['a']);
    index.add([make('c', 1, [1, 1])]);
    expect(search()).toEqual(['a', 'c']);
    index.add([make('a', 2, [1, 0])]);
    expect(search()).toEqual(['c']);
    index.delete(['c']);
    expect(search()).toEqual([]);
  });
});
