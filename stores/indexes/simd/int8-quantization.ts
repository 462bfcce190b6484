/**
 * Scalar quantisation for the int8 scan, one scale per vector (symmetric, no offset).
 *
 * Per-vector rather than per-dimension: a row's codes depend on that row alone, so appending, replacing or
 * removing a row never re-quantises the others, and a collection whose value ranges drift as it grows
 * needs no rebuild. It also spends the full -127..127 range on every row, short texts with a few large
 * components included. The scan only picks candidates for an exact float32 re-rank, so a per-dimension
 * scheme's finer fit on skewed dimensions would buy little.
 */

/** The most an int8 code may be: -128 is left out so codes are symmetric. */
export const INT8_CODE_LIMIT = 127;

/**
 * Write `value × 127 / max|value|`, rounded to the nearest integer, for each value of `vector` into `codes` and return the scale
 * that maps codes back to values (`max|value| / 127`); 0 for an all-zero vector.
 */
export function quantizeRow(vector: Float32Array, codes: Int8Array): number {
  let largest = 0;
  for (let index = 0; index < vector.length; index++) largest = Math.max(largest, Math.abs(vector[index]));
  if (largest === 0) {
    codes.fill(0);
    return 0;
  }
  const factor = INT8_CODE_LIMIT / largest;
  // Rounding half away from zero keeps the codes of -v the negation of those of v.
  for (let index = 0; index < vector.length; index++) {
    const scaled = vector[index] * factor;
    codes[index] = scaled < 0 ? -Math.round(-scaled) : Math.round(scaled);
  }
  return largest / INT8_CODE_LIMIT;
}

/**
 * The factor that maps query values to int16 for the kernel. The query is kept much finer than the
 * codes (up to ±32767), but small enough that a whole row's 32-bit integer dot product cannot overflow:
 * `codeStride × 127 × limit` stays under 2^31.
 */
export function int8QueryScale(query: Float32Array, codeStride: number): number {
  let largest = 0;
  for (let index = 0; index < query.length; index++) largest = Math.max(largest, Math.abs(query[index]));
  if (largest === 0) return 0;
  const limit = Math.min(32_767, Math.floor((2 ** 31 - 1) / (INT8_CODE_LIMIT * Math.max(codeStride, 1))));
  return limit / largest;
}
