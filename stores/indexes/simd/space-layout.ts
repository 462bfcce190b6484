/** Bytes in one WebAssembly memory page. */
export const WASM_PAGE_BYTES = 65_536;

/** Where each region of a `SimdVectorSpace` lives in its WebAssembly memory (byte offsets). */
export interface SpaceLayout {
  /** Rows that fit: a multiple of 4, since int8 codes are stored in blocks of four rows. */
  readonly capacity: number;
  /** Bytes from one float32 row to the next: the dimensions rounded up to 4 floats, zero-padded. */
  readonly floatStride: number;
  /** Bytes of int8 codes per row (0 without int8): the dimensions rounded up to 16, zero-padded. */
  readonly codeStride: number;
  readonly query: number;
  /** The query widened to int16, one value per code. */
  readonly queryCodes: number;
  readonly heapRows: number;
  readonly heapScores: number;
  /** Candidate rows of a filtered scan. */
  readonly candidates: number;
  /** Float64 scores of the rows being re-scored exactly. */
  readonly exactScores: number;
  /** One float32 scale per int8 row. */
  readonly scales: number;
  readonly vectors: number;
  /** Int8 codes, interleaved by blocks of four rows: see `codeOffset`. */
  readonly codes: number;
  /** Total size, with slack so that no pointer the kernel forms reaches 2^32 and wraps. */
  readonly bytes: number;
}

/**
 * Plan a memory for `capacity` rows. Every per-row region is sized for all rows, so a search never needs
 * a bigger memory: the heap, the candidate list and the exact scores hold at most every row. That costs
 * 20 to 24 bytes a row, about 1.5% of a 384-dimension float row.
 */
export function planLayout(rows: number, dimensions: number, int8: boolean): SpaceLayout {
  const capacity = Math.ceil(Math.max(rows, 1) / 4) * 4;
  const floatStride = alignTo(dimensions * 4, 16);
  const codeStride = int8 ? alignTo(dimensions, 16) : 0;
  // Regions start on 64-byte cache lines, so a row stride that is a multiple of 64 keeps every row on its own lines.
  const regions = regionAllocator();
  const take = regions.take;
  const query = take(floatStride);
  const queryCodes = take(codeStride * 2);
  const heapRows = take(capacity * 4);
  const heapScores = take(capacity * 4);
  const candidates = take(capacity * 4);
  const exactScores = take(capacity * 8);
  const scales = take(int8 ? capacity * 4 : 0);
  const vectors = take(capacity * floatStride);
  const codes = take(capacity * codeStride);
  return {
    capacity,
    floatStride,
    codeStride,
    query,
    queryCodes,
    heapRows,
    heapScores,
    candidates,
    exactScores,
    scales,
    vectors,
    codes,
    bytes: regions.end + 64,
  };
}

/** Where each region of an HNSW graph (`HnswIndex`) lives in its WebAssembly memory (byte offsets, 64-byte aligned). */
export interface GraphLayout {
  /** Nodes that fit. */
  readonly capacity: number;
  /** Bytes from one vector to the next: the dimensions rounded up to 16 floats, zero-padded. */
  readonly stride: number;
  /** Entries of each scratch list: enough for a search's candidates and a full neighbour list plus one. */
  readonly scratch: number;
  readonly query: number;
  /** A copied upper-layer neighbour list. */
  readonly listRows: number;
  /** Rows and scores a kernel call writes. */
  readonly foundRows: number;
  readonly foundScores: number;
  /** Candidates (rows, float32 scores) handed to the neighbour-selection heuristic, or rows re-scored exactly. */
  readonly candidateRows: number;
  readonly candidateScores: number;
  /** Rows the heuristic keeps. */
  readonly keptRows: number;
  /** Float64 scores of the rows re-scored exactly. */
  readonly exactScores: number;
  /** One visit mark (i32) per node. */
  readonly visitMarks: number;
  /** Per node: a count, then up to 2m neighbours (i32). */
  readonly layerZero: number;
  readonly vectors: number;
  /** Total size, with slack so that no pointer the kernel forms reaches 2^32 and wraps. */
  readonly bytes: number;
}

