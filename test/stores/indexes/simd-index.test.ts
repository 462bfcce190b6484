import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assembleKernel, KERNEL_BINARY, KERNEL_SOURCE, kernelModuleSource } from '../../../scripts/build-wasm.ts';
import { SEARCH_KERNEL_BASE64 } from '../../../stores/indexes/simd/search-kernel-binary.ts';
import { int8QueryScale, quantizeRow } from '../../../stores/indexes/simd/int8-quantization.ts';
import { simdScanTopK, SimdVectorSpace } from '../../../stores/indexes/simd/simd-index.ts';
import { scanTopK, type SearchHits } from '../../../stores/indexes/vector-index.ts';
import { expectAxonError } from '../support.ts';

/** A small deterministic generator, so failures reproduce. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function unitVectors(count: number, dimensions: number, next: () => number): Float32Array {
  const vectors = new Float32Array(count * dimensions);
  for (let row = 0; row < count; row++) {
    let sumOfSquares = 0;
    for (let index = 0; index < dimensions; index++) {
      const value = next() - 0.5;
      vectors[row * dimensions + index] = value;
      sumOfSquares += value * value;
    }
    const inverse = 1 / Math.sqrt(sumOfSquares);
    for (let index = 0; index < dimensions; index++) vectors[row * dimensions + index] *= inverse;
  }
  return vectors;
}

function expectSameHits(actual: SearchHits, expected: SearchHits): void {
  expect(Array.from(actual.rows)).toEqual(Array.from(expected.rows));
  for (let rank = 0; rank < expected.scores.length; rank++) expect(Math.abs(actual.scores[rank] - expected.scores[rank])).toBeLessThanOrEqual(1e-5);
  // Stronger than the 1e-5 the contract asks: the re-score repeats scanTopK's float64 arithmetic exactly.
  expect(Array.from(actual.scores)).toEqual(Array.from(expected.scores));
}

/**
 * The rows a plain int8 computation picks: quantise with the same functions, integer dot products, the
 * kernel's float32 rounding, best `wanted` (ties to the lower row), in ascending order.
 */
function int8Candidates(vectors: Float32Array, dimensions: number, query: Float32Array, rows: number[], wanted: number): number[] {
  const stride = Math.ceil(dimensions / 16) * 16;
  const scale = int8QueryScale(query, stride);
  const widened = Array.from(query, (value) => Math.round(value * scale));
  const codes = new Int8Array(dimensions);
  const approximate = (row: number) => {
    const rowScale = quantizeRow(vectors.subarray(row * dimensions, (row + 1) * dimensions), codes);
    let dot = 0;
    for (let index = 0; index < dimensions; index++) dot += codes[index] * widened[index];
    return Math.fround(Math.fround(dot) * Math.fround(rowScale));
  };
  return rows
    .map((row) => ({ row, score: approximate(row) }))
    .sort((left, right) => right.score - left.score || left.row - right.row)
    .slice(0, wanted)
    .map((entry) => entry.row)
    .sort((left, right) => left - right);
}

describe('the committed search kernel', () => {
  it('is what scripts/build-wasm.ts assembles from search-kernel.wat', async () => {
    const assembled = await assembleKernel(readFileSync(KERNEL_SOURCE, 'utf8'));
    const committed = new Uint8Array(Buffer.from(SEARCH_KERNEL_BASE64, 'base64'));
    expect(committed.length).toBe(assembled.length);
    expect(Buffer.from(committed).equals(Buffer.from(assembled))).toBe(true);
    expect(readFileSync(KERNEL_BINARY, 'utf8')).toBe(kernelModuleSource(assembled));
  });
});

