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
  /** The region another index keeps in this memory (an `HnswIndex` over these rows), `tenantBytes` long. */
  readonly tenant: number;
  readonly tenantBytes: number;
  /** Total size, with slack so that no pointer the kernel forms reaches 2^32 and wraps. */
  readonly bytes: number;
}

/**
 * Plan a memory for `capacity` rows. Every per-row region is sized for all rows, so a search never needs
 * a bigger memory: the heap, the candidate list and the exact scores hold at most every row. That costs
 * 20 to 24 bytes a row, about 1.5% of a 384-dimension float row.
 */
export function planLayout(rows: number, dimensions: number, int8: boolean, tenantBytes = 0): SpaceLayout {
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
  const tenant = take(tenantBytes);
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
    tenant,
    tenantBytes,
    bytes: regions.end + 64,
  };
}

/** Where each region of an HNSW graph (`HnswIndex`) lives in its WebAssembly memory (byte offsets, 64-byte aligned). */
export interface GraphLayout {
  /** Nodes that fit. */
  readonly capacity: number;
  /** Slots of the upper-layer pool (a count and m neighbours per list). */
  readonly upperCapacity: number;
  /** Bytes from one vector to the next: the dimensions rounded up to 16 floats (zero-padded), or the host's stride. */
  readonly stride: number;
  readonly query: number;
  /** Scratch lists of 2m + 1 entries: a node's unvisited neighbours (node, vector address), a pool being pruned (node, score), the nodes kept (i32). */
  readonly buffer: number;
  readonly pool: number;
  readonly kept: number;
  /**
   * Per node, 8 bytes: the row of its vector (bits 0-29) and its flag (bits 30-31: 0 live, 1 walked through
   * but not returned, 2 unlinked, a free slot), then its visit mark (i32). See `nodeWord`.
   */
  readonly nodes: number;
  /** Per node: a count, then up to 2m neighbours (i32). */
  readonly layerZero: number;
  /** Per node: where its upper-layer lists start in the pool (i32 slot). */
  readonly upperIndex: number;
  readonly upperPool: number;
  /** The heaps of a layer search, 8 bytes an entry, room for every node; the frontier also takes the float64 re-scores. */
  readonly frontier: number;
  readonly nearest: number;
  readonly vectors: number;
  /** Total size, with slack so that no pointer the kernel forms reaches 2^32 and wraps. */
  readonly bytes: number;
}

/** The first word of a node's entry in `GraphLayout.nodes`: its row and its flag (0 live, 1 not returned, 2 unlinked). */
export function nodeWord(row: number, flag: number): number {
  return (row & 0x3fffffff) | (flag << 30);
}

/** The highest level an HNSW node can draw (levels are stored in a byte). */
export const HNSW_MAX_LEVEL = 255;

/**
 * Slots of `lists` upper-layer lists of a graph of this `m`: each list a count and m neighbours. The one rule
 * that sizes a node's upper lists (a node of level L holds L of them), the pool and the saved upper layers.
 */
export function upperListSlots(lists: number, m: number): number {
  return lists * (m + 1);
}

/** Slots of a node's layer-0 list: a count and up to 2m neighbours. */
export function layerZeroSlots(m: number): number {
  return 2 * m + 1;
}

/**
 * Upper-pool slots that always take one more node, whatever level it draws: the lists of a node of the
 * highest level, and one list to spare.
 */
export function tallestNodeSlots(m: number): number {
  return upperListSlots(HNSW_MAX_LEVEL + 1, m);
}

/**
 * Upper-layer slots to plan for `capacity` nodes: a node reaches level l with probability m^-l, so it holds
 * on average 1 / (m - 1) upper lists; twice that, and room for one node of the highest level
 * (`tallestNodeSlots`), so that an add never finds the pool full once it checked for that much room.
 */
export function upperSlotsFor(capacity: number, m: number): number {
  return Math.ceil((2 * capacity * upperListSlots(1, m)) / (m - 1)) + tallestNodeSlots(m);
}

/**
 * Bytes of an HNSW graph's region for `capacity` nodes inside a vector space's memory (`HnswIndex.over`),
 * reading that space's rows: what the space reserves beside as many rows. `upperWanted` raises the upper
 * pool above what `upperSlotsFor` plans.
 */
export function graphRegionBytes(capacity: number, dimensions: number, m: number, upperWanted = 0): number {
  return planGraph(capacity, dimensions, m, Math.max(upperWanted, upperSlotsFor(capacity, m)), hostRowGeometry(dimensions)).bytes;
}

/** The row geometry of a vector space's memory as a graph region sizes itself against it: rows at 0, float32 rows padded to 16 bytes. */
export function hostRowGeometry(dimensions: number): GraphHost {
  return { base: 0, vectors: 0, stride: alignTo(dimensions * 4, 16) };
}

/** The vectors a graph reads in another's memory (a `SimdVectorSpace`'s rows), and where its own regions begin there. */
export interface GraphHost {
  /** Byte address of the graph's first region (64-byte aligned). */
  readonly base: number;
  /** Byte address of row 0 and the bytes from one row to the next (a multiple of 16). */
  readonly vectors: number;
  readonly stride: number;
}

/**
 * Plan an HNSW graph's memory for `capacity` nodes and `upperCapacity` upper-layer slots: its own memory
 * (vectors included, `bytes` the whole memory), or, with a `host`, the graph's regions from `host.base` in
 * the host's memory, reading the host's vectors (`bytes` then the length of the graph's block).
 */
export function planGraph(capacity: number, dimensions: number, m: number, upperCapacity = upperSlotsFor(capacity, m), host?: GraphHost): GraphLayout {
  const stride = host ? host.stride : alignTo(dimensions * 4, 64);
  const list = layerZeroSlots(m);
  const regions = regionAllocator(host?.base ?? 0);
  const take = regions.take;
  const query = take(stride);
  const buffer = take(list * 8);
  const pool = take(list * 8);
  const kept = take(list * 4);
  const nodes = take(capacity * 8);
  const layerZero = take(capacity * list * 4);
  const upperIndex = take(capacity * 4);
  const upperPool = take(upperCapacity * 4);
  const frontier = take(capacity * 8);
  const nearest = take(capacity * 8);
  const vectors = host ? host.vectors : take(capacity * stride);
  return {
    capacity,
    upperCapacity,
    stride,
    query,
    buffer,
    pool,
    kept,
    nodes,
    layerZero,
    upperIndex,
    upperPool,
    frontier,
    nearest,
    vectors,
    bytes: host ? regions.end - host.base : regions.end + 64,
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
export function regionAllocator(start = 0): { take(size: number): number; readonly end: number } {
  let offset = start;
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
