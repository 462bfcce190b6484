import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeHnsw } from '../../../stores/indexes/hnsw-index-format.ts';
import { HnswIndex } from '../../../stores/indexes/hnsw-index.ts';
import { createMemory, instantiateKernel } from '../../../stores/indexes/simd/wasm-runtime.ts';
import { ScoredHeap } from '../../../stores/indexes/top-k-heap.ts';
import { scanTopK, VectorIndex } from '../../../stores/indexes/vector-index.ts';
import type { Document } from '../../../src/document.ts';
import { expectAxonError, random } from '../support.ts';

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
    // As read from a file: a Buffer, here one that starts partway into its memory.
    const fromFile = Buffer.alloc(bytes.length + 3);
    fromFile.set(bytes, 3);
    const loaded = HnswIndex.deserialize(fromFile.subarray(3));
    expect(Buffer.from(loaded.serialize()).equals(Buffer.from(bytes))).toBe(true);
    expect(copy.size).toBe(499);
    expect(copy.tombstones).toBe(1);
    expect(copy.has('doc7')).toBe(false);
    for (let probe = 0; probe < 20; probe++) {
      const query = unitVectors(1, dimensions, next);
      expect(copy.search(query, 10, { ef: 40 })).toEqual(index.search(query, 10, { ef: 40 }));
    }
    // Same inserts, same seed: the same bytes, and adds after a round trip continue the same way.
    expect(
      Buffer.from(build(vectors, dimensions, { rebuildRatio: 0.9 }).serialize()).equals(
        Buffer.from(build(vectors, dimensions, { rebuildRatio: 0.9 }).serialize()),
      ),
    ).toBe(true);
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

  it('saves without the live vectors and, given them back through vectorOf, answers exactly as the original', () => {
    for (let trial = 0; trial < 12; trial++) {
      const next = random(100 + trial);
      const dimensions = [1, 3, 8, 17, 33, 64][trial % 6];
      const count = 40 + Math.floor((next() + 0.5) * 300);
      const index = new HnswIndex({ dimensions, m: 4 + (trial % 3) * 4, efConstruction: 32, rebuildRatio: 0.9, initialCapacity: 8, seed: trial });
      // Plain arrays of float64 values: vectorOf hands back the same arrays, which must be rounded as add rounds them.
      const current = new Map<string, number[]>();
      for (let step = 0; step < count; step++) {
        const roll = next() + 0.5;
        const live = [...current.keys()];
        if (roll < 0.1 && live.length > 0) {
          const id = live[Math.floor((next() + 0.5) * live.length)];
          index.delete(id);
          current.delete(id);
        } else {
          // A fifth of the adds replace an id that exists.
          const id = roll < 0.3 && live.length > 0 ? live[Math.floor((next() + 0.5) * live.length)] : `doc${step}`;
          const vector = Array.from({ length: dimensions }, () => next() * 3);
          index.add(id, vector);
          current.set(id, vector);
        }
      }
      // Adds reuse free slots, so a few deletes last leave some free.
      for (const id of [...current.keys()].slice(0, 3)) {
        index.delete(id);
        current.delete(id);
      }
      expect(index.tombstones).toBeGreaterThan(0);
      const all = index.serialize();
      const withoutLive = index.serialize({ vectors: 'deleted' });
      expect(withoutLive.length).toBeLessThan(all.length);
      const asked: string[] = [];
      const vectorOf = (id: string) => {
        asked.push(id);
        return current.get(id);
      };
      // As read from a file: a Buffer that starts partway into its memory.
      const fromFile = Buffer.alloc(withoutLive.length + 5);
      fromFile.set(withoutLive, 5);
      const loaded = HnswIndex.deserialize(fromFile.subarray(5), { vectorOf });
      expect(asked.sort()).toEqual([...current.keys()].sort());
      const fromAll = HnswIndex.deserialize(all, {
        vectorOf: () => {
          throw new Error('vectorOf is not called for bytes with all vectors');
        },
      });
      for (const copy of [loaded, fromAll]) {
        expect(copy.size).toBe(index.size);
        expect(copy.tombstones).toBe(index.tombstones);
        expect([...copy.ids()]).toEqual([...index.ids()]);
        expect(Buffer.from(copy.serialize()).equals(Buffer.from(all))).toBe(true);
        expect(Buffer.from(copy.serialize({ vectors: 'deleted' })).equals(Buffer.from(withoutLive))).toBe(true);
      }
      for (let probe = 0; probe < 25; probe++) {
        const query = Array.from({ length: dimensions }, () => next());
        const topK = 1 + Math.floor((next() + 0.5) * 20);
        const ef = topK + Math.floor((next() + 0.5) * 60);
        const expected = index.search(query, topK, { ef });
        expect(loaded.search(query, topK, { ef })).toEqual(expected);
        expect(fromAll.search(query, topK, { ef })).toEqual(expected);
      }
      // Adds after the round trip continue the same way.
      const extra = Array.from({ length: dimensions }, () => next());
      index.add('extra', extra);
      loaded.add('extra', extra);
      expect(Buffer.from(loaded.serialize()).equals(Buffer.from(index.serialize()))).toBe(true);
    }
  });

  it('loads a node whose vector is gone as a tombstone that is never returned', () => {
    const next = random(11);
    const dimensions = 8;
    const vectors = unitVectors(300, dimensions, next);
    const index = build(vectors, dimensions, { rebuildRatio: 0.9 });
    index.delete('doc3');
    const bytes = index.serialize({ vectors: 'deleted' });
    const vectorOf = (id: string) =>
      Number(id.slice(3)) % 10 === 0 ? undefined : vectors.subarray(Number(id.slice(3)) * dimensions, (Number(id.slice(3)) + 1) * dimensions);
    const loaded = HnswIndex.deserialize(bytes, { vectorOf });
    expect(loaded.tombstones).toBe(1 + 30);
    expect(loaded.size).toBe(299 - 30);
    expect(loaded.has('doc10')).toBe(false);
    expect([...loaded.ids()]).toEqual([...index.ids()].filter((id) => Number(id.slice(3)) % 10 !== 0));
    expect(loaded.delete('doc10')).toBe(false);
    for (let row = 0; row < 300; row += 10) {
      const hits = loaded.search(vectors.subarray(row * dimensions, (row + 1) * dimensions), 20, { ef: 60 });
      expect(hits.ids.length).toBe(20);
      expect(hits.ids.some((id) => Number(id.slice(3)) % 10 === 0 || id === 'doc3')).toBe(false);
      // A live neighbour of the gone node is still found through the graph.
      const live = row + 1 === 3 ? 4 : row + 1;
      expect(loaded.search(vectors.subarray(live * dimensions, (live + 1) * dimensions), 1).ids).toEqual([`doc${live}`]);
    }
    // The tombstones are saved and loaded as such, and the id can be added again.
    const again = HnswIndex.deserialize(loaded.serialize({ vectors: 'deleted' }), { vectorOf });
    expect(again.tombstones).toBe(31);
    again.add('doc10', vectors.subarray(10 * dimensions, 11 * dimensions));
    expect(again.search(vectors.subarray(10 * dimensions, 11 * dimensions), 1).ids).toEqual(['doc10']);
    // Every live vector gone: an empty index that still holds the graph.
    const empty = HnswIndex.deserialize(bytes, { vectorOf: () => undefined });
    expect(empty.size).toBe(0);
    expect(empty.tombstones).toBe(300);
    expect(empty.search(vectors.subarray(0, dimensions), 5).ids).toEqual([]);
  });

  it('refuses bytes without live vectors when vectorOf is missing or supplies a bad vector', () => {
    const next = random(12);
    const dimensions = 6;
    const vectors = unitVectors(60, dimensions, next);
    const index = build(vectors, dimensions, { rebuildRatio: 0.9 });
    index.delete('doc1');
    const bytes = index.serialize({ vectors: 'deleted' });
    const vectorOf = (id: string) => vectors.subarray(Number(id.slice(3)) * dimensions, (Number(id.slice(3)) + 1) * dimensions);
    expectAxonError(() => HnswIndex.deserialize(bytes), 'INVALID_OPTION', /without the vectors of their live nodes/);
    expectAxonError(() => HnswIndex.deserialize(bytes, { vectorOf: 'nope' as unknown as () => undefined }), 'INVALID_OPTION');
    expectAxonError(
      () => HnswIndex.deserialize(bytes, { vectorOf: (id) => (id === 'doc40' ? [1, 2, 3] : vectorOf(id)) }),
      'DIMENSION_MISMATCH',
      /doc40.*6 values, got 3/,
    );
    expectAxonError(
      () =>
        HnswIndex.deserialize(bytes, {
          vectorOf: (id) =>
            id === 'doc7' ? Float32Array.from(vectorOf(id), (value, position) => (position === 2 ? Number.POSITIVE_INFINITY : value)) : vectorOf(id),
        }),
      'INVALID_VECTOR',
    );
    expectAxonError(
      () =>
        HnswIndex.deserialize(bytes, {
          vectorOf: (id) => (id === 'doc7' ? Array.from(vectorOf(id), (value, position) => (position === 5 ? Number.NaN : value)) : vectorOf(id)),
        }),
      'INVALID_VECTOR',
    );
    expectAxonError(() => index.serialize({ vectors: 'live' as 'all' }), 'INVALID_OPTION');
    expect(HnswIndex.deserialize(bytes, { vectorOf }).size).toBe(59);
  });

  it('refuses truncated or inconsistent bytes without live vectors with STORE_CORRUPT', () => {
    const next = random(13);
    const dimensions = 5;
    const vectors = unitVectors(80, dimensions, next);
    const index = build(vectors, dimensions, { rebuildRatio: 0.9 });
    for (const row of [2, 9, 40]) index.delete(`doc${row}`);
    const bytes = index.serialize({ vectors: 'deleted' });
    const vectorOf = (id: string) => vectors.subarray(Number(id.slice(3)) * dimensions, (Number(id.slice(3)) + 1) * dimensions);
    for (let length = 0; length < bytes.length; length += 1 + Math.floor(bytes.length / 97)) {
      expectAxonError(() => HnswIndex.deserialize(bytes.slice(0, length), { vectorOf }), 'STORE_CORRUPT');
    }
    expectAxonError(() => HnswIndex.deserialize(bytes.slice(0, bytes.length - 1), { vectorOf }), 'STORE_CORRUPT');
    const view = new DataView(bytes.buffer);
    const headerLength = view.getUint32(8, true);
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + headerLength)));
    expect(header.vectors).toBe('deleted');
    const deletedFlags = Math.ceil((12 + headerLength) / 8) * 8 + 8 + Math.ceil(80 / 8) * 8 + 8;
    // A fourth deleted flag: the order section then lists a free slot among the live nodes.
    const oneMoreDeleted = bytes.slice();
    expect(oneMoreDeleted[deletedFlags + 50]).toBe(0);
    oneMoreDeleted[deletedFlags + 50] = 1;
    expectAxonError(() => HnswIndex.deserialize(oneMoreDeleted, { vectorOf }), 'STORE_CORRUPT', /order section/);
    const badFlag = bytes.slice();
    badFlag[deletedFlags + 2] = 7;
    expectAxonError(() => HnswIndex.deserialize(badFlag, { vectorOf }), 'STORE_CORRUPT', /deleted flag/);
    // The header of the other form over the same sections.
    const relabelled = new TextEncoder().encode(JSON.stringify({ ...header, vectors: 'all' }).padEnd(headerLength, ' '));
    expect(relabelled.length).toBe(headerLength);
    const allLabel = bytes.slice();
    allLabel.set(relabelled, 12);
    expectAxonError(() => HnswIndex.deserialize(allLabel, { vectorOf }), 'STORE_CORRUPT', /vectors section/);
  });

  it('reads the version-2 format, unlinking its tombstones as deletes now do', () => {
    const next = random(14);
    const dimensions = 8;
    const vectors = unitVectors(300, dimensions, next);
    const index = build(vectors, dimensions, { rebuildRatio: 0.9 });
    const tombstones = [5, 17, 40, 41, 42, 200];
    // Version 2 kept deleted nodes linked, as tombstones; one of them shares its id with a live node (replaced).
    for (const form of ['all', 'deleted'] as const) {
      const bytes = toVersion2(index.serialize(), tombstones, form, { 42: 'doc7' });
      const vectorOf = (id: string) => vectors.subarray(Number(id.slice(3)) * dimensions, (Number(id.slice(3)) + 1) * dimensions);
      const loaded = HnswIndex.deserialize(bytes, { vectorOf });
      expect(loaded.size).toBe(294);
      expect(loaded.tombstones).toBe(6);
      expect(loaded.has('doc5')).toBe(false);
      expect(loaded.has('doc7')).toBe(true);
      for (let row = 0; row < 300; row += 9) {
        const hits = loaded.search(vectors.subarray(row * dimensions, (row + 1) * dimensions), 10, { ef: 60 });
        expect(hits.ids.some((id) => tombstones.includes(Number(id.slice(3))) && id !== 'doc7')).toBe(false);
        if (!tombstones.includes(row)) expect(hits.ids[0]).toBe(`doc${row}`);
      }
      // Unlinked: no neighbour of a tombstone links back to it, and no list above layer 0 names it.
      const { header, sections } = decodeHnsw(loaded.serialize(), 'test');
      const slots = 2 * header.m + 1;
      const layerZero = (node: number) => Array.from(sections.layerZero.subarray(node * slots + 1, node * slots + 1 + sections.layerZero[node * slots]));
      for (const tombstone of tombstones) {
        for (const neighbour of layerZero(tombstone)) if (!sections.deleted[neighbour]) expect(layerZero(neighbour)).not.toContain(tombstone);
      }
      for (let at = 0; at < sections.upperLayers.length; at += header.m + 1) {
        const list = Array.from(sections.upperLayers.subarray(at + 1, at + 1 + sections.upperLayers[at]));
        for (const tombstone of tombstones) expect(list).not.toContain(tombstone);
      }
      // Saved again, it is version 3, and the next add takes a freed slot.
      expect(new TextDecoder().decode(loaded.serialize().subarray(0, 8))).toBe('AXHNSW03');
      loaded.add('new', vectorOf('doc5'));
      expect(loaded.tombstones).toBe(5);
      expect(loaded.search(vectorOf('doc5'), 1).ids).toEqual(['new']);
    }
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

  it('returns the float64 scores of the exact scan for the rows it finds', () => {
    const next = random(6);
    const dimensions = 37;
    const vectors = unitVectors(400, dimensions, next);
    const index = build(vectors, dimensions);
    const query = unitVectors(1, dimensions, next);
    const exact = scanTopK(vectors, dimensions, query, null, 400, 400);
    const exactScore = new Map(Array.from(exact.rows, (row, rank) => [`doc${row}`, exact.scores[rank]]));
    const hits = index.search(query, 20, { ef: 100 });
    expect(hits.ids.length).toBe(20);
    hits.ids.forEach((id, rank) => expect(hits.scores[rank]).toBe(exactScore.get(id)));
    for (let rank = 1; rank < 20; rank++) expect(hits.scores[rank]).toBeLessThanOrEqual(hits.scores[rank - 1]);
  });

  it('lists the live ids, in the order they were added', () => {
    const index = new HnswIndex({ dimensions: 2, initialCapacity: 2, rebuildRatio: 1 });
    for (const id of ['a', 'b', 'c', 'd']) index.add(id, [1, id.charCodeAt(0)]);
    index.delete('b');
    index.add('a', [0, 1]);
    expect([...index.ids()]).toEqual(['c', 'd', 'a']);
    // b's slot is free; a's old slot went to its new vector.
    expect(index.tombstones).toBe(1);
    expect([...HnswIndex.deserialize(index.serialize()).ids()]).toEqual(['c', 'd', 'a']);
  });

  it('counts its WebAssembly memory in memoryBytes and keeps the graph through growth', () => {
    const dimensions = 100;
    const small = new HnswIndex({ dimensions, initialCapacity: 1 });
    const large = new HnswIndex({ dimensions, initialCapacity: 1000 });
    // 100 floats pad to 112 (448 bytes a row); layer 0 adds 65 ints a node. Outside the memory, the index
    // holds a few KiB: these bytes are the WebAssembly memory's.
    expect(large.memoryBytes).toBeGreaterThan(1000 * (448 + 65 * 4));
    const next = random(7);
    const vectors = unitVectors(300, dimensions, next);
    for (let row = 0; row < 300; row++) small.add(`doc${row}`, vectors.subarray(row * dimensions, (row + 1) * dimensions));
    expect(small.memoryBytes).toBeGreaterThan(300 * (448 + 65 * 4));
    for (let row = 0; row < 300; row += 37) expect(small.search(vectors.subarray(row * dimensions, (row + 1) * dimensions), 1).ids).toEqual([`doc${row}`]);
  });

  it('refuses with CAPACITY_EXCEEDED past its memory limit and stores nothing', () => {
    const dimensions = 1536;
    const limit = 2 ** 20;
    // Any tombstone triggers a rebuild, so a delete frees its node at once.
    const index = new HnswIndex({ dimensions, m: 4, efConstruction: 16, initialCapacity: 4, memoryLimitBytes: limit, rebuildRatio: 0.001 });
    const next = random(8);
    const vectors = unitVectors(200, dimensions, next);
    const vectorOf = (row: number) => vectors.subarray(row * dimensions, (row + 1) * dimensions);
    let stored = 0;
    let refusal: unknown;
    try {
      for (; stored < 200; stored++) index.add(`doc${stored}`, vectorOf(stored));
    } catch (error) {
      refusal = error;
    }
    // 1 MiB holds about 160 rows of 6 KiB: some were stored, and growth stopped at the limit, not before it.
    expect(stored).toBeGreaterThan(140);
    expect(stored).toBeLessThan(200);
    expectAxonError(
      () => {
        throw refusal;
      },
      'CAPACITY_EXCEEDED',
      /past this index's limit of 1\.00 MiB \(one 32-bit WebAssembly memory addresses at most 4 GiB\)\. Nothing was stored\./,
    );
    expect(index.size).toBe(stored);
    expect(index.has(`doc${stored}`)).toBe(false);
    expect(index.memoryBytes - (index.memoryBytes % 65_536)).toBeLessThanOrEqual(limit + 65_536);
    // Replacing an id also needs a new node: refused, the old vector stays.
    expectAxonError(() => index.add('doc0', vectorOf(199)), 'CAPACITY_EXCEEDED');
    expect(index.search(vectorOf(0), 1).ids).toEqual(['doc0']);
    expect(index.search(vectorOf(0), 1).scores[0]).toBeCloseTo(1, 6);
    // Deleting makes room again (the rebuild drops the tombstone), and a saved index loads only under a limit that holds it.
    index.delete('doc1');
    index.add('doc1', vectorOf(1));
    expect(index.search(vectorOf(1), 1).ids).toEqual(['doc1']);
    expectAxonError(() => HnswIndex.deserialize(index.serialize(), { memoryLimitBytes: limit / 2 }), 'CAPACITY_EXCEEDED');
    expect(HnswIndex.deserialize(index.serialize(), { memoryLimitBytes: limit }).size).toBe(stored);
  });
});