describe('SimdVectorSpace.search', () => {
  it('ranks a hand-computed example', () => {
    const space = new SimdVectorSpace({ dimensions: 3 });
    space.append(new Float32Array([1, 0, 0, 0, 1, 0, 0.6, 0.8, 0, 0, 0, 1]));
    const hits = space.search(new Float32Array([0.6, 0.8, 0]), 3);
    expect(Array.from(hits.rows)).toEqual([2, 1, 0]);
    // Float32 inputs: 0.6 and 0.8 are not exact, so the dot products are compared to their float32 values.
    expect(hits.scores[0]).toBeCloseTo(1, 6);
    expect(hits.scores[1]).toBeCloseTo(0.8, 6);
    expect(hits.scores[2]).toBeCloseTo(0.6, 6);
  });

  it('equals scanTopK on many random cases: all rows, row lists, topK past the count, odd dimensions', () => {
    const next = random(7);
    const dimensionChoices = [1, 2, 3, 4, 5, 7, 15, 16, 17, 31, 33, 64, 100, 129];
    for (let trial = 0; trial < 120; trial++) {
      const dimensions = dimensionChoices[trial % dimensionChoices.length];
      const count = Math.floor(next() * 400);
      const vectors = unitVectors(count, dimensions, next);
      const query = unitVectors(1, dimensions, next);
      const topK = [1, 3, 10, 50, count + 5][Math.floor(next() * 5)] || 1;
      const space = new SimdVectorSpace({ dimensions, initialCapacity: 1 + Math.floor(next() * 8) });
      if (count > 0) space.append(vectors);

      expectSameHits(space.search(query, topK), scanTopK(vectors, dimensions, query, null, count, topK));
      // A filtered scan as VectorIndex makes one: matching rows in ascending order, of which the first `used` count.
      const keep = next();
      const subset = Int32Array.from(Array.from({ length: count }, (_, row) => row).filter(() => next() < keep));
      const used = Math.floor(next() * (subset.length + 1));
      expectSameHits(space.search(query, topK, subset, used), scanTopK(vectors, dimensions, query, subset, used, topK));
      expectSameHits(simdScanTopK(vectors, dimensions, query, subset, used, topK), scanTopK(vectors, dimensions, query, subset, used, topK));
      // Rows in any order. With one or two dimensions many scores tie exactly, and scanTopK then keeps the
      // first row it met rather than the lower one, so this is checked where ties do not occur.
      if (dimensions >= 4) {
        const shuffled = Int32Array.from({ length: Math.floor(next() * count) }, () => Math.floor(next() * count));
        expectSameHits(space.search(query, topK, shuffled), scanTopK(vectors, dimensions, query, shuffled, shuffled.length, topK));
      }
    }
  });

  it('breaks ties by the lower row, as scanTopK does, however many rows tie at the cut', () => {
    const dimensions = 8;
    const next = random(11);
    const vectors = new Float32Array(300 * dimensions);
    // Components in {-0.5, 0, 0.5}: many rows are identical or score exactly the same.
    for (let index = 0; index < vectors.length; index++) vectors[index] = Math.floor(next() * 3) / 2 - 0.5;
    for (let index = 0; index < 100 * dimensions; index++) vectors[index] = 0.5;
    const space = new SimdVectorSpace({ dimensions });
    space.append(vectors);
    const query = new Float32Array(dimensions).fill(0.5);
    for (const topK of [1, 10, 40, 99, 100, 101, 150]) {
      const hits = space.search(query, topK);
      expectSameHits(hits, scanTopK(vectors, dimensions, query, null, 300, topK));
      expect(hits.rows[0]).toBe(0);
    }
    expect(Array.from(space.search(query, 5).rows)).toEqual([0, 1, 2, 3, 4]);
  });

  it('finds the exact best row when float32 rounding ties it with many others', () => {
    // Every row scores 0.5 + row × 2^-36: distinct in float64, all exactly 0.5 in float32, so the kernel
    // alone would keep the lowest rows and miss the best (the last) one.
    const rows = 40;
    const vectors = new Float32Array(rows * 2);
    for (let row = 0; row < rows; row++) {
      vectors[row * 2] = 0.5;
      vectors[row * 2 + 1] = row / 64;
    }
    const query = new Float32Array([1, 2 ** -30]);
    const space = new SimdVectorSpace({ dimensions: 2 });
    space.append(vectors);
    const hits = space.search(query, 2);
    expect(Array.from(hits.rows)).toEqual([39, 38]);
    expect(hits.scores[0]).toBe(0.5 + 39 * 2 ** -36);
    expectSameHits(hits, scanTopK(vectors, 2, query, null, rows, 2));
  });

  it('returns nothing for an empty space or an empty row list', () => {
    const space = new SimdVectorSpace({ dimensions: 5 });
    const query = new Float32Array([1, 0, 0, 0, 0]);
    expect(space.search(query, 10).rows.length).toBe(0);
    space.append(new Float32Array([0, 1, 0, 0, 0]));
    expect(space.search(query, 10, new Int32Array(0)).rows.length).toBe(0);
    expect(space.search(query, 10, Int32Array.of(0), 0).scores.length).toBe(0);
    expect(simdScanTopK(new Float32Array(0), 5, query, null, 0, 3).rows.length).toBe(0);
  });

  it('stays equal to scanTopK, and keeps its int8 codes right, over appends, replacements, swap-removals and rebuilds', () => {
    const dimensions = 13;
    const next = random(3);
    const space = new SimdVectorSpace({ dimensions, initialCapacity: 2, quantization: 'int8' });
    let mirror = new Float32Array(0);
    for (let step = 0; step < 60; step++) {
      const batch = unitVectors(1 + Math.floor(next() * 20), dimensions, next);
      expect(space.append(batch)).toBe(mirror.length / dimensions);
      const grown = new Float32Array(mirror.length + batch.length);
      grown.set(mirror);
      grown.set(batch, mirror.length);
      mirror = grown;
      const size = mirror.length / dimensions;
      const replaced = Math.floor(next() * size);
      const vector = unitVectors(1, dimensions, next);
      space.set(replaced, vector);
      mirror.set(vector, replaced * dimensions);
      for (let removal = 0; removal < 3 && mirror.length > 0; removal++) {
        const row = Math.floor(next() * (mirror.length / dimensions));
        const last = mirror.length / dimensions - 1;
        space.swapRemove(row);
        mirror.copyWithin(row * dimensions, last * dimensions, (last + 1) * dimensions);
        mirror = mirror.slice(0, last * dimensions);
      }
      expect(space.size).toBe(mirror.length / dimensions);
      expect(Array.from(space.vectorAt(space.size - 1))).toEqual(Array.from(mirror.subarray(mirror.length - dimensions)));
      const query = unitVectors(1, dimensions, next);
      expectSameHits(space.search(query, 7), scanTopK(mirror, dimensions, query, null, space.size, 7));
      // The int8 codes moved and were replaced with their rows: the kernel picks what a plain computation picks.
      if (space.size > 8) {
        const picked = space.searchApproximate(query, 8, { candidates: 8 }).rows;
        const rows = Array.from({ length: space.size }, (_, row) => row);
        expect(Array.from(picked).sort((left, right) => left - right)).toEqual(int8Candidates(mirror, dimensions, query, rows, 8));
      }
    }
    expect(space.capacity).toBeGreaterThanOrEqual(space.size);
  });

  it('warms up without changing a result, the rows or a search under way with another query (warmUp)', () => {
    const next = random(91);
    const dimensions = 24;
    const vectors = unitVectors(5000, dimensions, next);
    for (const quantization of ['none', 'int8'] as const) {
      const space = new SimdVectorSpace({ dimensions, quantization });
      space.append(vectors);
      const query = unitVectors(1, dimensions, next);
      const before = space.search(query, 7);
      const rowBefore = space.vectorAt(4321).slice();
      space.warmUp();
      expect(space.search(query, 7)).toEqual(before);
      expect(space.vectorAt(4321)).toEqual(rowBefore);
      expect(space.size).toBe(5000);
    }
    const empty = new SimdVectorSpace({ dimensions });
    empty.warmUp();
    expect(empty.search(unitVectors(1, dimensions, next), 3).rows.length).toBe(0);
  });

  it('allocates once for a reserved bulk load', () => {
    const space = new SimdVectorSpace({ dimensions: 4, initialCapacity: 1 });
    space.reserve(1000);
    const bytes = space.memoryBytes;
    space.append(new Float32Array(4000).fill(0.5));
    expect(space.capacity).toBe(1000);
    expect(space.memoryBytes).toBe(bytes);
  });
});

