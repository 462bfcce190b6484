import { describe, expect, it } from 'vitest';
import { HnswIndex } from '../../stores/hnsw-index.ts';
import { scanTopK } from '../../stores/vector-index.ts';
import { expectAxonError, random } from './support.ts';

function unitVectors(count: number, dimensions: number, next: () => number): Float32Array {
  const vectors = new Float32Array(count * dimensions);
  for (let row = 0; row < count; row++) {
    let sumOfSquares = 0;
    for (let index = 0; index < dimensions; index++) {
      vectors[row * dimensions + index] = next();
      sumOfSquares += vectors[row * dimensions + index] ** 2;
    }
    for (let index = 0; index < dimensions; index++) vectors[row * dimensions + index] /= Math.sqrt(sumOfSquares);
  }
  return vectors;
}

function build(vectors: Float32Array, dimensions: number, options: { m?: number; rebuildRatio?: number } = {}): HnswIndex {
  const index = new HnswIndex({ dimensions, m: options.m ?? 12, efConstruction: 64, rebuildRatio: options.rebuildRatio, initialCapacity: 16 });
  for (let row = 0; row < vectors.length / dimensions; row++) index.add(`doc${row}`, vectors.subarray(row * dimensions, (row + 1) * dimensions));
  return index;
}

function recallAt10(index: HnswIndex, vectors: Float32Array, dimensions: number, queries: Float32Array[], ef: number): number {
  let found = 0;
  for (const query of queries) {
    const exact = new Set(Array.from(scanTopK(vectors, dimensions, query, null, vectors.length / dimensions, 10).rows, (row) => `doc${row}`));
    for (const id of index.search(query, 10, { ef }).ids) if (exact.has(id)) found++;
  }
  return found / (queries.length * 10);
}