/**
 * Plan an HNSW graph's memory for `capacity` nodes. The scratch lists hold a search's `efConstruction` candidates or a
 * full layer-0 list plus one (the pool `connect` prunes); the final re-score goes through them in chunks.
 */
export function planGraph(capacity: number, dimensions: number, m: number, efConstruction: number): GraphLayout {
  const stride = alignTo(dimensions * 4, 64);
  const scratch = Math.max(efConstruction, 2 * m + 1, 64);
  const regions = regionAllocator();
  const take = regions.take;
  const query = take(stride);
  const listRows = take(scratch * 4);
  const foundRows = take(scratch * 4);
  const foundScores = take(scratch * 4);
  const candidateRows = take(scratch * 4);
  const candidateScores = take(scratch * 4);
  const keptRows = take(scratch * 4);
  const exactScores = take(scratch * 8);
  const visitMarks = take(capacity * 4);
  const layerZero = take(capacity * (2 * m + 1) * 4);
  const vectors = take(capacity * stride);
  return {
    capacity,
    stride,
    scratch,
    query,
    listRows,
    foundRows,
    foundScores,
    candidateRows,
    candidateScores,
    keptRows,
    exactScores,
    visitMarks,
    layerZero,
    vectors,
    bytes: regions.end + 64,
  };
}

/**
 * Byte offset, from the start of the codes region, of the 8 codes of `row` that begin at `position` (a
 * multiple of 8). A block of four rows holds, for each 8 positions, row 0's codes, then rows 1, 2 and 3's,
 * so the kernel scores four rows reading memory in order and loading each part of the query once.
 */
export function codeOffset(row: number, position: number, codeStride: number): number {
  return (row >> 2) * 4 * codeStride + (position >> 3) * 32 + (row & 3) * 8;
}

export function alignTo(value: number, alignment: number): number {
  return Math.ceil(value / alignment) * alignment;
}

/**
 * Hands out regions of one memory in order, each starting on a 64-byte cache line; `end` is the first byte
 * after the last region. Both `planLayout` and the HNSW graph's planner lay out their memory with it.
 */
export function regionAllocator(): { take(size: number): number; readonly end: number } {
  let offset = 0;
  return {
    take(size: number): number {
      const start = offset;
      offset = alignTo(offset + size, 64);
      return start;
    },
    get end() {
      return offset;
    },
  };
}

/** `bytes` rounded up to whole WebAssembly pages: what a memory for them takes. */
export function pagedBytes(bytes: number): number {
  return Math.ceil(bytes / WASM_PAGE_BYTES) * WASM_PAGE_BYTES;
}

/** A byte count for messages: GiB past one, else MiB, with `digits` decimals. */
export function formatBytes(bytes: number, digits = 1): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(2)} GiB` : `${(bytes / 2 ** 20).toFixed(digits)} MiB`;
}

/**
 * The layout for `preferredRows` when its memory fits `limitBytes`; else, when doubling would pass the
 * limit, the layout for every row that still fits (at least `rows`); `undefined` when not even `rows` fit.
 */
export function planWithinLimit<L extends { bytes: number }>(
  rows: number,
  preferredRows: number,
  plan: (rows: number) => L,
  limitBytes: number,
): L | undefined {
  const preferred = plan(preferredRows);
  if (pagedBytes(preferred.bytes) <= limitBytes) return preferred;
  const needed = plan(rows);
  if (pagedBytes(needed.bytes) > limitBytes) return undefined;
  let fitting = Math.max(rows, Math.floor((limitBytes / needed.bytes) * rows));
  while (fitting > rows && pagedBytes(plan(fitting).bytes) > limitBytes) fitting--;
  return plan(fitting);
}