function documents(prefix: string, vectors: Float32Array, dimensions: number, first = 0): Document[] {
  return Array.from({ length: vectors.length / dimensions }, (_, row) => ({
    id: `${prefix}${first + row}`,
    content: '',
    sourceType: 'test',
    sourceName: 'test',
    score: 0,
    metadata: {},
    embedding: vectors.subarray(row * dimensions, (row + 1) * dimensions),
  }));
}

describe('HnswIndex.over (the vectors of a VectorIndex, read in place)', () => {
  /** The same writes to a graph over a VectorIndex and to a graph with its own copy, in the order FileStore makes them. */
  function twins(dimensions: number, m: number) {
    const options = { dimensions, m, efConstruction: 40, rebuildRatio: 0.3, seed: 5 };
    const vectors = new VectorIndex({ initialCapacity: 4 });
    const over = HnswIndex.over(vectors, options);
    const own = new HnswIndex({ ...options, initialCapacity: 4 });
    return {
      vectors,
      over,
      own,
      /** Link a batch (staged in the shared memory), then store it, as a FileStore write does. */
      add(batch: Document[]) {
        const prepared = vectors.prepare(batch);
        prepared.documents.forEach((document, position) => {
          const vector = prepared.vectors.subarray(position * dimensions, (position + 1) * dimensions);
          over.add(document.id, vector);
          own.add(document.id, vector);
        });
        vectors.insert(prepared);
      },
      delete(ids: string[]) {
        for (const id of ids) {
          over.delete(id);
          own.delete(id);
        }
        vectors.delete(ids);
      },
    };
  }

  it('builds the graph a copy of the vectors builds, follows the rows deletes move, and answers alike', () => {
    for (const dimensions of [24, 64]) {
      const next = random(40 + dimensions);
      const { vectors, over, own, add, delete: remove } = twins(dimensions, 8);
      add(documents('a', unitVectors(300, dimensions, next), dimensions));
      // Deletes move the last rows into the holes; replacements and new ids reuse the free slots.
      remove(Array.from({ length: 60 }, (_, index) => `a${index * 5}`));
      add(documents('a', unitVectors(20, dimensions, next), dimensions, 1));
      add(documents('b', unitVectors(150, dimensions, next), dimensions));
      remove(['b3', 'a7', 'b149']);
      expect(over.size).toBe(vectors.size);
      // The same graph, vectors and ids; only the order the live ids are listed in differs (node order
      // over a VectorIndex, which keeps no map of its own, against the order they were added).
      const mine = decodeHnsw(over.serialize(), 'test');
      const theirs = decodeHnsw(own.serialize(), 'test');
      expect(mine.header).toEqual(theirs.header);
      for (const section of ['levels', 'deleted', 'vectors', 'layerZero', 'upperLayers'] as const)
        expect(mine.sections[section]).toEqual(theirs.sections[section]);
      expect([...over.ids()].sort()).toEqual([...own.ids()].sort());
      expect([...over.ids()].sort()).toEqual(vectors.idsOfSource('test').sort());
      for (let probe = 0; probe < 30; probe++) {
        const query = unitVectors(1, dimensions, next);
        const topK = 1 + (probe % 12);
        const ef = topK + ((probe * 7) % 50);
        expect(over.search(query, topK, { ef })).toEqual(own.search(query, topK, { ef }));
        // searchRows: the exact scan over the walk's candidate rows, from one walk.
        const candidates = own.search(query, ef, { ef }).ids.map((id) => vectors.rowOf(id)!);
        const expected = vectors.searchRows(query, { topK, rows: Int32Array.from(candidates) });
        const hits = over.searchRows((target) => vectors.unitQueryInto(query, target), topK, ef);
        expect(Array.from(hits.rows)).toEqual(Array.from(expected.rows));
        expect(Array.from(hits.scores)).toEqual(Array.from(expected.scores));
      }
    }
  });

  it('walks through a staged vector but returns it only once the index stores it', () => {
    const dimensions = 16;
    const next = random(50);
    const vectors = new VectorIndex();
    const graph = HnswIndex.over(vectors, { dimensions, m: 6, efConstruction: 32 });
    const stored = vectors.prepare(documents('s', unitVectors(100, dimensions, next), dimensions));
    stored.documents.forEach((document, position) => graph.add(document.id, stored.vectors.subarray(position * dimensions, (position + 1) * dimensions)));
    vectors.insert(stored);
    const staged = vectors.prepare(documents('new', unitVectors(1, dimensions, next), dimensions));
    graph.add('new0', staged.vectors);
    expect(graph.size).toBe(101);
    expect(graph.search(staged.vectors, 5).ids).not.toContain('new0');
    expect(graph.searchRows((target) => target.set(staged.vectors), 5, 20).rows.length).toBe(5);
    vectors.insert(staged);
    expect(graph.search(staged.vectors, 1).ids).toEqual(['new0']);
    const hits = graph.searchRows((target) => target.set(staged.vectors), 1, 20);
    expect(vectors.storedDocumentAt(hits.rows[0]).id).toBe('new0');
    expect(hits.scores[0]).toBeCloseTo(1, 6);
  });

  it('keeps no copy of the vectors: one memory for both, about half the bytes of a graph with its own', () => {
    const dimensions = 384;
    const next = random(51);
    const vectors = new VectorIndex({ initialCapacity: 500 });
    const batch = vectors.prepare(documents('d', unitVectors(500, dimensions, next), dimensions));
    vectors.insert(batch);
    const graph = HnswIndex.over(vectors, { dimensions, m: 16, efConstruction: 32 });
    for (let row = 0; row < vectors.size; row++) graph.addRow(vectors.storedDocumentAt(row).id, row);
    const own = new HnswIndex({ dimensions, m: 16, efConstruction: 32, initialCapacity: 500 });
    for (let row = 0; row < 500; row++) own.add(`d${row}`, batch.vectors.subarray(row * dimensions, (row + 1) * dimensions));
    const space = vectors.sharedVectors(dimensions);
    // The graph's region is part of the vectors' memory, sized for as many nodes as the rows that fit: 33
    // neighbour slots a node and a few more words, no vector.
    expect(graph.memoryBytes).toBeLessThan(space.capacity * (33 * 4 + 64) + 256 * 17 * 4);
    expect(space.shared.tenantBytes).toBeGreaterThan(0);
    expect(own.memoryBytes).toBeGreaterThan(500 * dimensions * 4);
    expect(space.memoryBytes + graph.memoryBytes - space.shared.tenantBytes).toBeLessThan(
      0.65 * (space.memoryBytes - space.shared.tenantBytes + own.memoryBytes),
    );
    // Growing the vectors moves the graph with them.
    const more = vectors.prepare(documents('e', unitVectors(700, dimensions, next), dimensions));
    more.documents.forEach((document, position) => graph.add(document.id, more.vectors.subarray(position * dimensions, (position + 1) * dimensions)));
    vectors.insert(more);
    for (const row of [0, 250, 499, 600, 1199]) {
      const query = vectors.vectorAt(row).slice();
      expect(graph.search(query, 1).ids).toEqual([vectors.storedDocumentAt(row).id]);
    }
  });

  it('loads a saved graph over the vectors, deleting the nodes whose documents are gone', () => {
    const dimensions = 12;
    const next = random(52);
    const { vectors, over, add, delete: remove } = twins(dimensions, 6);
    add(documents('d', unitVectors(400, dimensions, next), dimensions));
    remove(['d3', 'd17']);
    const bytes = over.serialize({ vectors: 'deleted' });
    // A new load of the store: the vectors again, without two more documents deleted since.
    const reloaded = new VectorIndex();
    reloaded.insert(reloaded.prepare([...vectors.documentsOfSource('test')].filter((document) => document.id !== 'd40' && document.id !== 'd41')));
    const loaded = HnswIndex.deserialize(bytes, { over: reloaded });
    expect(loaded.size).toBe(396);
    expect(loaded.has('d40')).toBe(false);
    for (let probe = 0; probe < 20; probe++) {
      const query = unitVectors(1, dimensions, next);
      const hits = loaded.searchRows((target) => reloaded.unitQueryInto(query, target), 10, 40);
      expect(hits.rows.length).toBe(10);
      expect(Array.from(hits.rows, (row) => reloaded.storedDocumentAt(row).id)).toEqual(loaded.search(query, 10, { ef: 40 }).ids);
    }
    expect(loaded.search(reloaded.vectorAt(reloaded.rowOf('d100')!), 1).ids).toEqual(['d100']);
  });

  it('refuses with CAPACITY_EXCEEDED when the vectors and the graph would pass one memory, storing nothing', () => {
    const dimensions = 64;
    const limit = 4 * 65_536;
    // One memory now holds what two held (the vectors, and a graph with its copy of them): nearly as many
    // documents as a graph alone held, the scan's scratch lists costing the difference.
    const most = HnswIndex.maxNodes(dimensions, { m: 8, efConstruction: 32, memoryLimitBytes: limit, sharedWith: { int8: false } });
    expect(most).toBeGreaterThan(0.9 * HnswIndex.maxNodes(dimensions, { m: 8, efConstruction: 32, memoryLimitBytes: limit }));
    const vectors = new VectorIndex({ initialCapacity: 1 });
    const graph = HnswIndex.over(vectors, { dimensions, m: 8, efConstruction: 32, memoryLimitBytes: limit });
    const next = random(53);
    const batch = vectors.prepare(documents('d', unitVectors(most + 50, dimensions, next), dimensions));
    let linked = 0;
    let refusal: unknown;
    try {
      for (; linked < batch.documents.length; linked++)
        graph.add(batch.documents[linked].id, batch.vectors.subarray(linked * dimensions, (linked + 1) * dimensions));
    } catch (error) {
      refusal = error;
    }
    expectAxonError(
      () => {
        throw refusal;
      },
      'CAPACITY_EXCEEDED',
      /Nothing was stored/,
    );
    expect(linked).toBeGreaterThan(most * 0.9);
    expect(linked).toBeLessThanOrEqual(most);
    expect(graph.size).toBe(linked);
    expect(vectors.sharedVectors(dimensions).memoryBytes).toBeLessThanOrEqual(limit);
  });
});

