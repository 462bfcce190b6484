/**
 * What makes a float32 scan's answer exact: the scan keeps `EXACT_MARGIN` candidates beyond the top K, they are
 * re-scored in float64, and the rounding bound of one float32 dot product proves that no row left out could have
 * made the top K (`SimdVectorSpace.search`, and the streamed search of rows left in their files, which must return
 * what it returns: stores/indexes/deferred-vectors.ts). The norms the bound is made of are computed here too.
 */

/** Candidates kept beyond `topK` by the float32 kernel, so rounding cannot push a true top-K row out. */
export const EXACT_MARGIN = 16;

/**
 * Worst-case float32 rounding of one kernel dot product of `query` with a row of `rowStrideBytes` bytes whose L2
 * norm is at most `largestNorm`: about one rounding per sequential add (a quarter of the 16-float steps, plus the
 * reductions), doubled for slack, times |query|·|row|. A row whose float32 score was at most `cut` scores at most
 * `cut + bound` in float64, so a kept row scoring above that is ahead of every row left out.
 */
export function float32RoundingBound(rowStrideBytes: number, query: Float32Array, largestNorm: number): number {
  return (rowStrideBytes / 64 + 8) * 2 ** -23 * Math.sqrt(sumOfSquares(query)) * largestNorm;
}

/** The largest L2 norm among rows of `vectors`, computed as a space computes it when rows are appended (for `appendFilled`). */
export function largestRowNorm(vectors: Float32Array, dimensions: number): number {
  let largest = 0;
  for (let start = 0; start + dimensions <= vectors.length; start += dimensions) {
    const norm = Math.sqrt(sumOfSquares(vectors.subarray(start, start + dimensions)));
    if (norm > largest) largest = norm;
  }
  return largest;
}

/** The sum of the squares of `values`, in float64, in index order (the order every norm of the space is computed in). */
export function sumOfSquares(values: Float32Array): number {
  let sum = 0;
  for (let index = 0; index < values.length; index++) sum += values[index] * values[index];
  return sum;
}
