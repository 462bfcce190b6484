import { parseOptions } from '../../../src/runtime/options.ts';
import { AxonError } from '../../../src/errors.ts';
import { assertTopK } from '../arguments.ts';
import type { SearchHits } from '../vector-scan.ts';
import { assertFinite } from '../vector-validation.ts';
import { EXACT_MARGIN, float32RoundingBound, sumOfSquares } from './exact-bound.ts';
import { int8QueryScale, quantizeRow } from './int8-quantization.ts';
import { codeOffset, formatBytes, pagedBytes, planLayout, planWithinLimit, WASM_PAGE_BYTES, type SpaceLayout } from './space-layout.ts';
import { createMemory, instantiateKernel, type SearchKernel, type WasmMemory } from './wasm-runtime.ts';
import {
  simdVectorSpaceOptionsSchema,
  type ApproximateSearchOptions,
  type SimdVectorSpaceOptions,
  type SimdVectorSpaceParsedOptions,
} from './simd-index-options.ts';

export { largestRowNorm } from './exact-bound.ts';
export { simdVectorSpaceOptionsSchema, WASM_MEMORY_LIMIT_BYTES, type ApproximateSearchOptions, type SimdVectorSpaceOptions } from './simd-index-options.ts';

/**
 * An index that keeps a region in a `SimdVectorSpace`'s memory and reads its rows in place (the HNSW graph
 * of `HnswIndex.over`). The space sizes the region with the rows, and tells the tenant when it moved.
 */
export interface SpaceTenant {
  /** Bytes of the region for a space of `capacity` rows. */
  bytesFor(capacity: number): number;
  /** The memory was replaced (see `SimdVectorSpace.shared`); `old` is the previous one, to copy the region out of. */
  moved(old: ArrayBuffer): void;
}

/** Rows `warmUp` scans: a few milliseconds of baseline code at most, past V8's budget for tiering the scan up. */
const WARM_UP_ROWS = 4096;

/**
 * Vectors held in WebAssembly memory and searched by a SIMD kernel (stores/indexes/simd/search-kernel.wat): one
 * pass computes the dot products and keeps the best rows in a bounded heap, at memory-bandwidth speed.
 *
 * `search` is exact and returns what `scanTopK` returns for the same rows (the same rows in the same
 * order, bit-identical float64 scores): the kernel keeps `topK + 16` candidates in float32, they are
 * re-scored in float64 exactly as `scanTopK` scores, and a rounding-error bound proves no row outside the
 * candidates could have made the top K; when the proof fails (ties or near-ties at the cut) the scan is
 * repeated with more candidates. `searchApproximate` (with `quantization: 'int8'`) scans int8 codes and
 * re-scores the best candidates the same exact way.
 *
 * Rows are dense like `VectorIndex`'s: `swapRemove` moves the last row into the hole. The memory is created
 * at its full size and replaced by a larger copy when full, never grown in place: `memory.grow()` detaches
 * ArrayBuffers, which slows every typed-array loop in the process afterwards.
 *
 * @example
 * const space = new SimdVectorSpace({ dimensions: 3 });
 * space.append(new Float32Array([1, 0, 0, 0, 1, 0]));
 * space.search(new Float32Array([0.6, 0.8, 0]), 1); // { rows: [1], scores: [0.8] }
 */
export class SimdVectorSpace {
  readonly component: string;
  readonly dimensions: number;
  readonly quantization: 'none' | 'int8';
  private readonly options: SimdVectorSpaceParsedOptions;
  private layout: SpaceLayout;
  private memory!: WasmMemory;
  private kernel!: SearchKernel;
  private floats!: Float32Array;
  private bytes!: Int8Array;
  /** One row of int8 codes before it is interleaved into its block. */
  private readonly codeScratch: Int8Array;
  private rowCount = 0;
  /** Largest L2 norm of any row ever stored: scales the rounding-error bound of the float32 kernel. */
  private largestNorm = 0;
  /** Rows written past the last one by `stage` since the rows last changed. */
  private stagedRows = 0;
  /** The index that keeps a region in this memory, if any. */
  private tenant: SpaceTenant | undefined;
  /** The size of the region of a tenant expected to attach (`expectTenant`), planned until one does. */
  private expected: ((capacity: number) => number) | undefined;