describe('SimdVectorSpace limits and bad input', () => {
  it('refuses rows past the memory limit with an error naming it, and stores nothing', () => {
    const space = new SimdVectorSpace({ dimensions: 256, initialCapacity: 8, memoryLimitBytes: 1 << 20 });
    // 1 MiB holds about 1000 rows of 1 KiB; 2000 cannot fit even without doubling.
    space.append(new Float32Array(256 * 500).fill(0.0625));
    expectAxonError(
      () => space.append(new Float32Array(256 * 1500).fill(0.0625)),
      'CAPACITY_EXCEEDED',
      /need 2\.0 MiB of WebAssembly memory, past this space's limit of 1\.0 MiB/,
    );
    expect(space.size).toBe(500);
    // Doubling past the limit falls back to what fits.
    space.append(new Float32Array(256 * 400).fill(0.0625));
    expect(space.size).toBe(900);
    expect(space.memoryBytes).toBeLessThanOrEqual(1 << 20);
  });

  it('rejects NaN, partial rows, wrong query lengths, bad topK and unknown rows', () => {
    const space = new SimdVectorSpace({ dimensions: 3 });
    expectAxonError(() => space.append(new Float32Array([1, Number.NaN, 0])), 'INVALID_VECTOR', /\[1\] is NaN/);
    expectAxonError(() => space.append(new Float32Array([1, 0])), 'INVALID_VECTOR');
    expect(space.size).toBe(0);
    space.append(new Float32Array([1, 0, 0]));
    expectAxonError(() => space.search(new Float32Array([1, 0]), 1), 'DIMENSION_MISMATCH');
    expectAxonError(() => space.search(new Float32Array([1, Number.POSITIVE_INFINITY, 0]), 1), 'INVALID_VECTOR');
    expectAxonError(() => space.search(new Float32Array([1, 0, 0]), 0), 'INVALID_TOP_K');
    expectAxonError(() => space.search(new Float32Array([1, 0, 0]), 1, Int32Array.of(1)), 'INVALID_INPUT', /rows\[0\] = 1/);
    expectAxonError(() => space.swapRemove(1), 'INVALID_INPUT');
    expectAxonError(() => space.searchApproximate(new Float32Array([1, 0, 0]), 1), 'CAPABILITY_MISSING', /quantization: 'int8'/);
    expectAxonError(() => new SimdVectorSpace({ dimensions: 0 }), 'CONFIG_INVALID');
  });
});