/**
 * A memory laid out for the HNSW kernel exports: rows `stride` bytes apart from `vectors`, scratch regions
 * before them, and the graph configured over them with every node at the row of its number.
 */
function kernelFixture(rows: number, dimensions: number, next: () => number) {
  const stride = Math.ceil((dimensions * 4) / 64) * 64;
  const align = (bytes: number) => Math.ceil(bytes / 64) * 64;
  const m = 8;
  const layout = {
    query: 0,
    list: stride,
    outRows: stride + 4096,
    outScores: stride + 8192,
    entries: stride + 12_288,
    nodeTable: stride + 16_384,
    vectors: stride + 16_384 + align(rows * 8),
  };
  const memory = createMemory(Math.ceil((layout.vectors + rows * stride + 64) / 65_536) + 1);
  const kernel = instantiateKernel(memory);
  const floats = new Float32Array(memory.buffer);
  const ints = new Int32Array(memory.buffer);
  const values = unitVectors(rows + 1, dimensions, next);
  floats.set(values.subarray(rows * dimensions), layout.query / 4);
  for (let row = 0; row < rows; row++) floats.set(values.subarray(row * dimensions, (row + 1) * dimensions), (layout.vectors + row * stride) / 4);
  // Each node's 8-byte entry: its row (and flag 0, live), then its visit mark.
  for (let row = 0; row < rows; row++) ints[layout.nodeTable / 4 + 2 * row] = row;
  // Only the vectors and the node table are read by what these tests call; the rest points at scratch past the vectors.
  const scratch = layout.vectors + rows * stride;
  kernel.hnsw_configure(layout.vectors, stride, dimensions, layout.nodeTable, rows, scratch, m, scratch, scratch, scratch, scratch, scratch, scratch, scratch);
  const rowAddress = (row: number) => layout.vectors + row * stride;
  /** The float64 dot product of two rows at byte addresses, and the sum of the absolute products (for the rounding bound). */
  const reference = (left: number, right: number) => {
    let sum = 0;
    let magnitude = 0;
    for (let index = 0; index < dimensions; index++) {
      const product = floats[left / 4 + index] * floats[right / 4 + index];
      sum += product;
      magnitude += Math.abs(product);
    }
    return { sum, magnitude };
  };
  return { kernel, floats, ints, stride, layout, rowAddress, reference };
}