  constructor(options: SimdVectorSpaceOptions) {
    const parsed = parseOptions(simdVectorSpaceOptionsSchema, options, typeof options?.component === 'string' ? options.component : 'simd-vector-space');
    this.options = parsed;
    this.component = parsed.component;
    this.dimensions = parsed.dimensions;
    this.quantization = parsed.quantization;
    this.layout = this.planFor(parsed.initialCapacity, parsed.initialCapacity);
    this.codeScratch = new Int8Array(this.layout.codeStride);
    this.replaceMemory(this.layout);
  }

  /** How many rows are stored. */
  get size(): number {
    return this.rowCount;
  }

  /** Rows that fit before the memory is rebuilt. */
  get capacity(): number {
    return this.layout.capacity;
  }

  /** Bytes of WebAssembly memory held. */
  get memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }

  /**
   * For an index that reads these rows in place (`HnswIndex.over`): the memory, the kernel bound to it, where
   * row 0 is and the bytes from one row to the next, the rows that fit, and where the tenant region starts.
   * Every value may change when the memory is replaced.
   */
  get shared(): {
    readonly buffer: ArrayBuffer;
    readonly kernel: SearchKernel;
    readonly vectors: number;
    readonly stride: number;
    readonly capacity: number;
    readonly tenant: number;
    readonly tenantBytes: number;
    readonly owner: SpaceTenant | undefined;
  } {
    const { vectors, floatStride, capacity, tenant, tenantBytes } = this.layout;
    return {
      buffer: this.memory.buffer,
      kernel: this.kernel,
      vectors,
      stride: floatStride,
      capacity,
      tenant,
      tenantBytes,
      owner: this.tenant,
    };
  }

  /** The index that keeps a region in this memory, if any (what `shared.owner` says, without building `shared`). */
  get tenantOwner(): SpaceTenant | undefined {
    return this.tenant;
  }

  /** Rows stored, and those staged past them (see `stage`). */
  get rowsHeld(): number {
    return this.rowCount + this.stagedRows;
  }

  /** The memory limit this space grows within; a tenant may lower it (never raise it). */
  get memoryLimit(): number {
    return this.options.memoryLimitBytes;
  }

  /**
   * Keep `tenant`'s region in this memory from now on, sized for the rows that fit (`tenant.bytesFor`), and
   * replace the memory to make room, for `minimumRows` rows at least (`tenant.moved` is called, as after
   * every replacement). A tenant held before is dropped. With `limitBytes`, the memory may not pass that
   * limit from now on.
   * @throws AxonError `CAPACITY_EXCEEDED` when the rows held and the region do not fit (nothing changes then)
   */
  attach(tenant: SpaceTenant, limitBytes?: number, minimumRows = 1): void {
    const previous = { tenant: this.tenant, limit: this.options.memoryLimitBytes };
    this.tenant = tenant;
    this.options.memoryLimitBytes = Math.min(limitBytes ?? previous.limit, previous.limit);
    try {
      const rows = Math.max(1, this.rowsHeld, minimumRows);
      const { capacity, tenantBytes, bytes } = this.layout;
      const needed = tenant.bytesFor(capacity);
      if (rows <= capacity && needed <= tenantBytes && pagedBytes(bytes) <= this.options.memoryLimitBytes) {
        // The region `expectTenant` reserved holds it: nothing moves. Its bytes may be those of a tenant
        // dropped before; a tenant writes what it reads.
        this.layout = { ...this.layout, tenantBytes: needed };
        tenant.moved(this.memory.buffer);
        return;
      }
      this.resize(this.planFor(rows, Math.max(rows, this.layout.capacity)));
    } catch (error) {
      this.tenant = previous.tenant;
      this.options.memoryLimitBytes = previous.limit;
      throw error;
    }
  }

  /**
   * Plan room for a tenant that will attach later (`bytesFor` sizes its region as `SpaceTenant.bytesFor`
   * does), in this memory and in every one that replaces it until then, so that attaching copies nothing.
   * Untouched, the region costs address space, not memory: pages are committed when first written.
   */
  expectTenant(bytesFor: (capacity: number) => number): void {
    this.expected = bytesFor;
    if (this.tenant === undefined) this.resize(this.planFor(Math.max(1, this.rowsHeld), this.layout.capacity));
  }

  /**
   * Make room for at least `rows` rows (stored and staged): at twice the capacity when that fits, else as
   * many as fit; for a tenant that needs room for one more of its own entries per row.
   * @throws AxonError `CAPACITY_EXCEEDED`
   */
  grow(rows: number): void {
    if (rows > this.layout.capacity) this.resize(this.planFor(rows, Math.max(rows, 2 * this.layout.capacity)));
  }

  /** The tenant's region needs another size at the same capacity (`tenant.bytesFor` changed): replace the memory. @throws AxonError `CAPACITY_EXCEEDED` */
  tenantResized(): void {
    this.resize(this.planFor(Math.max(1, this.rowsHeld), this.layout.capacity));
  }

  /**
   * Write `vector` in the first row past the last one and those staged before it (growing the memory when
   * full), for an index that links it before `append` or `set` stores it for good; returns its row. Any
   * `append`, `set` or `swapRemove` ends the staging: staged rows may then be overwritten.
   */
  stage(vector: Float32Array): number {
    if (vector.length !== this.dimensions) {
      throw new AxonError('DIMENSION_MISMATCH', `stage() got a ${vector.length}-dimensional vector; the space holds ${this.dimensions}.`, {
        component: this.component,
        fix: `Stage vectors of the space's ${this.dimensions} dimensions.`,
        details: { expected: this.dimensions, actual: vector.length },
      });
    }
    assertFinite(vector, this.component, 'vector');
    const row = this.rowCount + this.stagedRows;
    if (row >= this.layout.capacity) this.resize(this.planFor(row + 1, 2 * this.layout.capacity));
    this.floats.set(vector, (this.layout.vectors + row * this.layout.floatStride) / 4);
    this.stagedRows++;
    return row;
  }

  /** Make room for `rows` rows in total, so a bulk load allocates once. */
  reserve(rows: number): void {
    if (rows > this.layout.capacity) this.resize(this.planFor(rows, rows));
  }

  /**
   * Check that `rows` rows would fit this space's memory limit, without making the memory: for rows read in later
   * (vectors left in their files), refused when they are found, not when they come in.
   * @throws AxonError `CAPACITY_EXCEEDED`
   */
  assertRoomFor(rows: number): void {
    this.planFor(rows, rows);
  }

  /**
   * Append rows (`vectors.length / dimensions` of them, row-major) after the last one; returns the first new row.
   * @throws AxonError `INVALID_VECTOR` (non-finite values or a partial row), `CAPACITY_EXCEEDED` past the memory limit
   */
  append(vectors: Float32Array): number {
    const rows = vectors.length / this.dimensions;
    if (!Number.isInteger(rows)) {
      throw new AxonError('INVALID_VECTOR', `append() got ${vectors.length} values, not a whole number of ${this.dimensions}-dimensional rows.`, {
        component: this.component,
        fix: `Append whole rows: a multiple of ${this.dimensions} values, one row after another.`,
      });
    }
    assertFinite(vectors, this.component, 'appended vectors');
    this.stagedRows = 0;
    const first = this.rowCount;
    if (first + rows > this.layout.capacity) this.resize(this.planFor(first + rows, Math.max(first + rows, 2 * this.layout.capacity)));
    for (let row = 0; row < rows; row++) this.writeRow(first + row, vectors.subarray(row * this.dimensions, (row + 1) * this.dimensions));
    this.rowCount += rows;
    return first;
  }

  /** True when rows are stored without padding (the dimensions are a multiple of 4), so `appendFilled` can take them as they are laid out on disk. */
  get packedRows(): boolean {
    return this.layout.floatStride === this.dimensions * 4;
  }

  /**
   * Append `rows` rows that `fill` writes straight into the space's memory, saving the copy `append` makes: for a
   * store reading its own files. `fill` gets the rows' bytes (float32, row after row, no padding; needs
   * `packedRows`) and may read a file into them; nothing else may use the space until it settles. The rows are
   * trusted, not checked: the caller vouches (by a checksum of what it wrote) that every value is finite and that
   * no row's L2 norm passes `largestNorm`. Returns the first new row. If `fill` throws, no row is added.
   * @throws AxonError `CAPACITY_EXCEEDED` past the memory limit, `INTERNAL` when the rows are not packed
   */
  async appendFilled(rows: number, largestNorm: number, fill: (target: Uint8Array) => Promise<void>): Promise<number> {
    await fill(this.fillTarget(rows, largestNorm));
    return this.commitFilled(rows, largestNorm);
  }

  /**
   * `appendFilled` in two steps, for rows written over several turns of the event loop: where to write `rows` rows
   * (room made past the last row), then `commitFilled` once they are written. Nothing else may use the space between.
   */
  fillTarget(rows: number, largestNorm: number): Uint8Array {
    if (!this.packedRows || !Number.isSafeInteger(rows) || rows < 0 || !(largestNorm >= 0)) {
      throw new AxonError('INTERNAL', `appendFilled() needs packed rows, a row count and a norm (got ${rows} rows, norm ${largestNorm}).`, {
        component: this.component,
        details: { invariant: 'append-filled-arguments' },
      });
    }
    const first = this.rowCount;
    if (first + rows > this.layout.capacity) this.resize(this.planFor(first + rows, Math.max(first + rows, 2 * this.layout.capacity)));
    const { vectors, floatStride } = this.layout;
    return new Uint8Array(this.memory.buffer, vectors + first * floatStride, rows * floatStride);
  }

  /** Store the rows `fillTarget` had written (their int8 codes too); returns the first. */
  commitFilled(rows: number, largestNorm: number): number {
    const first = this.rowCount;
    if (this.quantization === 'int8') for (let row = first; row < first + rows; row++) this.writeCodes(row, this.vectorAtUnchecked(row));
    if (largestNorm > this.largestNorm) this.largestNorm = largestNorm;
    this.rowCount += rows;
    return first;
  }

  /** Overwrite one stored row (an upsert of an existing id). */
  set(row: number, vector: Float32Array): void {
    this.assertRow(row);
    if (vector.length !== this.dimensions) {
      throw new AxonError('DIMENSION_MISMATCH', `set() got a ${vector.length}-dimensional vector; the space holds ${this.dimensions}.`, {
        component: this.component,
        fix: `Set vectors of the space's ${this.dimensions} dimensions.`,
        details: { expected: this.dimensions, actual: vector.length },
      });
    }
    assertFinite(vector, this.component, 'vector');
    this.stagedRows = 0;
    this.writeRow(row, vector);
  }

  /** Remove a row by moving the last row into its place (as `VectorIndex.delete` moves documents). */
  swapRemove(row: number): void {
    this.assertRow(row);
    this.stagedRows = 0;
    const last = this.rowCount - 1;
    if (row !== last) {
      const bytes = new Uint8Array(this.memory.buffer);
      const { vectors, floatStride, codes, codeStride, scales } = this.layout;
      bytes.copyWithin(vectors + row * floatStride, vectors + last * floatStride, vectors + (last + 1) * floatStride);
      if (this.quantization === 'int8') {
        for (let position = 0; position < codeStride; position += 8) {
          const from = codes + codeOffset(last, position, codeStride);
          bytes.copyWithin(codes + codeOffset(row, position, codeStride), from, from + 8);
        }
        this.floats[scales / 4 + row] = this.floats[scales / 4 + last];
      }
    }
    this.rowCount = last;
  }

  /** The stored row as a view into WebAssembly memory: valid until the next `append` or `reserve`. Copy it to keep it. */
  vectorAt(row: number): Float32Array {
    this.assertRow(row);
    return new Float32Array(this.memory.buffer, this.layout.vectors + row * this.layout.floatStride, this.dimensions);
  }

  /**
   * Exact top-K by dot product (the cosine for unit vectors), best first, ties to the lower row: the same
   * result as `scanTopK(vectors, dimensions, query, rows, count, topK)` over the same rows.
   * @param rows when given, only its first `count` rows are scanned (a pre-filter)
   */
  search(query: Float32Array, topK: number, rows: Int32Array | null = null, count = rows === null ? this.rowCount : rows.length): SearchHits {
    assertTopK(topK, this.component);
    const candidates = this.candidateCount(rows, count);
    if (candidates === 0) return { rows: new Int32Array(0), scores: new Float64Array(0) };
    this.writeQuery(query);
    const errorBound = float32RoundingBound(this.layout.floatStride, query, this.largestNorm);
    const { heapRows, heapScores, floatStride, vectors } = this.layout;
    let capacity = Math.min(topK + EXACT_MARGIN, candidates);
    for (;;) {
      if (capacity >= candidates) return this.rescore(this.layout.candidates, rows !== null, candidates, topK);
      const kept = this.kernel.search_f32(
        vectors,
        floatStride,
        this.layout.query,
        this.layout.candidates,
        rows === null ? 0 : 1,
        candidates,
        heapRows,
        heapScores,
        capacity,
      );
      // The heap root is the best float32 score left out (every row not kept scored no higher).
      const cutScore = this.floats[heapScores / 4];
      const hits = this.rescore(heapRows, true, kept, topK);
      if (hits.scores[hits.scores.length - 1] > cutScore + errorBound) return hits;
      capacity = Math.min(capacity * 4, candidates);
    }
  }

  /**
   * Run the exact scan once over the first rows (at most `WARM_UP_ROWS`), discarding what it finds: a fresh
   * process's first scan otherwise runs all of its rows in WebAssembly's baseline code, while this short one is
   * enough for V8 to compile the optimised scan in the background, ready for the first search. Changes nothing
   * the space holds (the query and heap regions are scratch). A space of int8 codes is left as it is.
   */
  warmUp(): void {
    const rows = Math.min(this.rowCount, WARM_UP_ROWS);
    if (rows === 0 || this.quantization === 'int8') return;
    const { vectors, floatStride, query, candidates, heapRows, heapScores } = this.layout;
    this.kernel.search_f32(vectors, floatStride, query, candidates, 0, rows, heapRows, heapScores, 1);
  }

  /**
   * Approximate top-K: scan int8 codes for the best `candidates` rows (default: the larger of
   * `rerankCandidates` and `rerankFactor × topK`), then re-score those exactly and keep the best `topK`.
   * Scores are exact (those `scanTopK` gives); only which rows are considered is approximate.
   * Needs `quantization: 'int8'`.
   */
  searchApproximate(query: Float32Array, topK: number, options: ApproximateSearchOptions = {}): SearchHits {
    assertTopK(topK, this.component);
    if (this.quantization !== 'int8') {
      throw new AxonError('CAPABILITY_MISSING', 'searchApproximate() needs int8 codes, which this space does not keep.', {
        component: this.component,
        fix: "Create the space with quantization: 'int8', or call search() for the exact scan.",
        details: { capability: 'int8-codes' },
      });
    }
    const rows = options.rows ?? null;
    const count = this.candidateCount(rows, options.count ?? (rows === null ? this.rowCount : rows.length));
    const wanted = options.candidates ?? Math.max(this.options.rerankCandidates, Math.ceil(this.options.rerankFactor * topK));
    if (!Number.isSafeInteger(wanted) || wanted < 1) {
      throw new AxonError('INVALID_OPTION', `candidates must be a positive integer, got ${String(wanted)}.`, {
        component: this.component,
        fix: 'Pass candidates as a whole number of at least 1.',
        details: { option: 'candidates' },
      });
    }
    if (wanted >= count) return this.search(query, topK, rows, count);
    this.writeQuery(query);
    const { codes, codeStride, scales, queryCodes, heapRows, heapScores } = this.layout;
    const widened = new Int16Array(this.memory.buffer, queryCodes, codeStride);
    const scale = int8QueryScale(query, codeStride);
    for (let index = 0; index < this.dimensions; index++) widened[index] = Math.round(query[index] * scale);
    const kept = this.kernel.search_i8(
      codes,
      codeStride,
      scales,
      queryCodes,
      this.layout.candidates,
      rows === null ? 0 : 1,
      count,
      heapRows,
      heapScores,
      wanted,
    );
    return this.rescore(heapRows, true, kept, topK);
  }

  // --- Internal helpers ---

  private planFor(rows: number, preferredRows: number): SpaceLayout {
    const int8 = this.quantization === 'int8';
    const limit = this.options.memoryLimitBytes;
    const sizer = this.tenant === undefined ? this.expected : (capacity: number) => this.tenant!.bytesFor(capacity);
    const tenantBytes = (capacity: number) => sizer?.(planLayout(capacity, this.dimensions, int8).capacity) ?? 0;
    const plan = (capacity: number) => planLayout(capacity, this.dimensions, int8, tenantBytes(capacity));
    const planned = planWithinLimit(rows, preferredRows, plan, limit);
    if (planned) return planned;
    const needed = plan(rows);
    const what = this.tenant ? `, with the index over them (${formatBytes(needed.tenantBytes)}),` : '';
    throw new AxonError(
      'CAPACITY_EXCEEDED',
      `${rows.toLocaleString('en')} rows of ${this.dimensions} dimensions${what} need ${formatBytes(needed.bytes)} of WebAssembly memory, past this space's limit of ${formatBytes(limit)} (one 32-bit WebAssembly memory addresses at most 4 GiB). Nothing was stored.`,
      {
        component: this.component,
        fix: 'Split the collection across several stores, use fewer dimensions, or move it to a server store such as Qdrant.',
        details: { rows, dimensions: this.dimensions, neededBytes: needed.bytes, limitBytes: limit },
      },
    );
  }

  private replaceMemory(layout: SpaceLayout): void {
    this.memory = createMemory(pagedBytes(layout.bytes) / WASM_PAGE_BYTES);
    this.kernel = instantiateKernel(this.memory);
    this.floats = new Float32Array(this.memory.buffer);
    this.bytes = new Int8Array(this.memory.buffer);
    this.layout = layout;
  }

  /** Move into a memory laid out as `next`; the tenant then moves its region. */
  private resize(next: SpaceLayout): void {
    const previous = this.layout;
    const oldBytes = new Uint8Array(this.memory.buffer);
    this.replaceMemory(next);
    const bytes = new Uint8Array(this.memory.buffer);
    // Strides depend on the dimensions only, so each region moves as one block (staged rows with the rest).
    const floatRows = Math.min(this.rowCount + this.stagedRows, next.capacity);
    bytes.set(oldBytes.subarray(previous.vectors, previous.vectors + floatRows * previous.floatStride), next.vectors);
    this.tenant?.moved(oldBytes.buffer);
    if (this.quantization === 'int8') {
      // Blocks of four rows keep their layout; whole blocks move.
      bytes.set(oldBytes.subarray(previous.codes, previous.codes + Math.ceil(this.rowCount / 4) * 4 * previous.codeStride), next.codes);
      bytes.set(oldBytes.subarray(previous.scales, previous.scales + this.rowCount * 4), next.scales);
    }
  }

  private writeRow(row: number, vector: Float32Array): void {
    const norm = Math.sqrt(sumOfSquares(vector));
    if (norm > this.largestNorm) this.largestNorm = norm;
    this.floats.set(vector, (this.layout.vectors + row * this.layout.floatStride) / 4);
    if (this.quantization === 'int8') this.writeCodes(row, vector);
  }

  private writeCodes(row: number, vector: Float32Array): void {
    const { codes, codeStride, scales } = this.layout;
    // Codes of positions past the dimensions stay 0 (the scratch row is zero there), so padding adds nothing.
    this.floats[scales / 4 + row] = quantizeRow(vector, this.codeScratch.subarray(0, this.dimensions));
    const bytes = this.bytes;
    for (let position = 0; position < codeStride; position += 8) {
      const target = codes + codeOffset(row, position, codeStride);
      for (let lane = 0; lane < 8; lane++) bytes[target + lane] = this.codeScratch[position + lane];
    }
  }

  private vectorAtUnchecked(row: number): Float32Array {
    return new Float32Array(this.memory.buffer, this.layout.vectors + row * this.layout.floatStride, this.dimensions);
  }

  private writeQuery(query: Float32Array): void {
    if (!(query instanceof Float32Array) || query.length !== this.dimensions) {
      throw new AxonError(
        'DIMENSION_MISMATCH',
        `The query must be a Float32Array of ${this.dimensions} values, got ${query instanceof Float32Array ? query.length : typeof query}.`,
        {
          component: this.component,
          fix: `Pass the query as a Float32Array of the space's ${this.dimensions} dimensions.`,
          details: { expected: this.dimensions, actual: query instanceof Float32Array ? query.length : undefined },
        },
      );
    }
    assertFinite(query, this.component, 'query vector');
    this.floats.set(query, this.layout.query / 4);
  }

  /** Validate the candidate rows, copy them where the kernel reads them, and return how many there are. */
  private candidateCount(rows: Int32Array | null, count: number): number {
    if (rows === null) {
      if (!Number.isSafeInteger(count) || count < 0 || count > this.rowCount) {
        throw new AxonError('INVALID_INPUT', `count ${String(count)} is outside 0..${this.rowCount}.`, {
          component: this.component,
          fix: 'Pass a count between 0 and the number of rows the space holds.',
          details: { argument: 'count' },
        });
      }
      return count;
    }
    if (!Number.isSafeInteger(count) || count < 0 || count > rows.length) {
      throw new AxonError('INVALID_INPUT', `count ${String(count)} is outside 0..${rows.length} (the length of rows).`, {
        component: this.component,
        fix: 'Pass a count no larger than rows.length.',
        details: { argument: 'count' },
      });
    }
    const size = this.rowCount;
    for (let index = 0; index < count; index++) {
      const row = rows[index];
      if (row < 0 || row >= size)
        throw new AxonError('INVALID_INPUT', `rows[${index}] = ${row} is not a stored row (0..${size - 1}).`, {
          component: this.component,
          fix: 'Pass only rows the space holds.',
          details: { argument: 'rows', position: index },
        });
    }
    new Int32Array(this.memory.buffer, this.layout.candidates, count).set(rows.subarray(0, count));
    return count;
  }

  /**
   * Score rows exactly, in float64 with the arithmetic of `scanTopK` (so the scores are bit-identical), and
   * keep the best `topK`, ties to the lower row. The rows are the `count` listed at byte `rowsAddress`, or
   * rows 0..count-1 when `listed` is false. The query must already be written.
   */
  private rescore(rowsAddress: number, listed: boolean, count: number, topK: number): SearchHits {
    const { vectors, floatStride, query, exactScores } = this.layout;
    this.kernel.score_f64(vectors, floatStride, this.dimensions, query, rowsAddress, listed ? 1 : 0, count, exactScores);
    const scores = new Float64Array(this.memory.buffer, exactScores, count);
    const rows = listed ? new Int32Array(this.memory.buffer, rowsAddress, count) : null;
    const order = Array.from({ length: count }, (_, index) => index);
    const rowOf = (index: number) => (rows === null ? index : rows[index]);
    order.sort((left, right) => scores[right] - scores[left] || rowOf(left) - rowOf(right));
    const kept = Math.min(topK, count);
    const hits = { rows: new Int32Array(kept), scores: new Float64Array(kept) };
    for (let rank = 0; rank < kept; rank++) {
      hits.rows[rank] = rowOf(order[rank]);
      hits.scores[rank] = scores[order[rank]];
    }
    return hits;
  }

  private assertRow(row: number): void {
    if (!Number.isSafeInteger(row) || row < 0 || row >= this.rowCount) {
      throw new AxonError('INVALID_INPUT', `Row ${String(row)} is not stored (0..${this.rowCount - 1}).`, {
        component: this.component,
        fix: 'Pass a row the space holds.',
        details: { argument: 'row' },
      });
    }
  }
}

/**
 * `scanTopK` with the same arguments and result, run by the SIMD kernel over a copy of the vectors.
 * The copy costs about as much as one JavaScript scan, so use it for one-off searches and tests; a store
 * keeps its vectors in a `SimdVectorSpace` instead.
 */
export function simdScanTopK(vectors: Float32Array, dimensions: number, query: Float32Array, rows: Int32Array | null, count: number, topK: number): SearchHits {
  const stored = rows === null ? count : Math.floor(vectors.length / dimensions);
  const space = new SimdVectorSpace({ dimensions, initialCapacity: Math.max(1, stored) });
  space.append(vectors.subarray(0, stored * dimensions));
  return space.search(query, topK, rows, count);
}
