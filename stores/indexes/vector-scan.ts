/**
 * The exact top-K scan in plain JavaScript: the reference that `SimdVectorSpace.search` (which `VectorIndex`
 * searches with) must equal row for row and score for score, and the baseline of bench/vector-search.ts.
 */

/** The best rows of a scan, best first, with their cosine scores. */
export interface SearchHits {
  readonly rows: Int32Array;
  readonly scores: Float64Array;
}

/**
 * The scan: dot products of `query` with `count` rows (every row, or the listed `rows`), keeping the best
 * `topK` in a min-heap held in typed arrays. Vectors are unit length, so the dot product is the cosine.
 * Ties keep the row met first: the lower row when `rows` ascends, as a filter's rows do.
 */
export function scanTopK(vectors: Float32Array, dimensions: number, query: Float32Array, rows: Int32Array | null, count: number, topK: number): SearchHits {
  const capacity = Math.min(topK, count);
  const heapRows = new Int32Array(capacity);
  const heapScores = new Float64Array(capacity);
  let heapSize = 0;
  const unrolled = dimensions - (dimensions % 4);
  for (let index = 0; index < count; index++) {
    const row = rows === null ? index : rows[index];
    const base = row * dimensions;
    // Four independent sums let the CPU overlap the multiply-adds instead of waiting on one chain.
    let sum0 = 0;
    let sum1 = 0;
    let sum2 = 0;
    let sum3 = 0;
    let offset = 0;
    for (; offset < unrolled; offset += 4) {
      sum0 += vectors[base + offset] * query[offset];
      sum1 += vectors[base + offset + 1] * query[offset + 1];
      sum2 += vectors[base + offset + 2] * query[offset + 2];
      sum3 += vectors[base + offset + 3] * query[offset + 3];
    }
    for (; offset < dimensions; offset++) sum0 += vectors[base + offset] * query[offset];
    const score = sum0 + sum1 + (sum2 + sum3);
    if (heapSize < capacity) {
      siftUp(heapRows, heapScores, heapSize, row, score);
      heapSize++;
    } else if (score > heapScores[0]) {
      siftDown(heapRows, heapScores, heapSize, row, score);
    }
  }
  const resultRows = new Int32Array(heapSize);
  const resultScores = new Float64Array(heapSize);
  for (let last = heapSize - 1; last >= 0; last--) {
    resultRows[last] = heapRows[0];
    resultScores[last] = heapScores[0];
    siftDown(heapRows, heapScores, last, heapRows[last], heapScores[last]);
  }
  return { rows: resultRows, scores: resultScores };
}

// --- Internal helpers ---

// Worse entries sit nearer the heap root: lower score, or the same score and a higher row.
function isWorse(leftScore: number, leftRow: number, rightScore: number, rightRow: number): boolean {
  return leftScore < rightScore || (leftScore === rightScore && leftRow > rightRow);
}

function siftUp(heapRows: Int32Array, heapScores: Float64Array, size: number, row: number, score: number): void {
  let position = size;
  while (position > 0) {
    const parent = (position - 1) >> 1;
    if (!isWorse(score, row, heapScores[parent], heapRows[parent])) break;
    heapRows[position] = heapRows[parent];
    heapScores[position] = heapScores[parent];
    position = parent;
  }
  heapRows[position] = row;
  heapScores[position] = score;
}

/** Replace the root with (row, score) and restore the heap over the first `size` entries. */
function siftDown(heapRows: Int32Array, heapScores: Float64Array, size: number, row: number, score: number): void {
  let position = 0;
  for (;;) {
    let child = 2 * position + 1;
    if (child >= size) break;
    if (child + 1 < size && isWorse(heapScores[child + 1], heapRows[child + 1], heapScores[child], heapRows[child])) child++;
    if (!isWorse(heapScores[child], heapRows[child], score, row)) break;
    heapRows[position] = heapRows[child];
    heapScores[position] = heapScores[child];
    position = child;
  }
  if (size > 0) {
    heapRows[position] = row;
    heapScores[position] = score;
  }
}