/** Write `rows` as i32 at byte `address`. */
function writeRows(ints: Int32Array, address: number, rows: number[]): void {
  ints.set(rows, address / 4);
}

/** Write (node, f32 score) entries, as the kernel's heaps and pools hold them, at byte `address`. */
function writeEntries(memory: { ints: Int32Array; floats: Float32Array }, address: number, entries: { row: number; score: number }[]): void {
  entries.forEach(({ row, score }, index) => {
    memory.ints[address / 4 + 2 * index] = row;
    memory.floats[address / 4 + 2 * index + 1] = score;
  });
}

/**
 * The float32 score the kernel's $dot_pair computes, in JavaScript: two four-lane sums over 8 floats a step
 * (positions 0-3 and 4-7 of each step), added lane by lane, then lanes (0 + 2) + (1 + 3). Every operation
 * rounds to float32 (a float64 sum or product of two float32 values rounds to the correctly rounded float32).
 */
function kernelScore(vector: Float32Array, query: Float32Array): number {
  const lanes = new Float32Array(8);
  for (let index = 0; index < vector.length; index++) lanes[index % 8] = Math.fround(lanes[index % 8] + Math.fround(vector[index] * query[index]));
  const low = Array.from({ length: 4 }, (_, lane) => Math.fround(lanes[lane] + lanes[lane + 4]));
  return Math.fround(Math.fround(low[0] + low[2]) + Math.fround(low[1] + low[3]));
}