describe('int8 quantisation', () => {
  it('maps the largest component to ±127 and returns the scale back', () => {
    const codes = new Int8Array(4);
    const scale = quantizeRow(new Float32Array([0.5, -0.25, 0.1, 0]), codes);
    expect(Array.from(codes)).toEqual([127, -64, 25, 0]);
    expect(scale).toBeCloseTo(0.5 / 127, 12);
    expect(quantizeRow(new Float32Array(3), new Int8Array(3))).toBe(0);
  });

  it('keeps a whole row of query products inside 32 bits', () => {
    const query = new Float32Array([0.5, -1, 0.25]);
    expect(int8QueryScale(query, 16)).toBe(32_767);
    const wide = int8QueryScale(query, 4096);
    expect(4096 * 127 * wide).toBeLessThan(2 ** 31);
    expect(int8QueryScale(new Float32Array(2), 16)).toBe(0);
  });
});

describe('SimdVectorSpace.searchApproximate (int8 scan, float32 re-rank)', () => {
  it('recalls at least 0.99 of the exact top 50 on random unit vectors', () => {
    const dimensions = 96;
    const count = 20_000;
    const next = random(5);
    const vectors = unitVectors(count, dimensions, next);
    const space = new SimdVectorSpace({ dimensions, quantization: 'int8', initialCapacity: 1024 });
    space.append(vectors);
    let found = 0;
    const queries = 20;
    for (let query = 0; query < queries; query++) {
      const vector = unitVectors(1, dimensions, next);
      const exact = new Set(scanTopK(vectors, dimensions, vector, null, count, 50).rows);
      const approximate = space.searchApproximate(vector, 50);
      expect(approximate.rows.length).toBe(50);
      for (const row of approximate.rows) if (exact.has(row)) found++;
      // Scores are exact for the rows returned, best first.
      for (let rank = 1; rank < 50; rank++) expect(approximate.scores[rank]).toBeLessThanOrEqual(approximate.scores[rank - 1]);
    }
    expect(found / (queries * 50)).toBeGreaterThanOrEqual(0.99);
  });

  it('picks exactly the candidates a plain int8 computation picks: partial blocks, dense and sparse row lists', () => {
    const next = random(21);
    for (const [count, dimensions] of [
      [5, 1],
      [7, 7],
      [33, 16],
      [130, 17],
      [201, 40],
      [64, 100],
    ]) {
      const vectors = unitVectors(count, dimensions, next);
      const space = new SimdVectorSpace({ dimensions, quantization: 'int8', initialCapacity: 3 });
      space.append(vectors);
      const query = unitVectors(1, dimensions, next);
      const expected = (rows: number[], wanted: number) => int8Candidates(vectors, dimensions, query, rows, wanted);
      const all = Array.from({ length: count }, (_, row) => row);
      const lists = [all, all.filter((row) => row % 3 !== 1), all.slice(2, Math.max(3, count - 2)), all.filter((row) => row % 8 < 4)];
      for (const rows of lists) {
        const wanted = Math.max(1, Math.min(rows.length - 1, 9));
        if (wanted >= rows.length) continue;
        // Asking for as many results as candidates returns every candidate (re-ranked): the kernel's choice.
        const hits = space.searchApproximate(query, wanted, { rows: rows === all ? null : Int32Array.from(rows), candidates: wanted });
        expect(Array.from(hits.rows).sort((left, right) => left - right)).toEqual(expected(rows, wanted));
      }
    }
  });

  it('keeps int8 codes in step with swap-removals and filters by row list', () => {
    const dimensions = 20;
    const next = random(9);
    const vectors = unitVectors(600, dimensions, next);
    const space = new SimdVectorSpace({ dimensions, quantization: 'int8', initialCapacity: 4, rerankCandidates: 40 });
    space.append(vectors);
    space.swapRemove(0);
    const mirror = vectors.slice(0, 599 * dimensions);
    mirror.set(vectors.subarray(599 * dimensions), 0);
    const rows = Int32Array.from({ length: 300 }, (_, index) => index * 2);
    const query = unitVectors(1, dimensions, next);
    const exact = scanTopK(mirror, dimensions, query, rows, rows.length, 5);
    const approximate = space.searchApproximate(query, 5, { rows, candidates: 60 });
    expect(Array.from(approximate.rows)).toEqual(Array.from(exact.rows));
    expect(approximate.rows.every((row) => row % 2 === 0)).toBe(true);
    // Asking for every row re-ranks everything: exact.
    expectSameHits(space.searchApproximate(query, 5, { candidates: 10_000 }), scanTopK(mirror, dimensions, query, null, 599, 5));
  });
});