describe('HnswIndex', () => {
  it('ranks a hand-computed example by dot product', () => {
    const index = new HnswIndex({ dimensions: 2 });
    index.add('east', [1, 0]);
    index.add('north', [0, 1]);
    index.add('north-east', [Math.SQRT1_2, Math.SQRT1_2]);
    const hits = index.search([0.6, 0.8], 3);
    expect(hits.ids).toEqual(['north-east', 'north', 'east']);
    expect(hits.scores[0]).toBeCloseTo(1.4 * Math.SQRT1_2, 6);
    expect(hits.scores[1]).toBeCloseTo(0.8, 6);
    expect(hits.scores[2]).toBeCloseTo(0.6, 6);
    expect(new HnswIndex({ dimensions: 2 }).search([1, 0], 5).ids).toEqual([]);
  });

  it('finds at least 95% of the exact top 10, more with a larger ef', () => {
    const next = random(1);
    const dimensions = 16;
    const vectors = unitVectors(2000, dimensions, next);
    const queries = Array.from({ length: 40 }, () => unitVectors(1, dimensions, next));
    const index = build(vectors, dimensions);
    const low = recallAt10(index, vectors, dimensions, queries, 10);
    const high = recallAt10(index, vectors, dimensions, queries, 100);
    expect(high).toBeGreaterThanOrEqual(0.95);
    expect(high).toBeGreaterThanOrEqual(low);
  });

  it('replaces an id added again, and never returns a deleted id', () => {
    const next = random(2);
    const dimensions = 8;
    const vectors = unitVectors(300, dimensions, next);
    const index = build(vectors, dimensions, { rebuildRatio: 0.9 });
    const query = vectors.subarray(0, dimensions);
    expect(index.search(query, 1).ids).toEqual(['doc0']);
    const opposite = Float32Array.from(query, (value) => -value);
    index.add('doc0', opposite);
    expect(index.size).toBe(300);
    expect(index.search(query, 1).ids).not.toEqual(['doc0']);
    expect(index.search(opposite, 1).ids).toEqual(['doc0']);
    expect(index.search(opposite, 1).scores[0]).toBeCloseTo(1, 6);
    for (let row = 0; row < 100; row++) expect(index.delete(`doc${row}`)).toBe(true);
    expect(index.delete('doc5')).toBe(false);
    expect(index.size).toBe(200);
    expect(index.has('doc5')).toBe(false);
    for (const probe of [query, opposite, vectors.subarray(50 * dimensions, 51 * dimensions)]) {
      const hits = index.search(probe, 50, { ef: 100 });
      expect(hits.ids.length).toBe(50);
      expect(hits.ids.every((id) => Number(id.slice(3)) >= 100)).toBe(true);
    }
  });

  it('rebuilds without tombstones once they reach rebuildRatio', () => {
    const next = random(3);
    const dimensions = 8;
    const vectors = unitVectors(200, dimensions, next);
    const index = build(vectors, dimensions, { rebuildRatio: 0.25 });
    for (let row = 0; row < 49; row++) index.delete(`doc${row}`);
    expect(index.tombstones).toBe(49);
    index.delete('doc49');
    expect(index.tombstones).toBe(0);
    expect(index.size).toBe(150);
    const hits = index.search(vectors.subarray(120 * dimensions, 121 * dimensions), 1);
    expect(hits.ids).toEqual(['doc120']);
  });

  it('serializes and deserializes to the same graph', () => {
    const next = random(4);
    const dimensions = 12;
    const vectors = unitVectors(500, dimensions, next);
    const index = build(vectors, dimensions, { rebuildRatio: 0.9 });
    index.delete('doc7');
    const bytes = index.serialize();
    const copy = HnswIndex.deserialize(bytes);
    expect(copy.size).toBe(499);
    expect(copy.tombstones).toBe(1);
    expect(copy.has('doc7')).toBe(false);
    for (let probe = 0; probe < 20; probe++) {
      const query = unitVectors(1, dimensions, next);
      expect(copy.search(query, 10, { ef: 40 })).toEqual(index.search(query, 10, { ef: 40 }));
    }
    // Same inserts, same seed: the same bytes, and adds after a round trip continue the same way.
    expect(Buffer.from(build(vectors, dimensions, { rebuildRatio: 0.9 }).serialize()).equals(Buffer.from(build(vectors, dimensions, { rebuildRatio: 0.9 }).serialize()))).toBe(true);
    const extra = unitVectors(1, dimensions, next);
    index.add('extra', extra);
    copy.add('extra', extra);
    expect(Buffer.from(copy.serialize()).equals(Buffer.from(index.serialize()))).toBe(true);
  });

  it('refuses damaged bytes with STORE_CORRUPT', () => {
    const next = random(5);
    const bytes = build(unitVectors(50, 4, next), 4).serialize();
    expectAxonError(() => HnswIndex.deserialize(bytes.slice(0, bytes.length - 9)), 'STORE_CORRUPT');
    const badMagic = bytes.slice();
    badMagic[0] = 0;
    expectAxonError(() => HnswIndex.deserialize(badMagic), 'STORE_CORRUPT');
    // Point a layer-0 neighbour past the last node: the first neighbour slot of the first node.
    const damaged = bytes.slice();
    const view = new DataView(damaged.buffer);
    const headerLength = view.getUint32(8, true);
    let offset = Math.ceil((12 + headerLength) / 8) * 8;
    for (const width of [50, 50, 50 * 4 * 4]) offset += 8 + Math.ceil(width / 8) * 8;
    view.setInt32(offset + 8, 1, true);
    view.setInt32(offset + 8 + 4, 9999, true);
    expectAxonError(() => HnswIndex.deserialize(damaged), 'STORE_CORRUPT');
  });

  it('rejects wrong dimensions, NaN, bad topK and bad options', () => {
    const index = new HnswIndex({ dimensions: 3 });
    expectAxonError(() => index.add('a', [1, 0]), 'DIMENSION_MISMATCH');
    expectAxonError(() => index.add('a', [1, Number.NaN, 0]), 'INVALID_VECTOR');
    index.add('a', [1, 0, 0]);
    expectAxonError(() => index.search([1, 0], 1), 'DIMENSION_MISMATCH');
    expectAxonError(() => index.search([1, 0, 0], 0), 'INVALID_TOP_K');
    expectAxonError(() => new HnswIndex({ dimensions: 3, m: 1 }), 'CONFIG_INVALID');
  });
});