/**
 * The graph walk as the TypeScript implementation that preceded the kernel's ran it (the reference the
 * kernel must agree with), over a graph decoded from `serialize()`: a greedy descent through the upper
 * layers, a best-first search of layer 0 with ScoredHeap's tie rules, and an exact re-score of the best
 * `topK`. Deleted nodes (free slots, unlinked) are passed over wherever a list still names them.
 */
function referenceSearch(bytes: Uint8Array, query: Float32Array, topK: number, ef: number): { ids: string[]; scores: number[] } {
  const { header, sections } = decodeHnsw(bytes, 'reference');
  const { dimensions, m, nodes } = header;
  // The vectors section holds the live nodes' vectors, in node order.
  const vectorRow = new Int32Array(nodes).fill(-1);
  for (let node = 0, row = 0; node < nodes; node++) if (!sections.deleted[node]) vectorRow[node] = row++;
  const vectorOf = (node: number) => sections.vectors.subarray(vectorRow[node] * dimensions, (vectorRow[node] + 1) * dimensions);
  const upperStart: number[] = [];
  for (let node = 0, offset = 0; node < nodes; node++) {
    upperStart.push(offset);
    offset += sections.levels[node] * (m + 1);
  }
  const neighbours = (node: number, level: number): Int32Array => {
    const list = level === 0 ? sections.layerZero : sections.upperLayers;
    const start = level === 0 ? node * (2 * m + 1) : upperStart[node] + (level - 1) * (m + 1);
    return list.subarray(start + 1, start + 1 + list[start]);
  };
  const score = (node: number) => kernelScore(vectorOf(node), query);
  let entry = header.entryPoint;
  for (let level = header.maxLevel; level > 0; level--) {
    let bestScore = score(entry);
    for (let improved = true; improved; ) {
      improved = false;
      for (const neighbour of neighbours(entry, level)) {
        if (sections.deleted[neighbour]) continue;
        const candidate = score(neighbour);
        if (candidate > bestScore) {
          bestScore = candidate;
          entry = neighbour;
          improved = true;
        }
      }
    }
  }
  const visited = new Set([entry]);
  const frontier = new ScoredHeap(true);
  const nearest = new ScoredHeap(false);
  frontier.push(entry, score(entry));
  nearest.push(entry, score(entry));
  while (frontier.size > 0) {
    if (nearest.size >= ef && frontier.topScore() < nearest.topScore()) break;
    for (const neighbour of neighbours(frontier.pop(), 0)) {
      if (visited.has(neighbour)) continue;
      visited.add(neighbour);
      if (sections.deleted[neighbour]) continue;
      const candidate = score(neighbour);
      if (nearest.size < ef || candidate > nearest.topScore()) {
        frontier.push(neighbour, candidate);
        if (nearest.size < ef) nearest.push(neighbour, candidate);
        else nearest.replaceTop(neighbour, candidate);
      }
    }
  }
  const found: number[] = [];
  while (nearest.size > 0) found.unshift(nearest.pop());
  const best = Int32Array.from(found.slice(0, topK), (node) => vectorRow[node]);
  const exact = scanTopK(sections.vectors, dimensions, query, best, best.length, best.length);
  const nodeOfRow = (row: number) => vectorRow.indexOf(row);
  return { ids: Array.from(exact.rows, (row) => header.ids[nodeOfRow(row)]), scores: Array.from(exact.scores) };
}

/**
 * A version-2 file ("AXHNSW02", the format before deletes unlinked their nodes) of the graph in version-3
 * `bytes` (saved without deletes), with `tombstones` marked deleted but left linked, as version 2 kept
 * them, and ids changed as `ids` says; the vectors section holds every node's vector (`all`) or the
 * tombstones' (`deleted`). Checked against bytes the version-2 writer produced for the same graph.
 */
function toVersion2(bytes: Uint8Array, tombstones: number[], form: 'all' | 'deleted', ids: Record<number, string> = {}): Uint8Array {
  const { header, sections } = decodeHnsw(bytes, 'test');
  const deleted = new Uint8Array(header.nodes);
  for (const node of tombstones) deleted[node] = 1;
  const { version: _version, ...fields } = header;
  const allIds = header.ids.map((id, node) => ids[node] ?? id);
  const vectorOf = (node: number) => Array.from(sections.vectors.subarray(node * header.dimensions, (node + 1) * header.dimensions));
  const vectors = form === 'all' ? sections.vectors : Float32Array.from([...tombstones].sort((left, right) => left - right).flatMap(vectorOf));
  const json = new TextEncoder().encode(JSON.stringify({ version: 2, ...fields, vectors: form, ids: allIds }));
  const parts = [sections.levels, deleted, vectors, sections.layerZero, sections.upperLayers].map(
    (array) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength),
  );
  const pad = (length: number) => Math.ceil(length / 8) * 8;
  let offset = pad(12 + json.length);
  const out = new Uint8Array(parts.reduce((sum, part) => sum + 8 + pad(part.length), offset));
  out.set(new TextEncoder().encode('AXHNSW02'));
  new DataView(out.buffer).setUint32(8, json.length, true);
  out.set(json, 12);
  for (const part of parts) {
    new DataView(out.buffer).setFloat64(offset, part.length, true);
    out.set(part, offset + 8);
    offset += 8 + pad(part.length);
  }
  return out;
}

/** Unit vectors near one of `centres` random directions: structured data, with real near neighbours. */
function clusteredVectors(count: number, dimensions: number, centres: number, next: () => number): Float32Array {
  const middles = unitVectors(centres, dimensions, next);
  const vectors = new Float32Array(count * dimensions);
  for (let row = 0; row < count; row++) {
    const centre = row % centres;
    for (let index = 0; index < dimensions; index++) vectors[row * dimensions + index] = middles[centre * dimensions + index] + 0.15 * next();
  }
  return unitVectors(
    count,
    dimensions,
    (() => {
      let position = 0;
      return () => vectors[position++];
    })(),
  );
}

describe('the HNSW walk in the kernel', () => {
  it('returns what the TypeScript reference walk returns, on random and structured data, with deleted nodes and reused slots', () => {
    const cases = [
      { name: 'random', dimensions: 32, count: 1500, m: 8, next: random(21), structured: false },
      { name: 'structured', dimensions: 64, count: 2000, m: 16, next: random(22), structured: true },
      { name: 'structured, 384 dimensions', dimensions: 384, count: 800, m: 12, next: random(23), structured: true },
    ];
    for (const { dimensions, count, m, next, structured } of cases) {
      const vectors = structured ? clusteredVectors(count, dimensions, 20, next) : unitVectors(count, dimensions, next);
      const index = new HnswIndex({ dimensions, m, efConstruction: 48, initialCapacity: 8, rebuildRatio: 0.9 });
      for (let row = 0; row < count; row++) index.add(`doc${row}`, vectors.subarray(row * dimensions, (row + 1) * dimensions));
      for (let row = 0; row < count; row += 7) index.delete(`doc${row}`);
      // Some of the slots go to new vectors (the links that other nodes kept to them then reach these).
      for (let row = 0; row < count; row += 21)
        index.add(`again${row}`, vectors.subarray(((row + 3) % count) * dimensions, (((row + 3) % count) + 1) * dimensions));
      expect(index.tombstones).toBeGreaterThan(0);
      const bytes = index.serialize();
      for (let probe = 0; probe < 60; probe++) {
        const query = probe % 2 === 0 ? unitVectors(1, dimensions, next) : vectors.subarray(probe * dimensions, (probe + 1) * dimensions);
        const topK = 1 + (probe % 25);
        const ef = topK + ((probe * 13) % 90);
        const hits = index.search(query, topK, { ef });
        const expected = referenceSearch(bytes, query, topK, ef);
        expect(hits.ids).toEqual(expected.ids);
        expect(Array.from(hits.scores)).toEqual(expected.scores);
      }
    }
  });

  it('links the graph the TypeScript implementation it replaced linked, list for list', () => {
    // Digests of the levels, layer 0 and upper layers that the TypeScript insertion (before the kernel took
    // over linking) built from these inputs, recorded from that implementation.
    const recorded = [
      { count: 1200, dimensions: 24, m: 8, digest: 'ba117386dbf4ea2c95a39d5f890a25064dd780083514644f2372a5352e7d4161' },
      { count: 600, dimensions: 100, m: 16, digest: '004280bcf16197c77f3a84902c01a340945d1a5a9fbd574a6e8247ccb2db6359' },
    ];
    for (const { count, dimensions, m, digest } of recorded) {
      const next = random(count + dimensions);
      const index = new HnswIndex({ dimensions, m, efConstruction: 48, initialCapacity: 8 });
      for (let row = 0; row < count; row++)
        index.add(
          `d${row}`,
          Array.from({ length: dimensions }, () => next()),
        );
      const { sections } = decodeHnsw(index.serialize(), 'test');
      const hash = createHash('sha256');
      for (const part of [sections.levels, sections.layerZero, sections.upperLayers])
        hash.update(new Uint8Array(part.buffer, part.byteOffset, part.byteLength));
      expect(hash.digest('hex')).toBe(digest);
    }
  });

  it('scores rows as the JavaScript model of $dot_pair does, bit for bit', () => {
    for (const dimensions of [1, 3, 17, 384]) {
      const { kernel, floats, ints, stride, layout, rowAddress } = kernelFixture(20, dimensions, random(dimensions + 300));
      writeRows(ints, layout.list, [3, 11, 19]);
      kernel.dot_rows(layout.vectors, stride, layout.query, layout.list, 3, layout.outScores);
      const query = floats.slice(layout.query / 4, layout.query / 4 + dimensions);
      [3, 11, 19].forEach((row, index) =>
        expect(floats[layout.outScores / 4 + index]).toBe(kernelScore(floats.slice(rowAddress(row) / 4, rowAddress(row) / 4 + dimensions), query)),
      );
    }
  });
});

describe('search-kernel.wasm HNSW exports', () => {
  const dimensionCases = [1, 3, 17, 384, 1536];

  it('dot_rows scores listed rows as the float64 dot product does, within float32 rounding', () => {
    for (const dimensions of dimensionCases) {
      const next = random(dimensions);
      const { kernel, floats, ints, stride, layout, rowAddress, reference } = kernelFixture(50, dimensions, next);
      // Float32 sums of `dimensions` products in chains of dimensions / 8: a bound on their rounding.
      const tolerance = (magnitude: number) => (dimensions / 8 + 8) * 2 ** -23 * magnitude;
      for (const count of [1, 2, 5, 64]) {
        const rows = Array.from({ length: count }, () => Math.floor((next() + 0.5) * 50));
        writeRows(ints, layout.list, rows);
        kernel.dot_rows(layout.vectors, stride, layout.query, layout.list, count, layout.outScores);
        rows.forEach((row, index) => {
          const { sum, magnitude } = reference(layout.query, rowAddress(row));
          expect(Math.abs(floats[layout.outScores / 4 + index] - sum)).toBeLessThanOrEqual(tolerance(magnitude));
        });
      }
      // A stored row as the query, scoring itself: its squared norm, 1.
      writeRows(ints, layout.list, [7]);
      kernel.dot_rows(layout.vectors, stride, rowAddress(7), layout.list, 1, layout.outScores);
      expect(floats[layout.outScores / 4]).toBeCloseTo(1, 5);
    }
  });

  it('dot_rows gives a row the same score alone, first or second in a pair, and with either row as the query', () => {
    const { kernel, floats, ints, stride, layout, rowAddress } = kernelFixture(10, 384, random(9));
    const scoreOf = (query: number, rows: number[], position: number) => {
      writeRows(ints, layout.list, rows);
      kernel.dot_rows(layout.vectors, stride, query, layout.list, rows.length, layout.outScores);
      return floats[layout.outScores / 4 + position];
    };
    const alone = scoreOf(rowAddress(2), [5], 0);
    expect(scoreOf(rowAddress(2), [5, 8], 0)).toBe(alone);
    expect(scoreOf(rowAddress(2), [8, 5], 1)).toBe(alone);
    expect(scoreOf(rowAddress(2), [8, 1, 5], 2)).toBe(alone);
    expect(scoreOf(rowAddress(5), [2], 0)).toBe(alone);
  });

  it('hnsw_select keeps a candidate only when it is nearer the base than every node kept before it', () => {
    // The base points along x; 1 and 2 lie just either side of it in the xy plane, 3 beyond 1, and 4 rises
    // out of the plane, 53° from the base but further still from 1 and 2.
    const fixture = kernelFixture(5, 3, random(10));
    const { kernel, floats, ints, stride, layout, rowAddress } = fixture;
    [0, 0.1, -0.15, 0.2].forEach((angle, row) => floats.set([Math.cos(angle), Math.sin(angle), 0], rowAddress(row) / 4));
    floats.set([0.6, 0, 0.8], rowAddress(4) / 4);
    const candidates = [0, 1, 2, 3, 4];
    writeRows(ints, layout.list, candidates);
    kernel.dot_rows(layout.vectors, stride, rowAddress(0), layout.list, 5, layout.outScores);
    // Scores against the base, best first: the base itself (skipped), then 1, 2, 3, 4.
    writeEntries(
      fixture,
      layout.entries,
      candidates.map((row, index) => ({ row, score: floats[layout.outScores / 4 + index] })),
    );
    const kept = kernel.hnsw_select(0, layout.entries, 5, 4, layout.outRows);
    // 3 is nearer 1 (0.1 rad) than the base (0.2 rad): dropped. 2 is 0.25 rad from 1 and 0.15 from the base: kept.
    // 4 scores 0.6 against the base, 0.6 cos 0.1 and 0.6 cos 0.15 against 1 and 2: kept.
    expect(Array.from(ints.subarray(layout.outRows / 4, layout.outRows / 4 + kept))).toEqual([1, 2, 4]);
    expect(kernel.hnsw_select(0, layout.entries, 5, 1, layout.outRows)).toBe(1);
    // Rows are found through the row table: the same vectors under other node numbers give the same choice.
    for (let node = 0; node < 5; node++) ints[layout.nodeTable / 4 + 2 * node] = 4 - node;
    writeEntries(
      fixture,
      layout.entries,
      candidates.map((row, index) => ({ row: 4 - row, score: floats[layout.outScores / 4 + index] })),
    );
    const renumbered = kernel.hnsw_select(4, layout.entries, 5, 4, layout.outRows);
    expect(Array.from(ints.subarray(layout.outRows / 4, layout.outRows / 4 + renumbered))).toEqual([3, 2, 0]);
  });

  it('hnsw_select agrees with the heuristic computed from dot_rows scores', () => {
    for (const dimensions of dimensionCases) {
      const next = random(dimensions + 200);
      const rows = 60;
      const fixture = kernelFixture(rows, dimensions, next);
      const { kernel, floats, ints, stride, layout, rowAddress } = fixture;
      const score = (left: number, right: number) => {
        writeRows(ints, layout.outRows, [right]);
        kernel.dot_rows(layout.vectors, stride, rowAddress(left), layout.outRows, 1, layout.outScores);
        return floats[layout.outScores / 4];
      };
      for (const limit of [1, 4, 16]) {
        const base = Math.floor((next() + 0.5) * rows);
        const candidates = Array.from({ length: rows }, (_, row) => ({ row, score: score(base, row) })).sort((left, right) => right.score - left.score);
        const expected: number[] = [];
        for (const candidate of candidates) {
          if (expected.length === limit) break;
          if (candidate.row !== base && expected.every((keptRow) => score(candidate.row, keptRow) <= candidate.score)) expected.push(candidate.row);
        }
        writeEntries(fixture, layout.entries, candidates);
        const kept = kernel.hnsw_select(base, layout.entries, rows, limit, layout.outRows);
        expect(Array.from(ints.subarray(layout.outRows / 4, layout.outRows / 4 + kept))).toEqual(expected);
        expect(expected.length).toBeGreaterThan(0);
      }
    }
  });
});
