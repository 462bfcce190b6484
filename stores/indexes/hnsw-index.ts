import { z } from 'zod';
import { parseOptions } from '../../src/runtime/options.ts';
import { AxonError } from '../../src/errors.ts';
import { decodeHnsw, encodeHnsw } from './hnsw-index-format.ts';
import { type SimdVectorSpace, type SpaceTenant, WASM_MEMORY_LIMIT_BYTES } from './simd/simd-index.ts';
import {
  alignTo,
  formatBytes,
  type GraphHost,
  nodeWord,
  type GraphLayout,
  pagedBytes,
  planGraph,
  planLayout,
  planWithinLimit,
  upperSlotsFor,
  WASM_PAGE_BYTES,
} from './simd/space-layout.ts';
import { createMemory, instantiateKernel, type SearchKernel, type WasmMemory } from './simd/wasm-runtime.ts';
import { assertEf, assertTopK } from './arguments.ts';
import type { RowObserver, VectorIndex } from './vector-index.ts';
import type { SearchHits } from './vector-scan.ts';

export const hnswIndexOptionsSchema = z
  .object({
    /** Length of every vector. */
    dimensions: z.number().int().min(1),
    /** Name used in errors, usually the owning store's. @default 'hnsw-index' */
    component: z.string().min(1).default('hnsw-index'),
    /**
     * Neighbours kept per node on the upper layers (twice as many on layer 0). More: better recall on
     * high-dimensional data, more memory (8m + 4 bytes a node on layer 0) and slower adds. @default 32
     */
    m: z.number().int().min(2).max(128).default(32),
    /** Candidates considered while linking a new node. More: a better graph, slower adds. @default 200 */
    efConstruction: z.number().int().min(1).default(200),
    /**
     * Candidates considered by a search unless the query says otherwise (at least topK are). On SciFact
     * embedded by LocalHashEmbeddings, m 32 and ef 160 found 0.98 of the exact top 10. @default 160
     */
    ef: z.number().int().min(1).default(160),
    /** Seed of the level draws, so the same inserts build the same graph. @default 42 */
    seed: z.number().int().default(42),
    /**
     * Renumber the graph without the free slots deletes leave once they are this share of all nodes (a pass
     * over the links; no vector is linked again). Adds reuse free slots first. @default 0.25
     */
    rebuildRatio: z.number().gt(0).max(1).default(0.25),
    /** Nodes allocated up front; the WebAssembly memory is rebuilt at twice the size when full. @default 1024 */
    initialCapacity: z.number().int().min(1).default(1024),
    /** Largest WebAssembly memory the graph may take, in bytes: at most 4 GiB, the most one memory addresses. @default 4 GiB */
    memoryLimitBytes: z.number().int().min(WASM_PAGE_BYTES).max(WASM_MEMORY_LIMIT_BYTES).default(WASM_MEMORY_LIMIT_BYTES),
  })
  .strict();

export type HnswIndexOptions = z.input<typeof hnswIndexOptionsSchema>;

/** What `HnswIndex.deserialize` accepts: the options that do not shape the graph, and where live vectors come from. */
export interface HnswLoadOptions extends Pick<HnswIndexOptions, 'component' | 'ef' | 'rebuildRatio' | 'memoryLimitBytes'> {
  /**
   * The vector of a live node, by id, for bytes saved with `serialize({ vectors: 'deleted' })` (required for
   * those, not called for the others); `undefined` when the document is gone, which loads the node as deleted.
   */
  vectorOf?: (id: string) => ArrayLike<number> | undefined;
  /**
   * Load the graph over the vectors of this index instead of its own copy (see `HnswIndex.over`): a live
   * node takes the row of its id, and a node whose id the index does not hold is deleted. The bytes' own
   * vectors, if any, are not read, and `vectorOf` is not called.
   */
  over?: VectorIndex;
}

/** Ids and dot-product scores, best first. */
export interface HnswHits {
  readonly ids: string[];
  readonly scores: Float64Array;
}

/** The highest level a node can draw (levels are stored in a byte). */
const MAX_LEVEL = 255;

/** Candidates re-scored exactly beyond `topK` by `searchRows` before the rounding bound is checked (as `SimdVectorSpace.search` keeps). */
const RESCORE_MARGIN = 16;

/**
 * Approximate nearest neighbours by dot product (the cosine for unit vectors) with a hierarchical navigable
 * small-world graph (Malkov and Yashunin, 2016): for large collections, where an exact scan (see
 * `SimdVectorSpace`) takes too long per query.
 *
 * The vectors, every layer of the graph, the visit marks and the search heaps live in one WebAssembly
 * memory, and the SIMD kernel (stores/indexes/simd/search-kernel.wat) runs a whole search (the descent
 * through the upper layers, the bounded best-first search of layer 0 and the exact re-score of the hits)
 * in one call, and links a new node (its neighbour searches, the selection heuristic and the pruning of
 * the neighbours' lists) in another. The walk compares float32 scores; the hits returned are re-scored in
 * float64 (the scores `scanTopK` gives). Like `SimdVectorSpace`, the memory is replaced by a larger copy
 * when full, never grown in place. One memory holds at most 4 GiB: at m 32, about 665,000 vectors of 1536
 * dimensions or 2.3 million of 384, with their graph (`CAPACITY_EXCEEDED` past that; `HnswIndex.maxNodes`).
 *
 * `new HnswIndex(...)` keeps its own copy of the vectors. `HnswIndex.over(vectorIndex)` keeps none: its
 * regions go into the memory of the `VectorIndex`'s vectors and every node reads its document's row there,
 * followed through the index's deletes (which move rows) by a `RowObserver`.
 *
 * Neighbours are chosen with the paper's diversity heuristic. Adding an id that exists replaces it.
 * Deleting unlinks the node at once: each neighbour that linked to it takes, in its place, the deleted
 * node's neighbour nearest to it, and the slot goes to the next add (links that other nodes kept to the
 * slot then reach the new vector). Once free slots reach `rebuildRatio` of the nodes the graph is
 * renumbered without them (no vector is linked again). Filters are not applied here: a filtered search
 * stays exact, over the rows the filter selects.
 *
 * @example
 * const index = new HnswIndex({ dimensions: 2 });
 * index.add('a', new Float32Array([1, 0]));
 * index.add('b', new Float32Array([0, 1]));
 * index.search(new Float32Array([0.9, 0.1]), 1, { ef: 32 }); // { ids: ['a'], scores: [0.89999998] }
 */
export class HnswIndex implements RowObserver, SpaceTenant {
  readonly component: string;
  readonly dimensions: number;
  /** The options that shape the graph (a saved graph keeps those it was built with). */
  readonly m: number;
  readonly efConstruction: number;
  private readonly options: z.output<typeof hnswIndexOptionsSchema>;
  private readonly maxLayerZero: number;
  private layout!: GraphLayout;
  private memory!: WasmMemory;
  private kernel!: SearchKernel;
  /** Views of the whole memory. */
  private floats!: Float32Array;
  private ints!: Int32Array;
  private bytes!: Uint8Array;
  /** Nodes in use or free: slots 0..nodes-1. */
  private nodes = 0;
  private levels!: Uint8Array;
  /** Upper lists allocated to each node in the pool (at least its level: a reused slot keeps its lists). */
  private allocatedLevels!: Uint8Array;
  /** Upper-layer pool slots handed out: each allocation is L lists of m + 1 slots, from the end. */
  private upperUsed = 0;
  private nodeIds: string[] = [];
  /** Without a host: the live node of each id, in the order the ids were added. With one, ids are looked up through the host (`nodeOf`). */
  private readonly nodeById = new Map<string, number>();
  /** Slots of deleted nodes, unlinked (flag 2), for the next adds: the last freed is reused first. */
  private freeSlots: number[] = [];
  private entryPoint = -1;
  private maxLevel = -1;
  private randomState: number;
  /**
   * With `over`: the index whose vectors the nodes read, its space (whose capacity is the graph's: a node
   * per row), the upper-pool slots the graph asks for, and the node at each row (-1: none).
   */
  private host: { index: VectorIndex; space: SimdVectorSpace; upperWanted: number; nodeOfRow: Int32Array; staged: Map<string, number> } | undefined;

  constructor(options: HnswIndexOptions, over?: VectorIndex, upperCapacity?: number, minimumCapacity = 1) {
    const parsed = parseOptions(hnswIndexOptionsSchema, options, typeof options?.component === 'string' ? options.component : 'hnsw-index');
    this.options = parsed;
    this.component = parsed.component;
    this.dimensions = parsed.dimensions;
    this.m = parsed.m;
    this.efConstruction = parsed.efConstruction;
    this.maxLayerZero = 2 * parsed.m;
    this.randomState = parsed.seed >>> 0 || 1;
    if (over !== undefined) {
      if (over.dimensions !== undefined && over.dimensions !== parsed.dimensions) {
        throw new AxonError('DIMENSION_MISMATCH', `The graph is for ${parsed.dimensions}-dimensional vectors; the index holds ${over.dimensions}.`, {
          component: this.component,
        });
      }
      const space = over.sharedVectors(parsed.dimensions);
      this.host = { index: over, space, upperWanted: upperCapacity ?? 0, nodeOfRow: new Int32Array(0), staged: new Map() };
      // The graph's region is sized by the space's rows from now on: one plan for both, no spare memory
      // on one side that the other could not grow into.
      space.attach(this, parsed.memoryLimitBytes, minimumCapacity);
      over.observeRows(this);
      return;
    }
    const capacity = parsed.initialCapacity;
    this.allocate(capacity, Math.max(upperCapacity ?? 0, upperSlotsFor(capacity, parsed.m)), minimumCapacity);
  }

  /** SpaceTenant (with `over`): the bytes of the graph's region for `capacity` nodes, beside as many rows. */
  bytesFor(capacity: number): number {
    return planGraph(capacity, this.dimensions, this.m, Math.max(this.host!.upperWanted, upperSlotsFor(capacity, this.m)), this.hostGeometry()).bytes;
  }

  /** SpaceTenant (with `over`): the host replaced its memory; take the new region and copy the graph into it. */
  moved(old: ArrayBuffer): void {
    const previous = this.layout;
    const shared = this.host!.space.shared;
    if (shared.owner !== this) return;
    this.memory = { buffer: shared.buffer };
    this.kernel = shared.kernel;
    this.floats = new Float32Array(shared.buffer);
    this.ints = new Int32Array(shared.buffer);
    this.bytes = new Uint8Array(shared.buffer);
    const upper = Math.max(this.host!.upperWanted, upperSlotsFor(shared.capacity, this.m));
    this.layout = planGraph(shared.capacity, this.dimensions, this.m, upper, { base: shared.tenant, vectors: shared.vectors, stride: shared.stride });
    if (previous === undefined) {
      this.levels = new Uint8Array(this.layout.capacity);
      this.allocatedLevels = new Uint8Array(this.layout.capacity);
    } else {
      this.moveRegions(old, previous);
      this.resizeLevels();
    }
    // After the copy, which brought the old visit marks along.
    this.configure();
  }

  /**
   * A graph over the vectors of `vectors` (a `VectorIndex`), keeping no copy of its own: its regions live in
   * the memory of those vectors and each node reads the row of its document. Rows must be added with
   * `addRow` once the index stores them; `add(id, vector)` links a vector the index is about to store (it is
   * staged past the index's last row, and walked through but never returned until `vectors.insert` stores
   * that id). The index tells the graph when deletes move rows. One graph per `VectorIndex`.
   * @throws AxonError `CAPACITY_EXCEEDED` when the vectors and the graph would pass the memory limit
   */
  static over(vectors: VectorIndex, options: HnswIndexOptions): HnswIndex {
    return new HnswIndex(options, vectors);
  }

  /** Live vectors (with `over`, those staged included). */
  get size(): number {
    return this.nodes - this.freeSlots.length;
  }

  /** Slots of deleted nodes, already unlinked from the graph, that the next adds reuse; `compact()` drops them. */
  get tombstones(): number {
    return this.freeSlots.length;
  }

  /** Bytes held: the WebAssembly memory (vectors, graph, visit marks, heaps; with `over`, the graph's region only) and two bytes a node outside it (ids not counted). */
  get memoryBytes(): number {
    const outside = this.levels.byteLength + this.allocatedLevels.byteLength;
    return (this.host ? this.layout.bytes + this.host.nodeOfRow.byteLength : this.memory.buffer.byteLength) + outside;
  }

  has(id: string): boolean {
    return this.nodeOf(id) !== undefined;
  }

  /**
   * The live ids, in the order they were added (an id added again counts as added last); with `over`, in
   * the order of their nodes. Adds and deletes while iterating may renumber the graph: copy the ids first
   * (`[...index.ids()]`) to change the index.
   */
  ids(): IterableIterator<string> {
    return this.host === undefined ? this.nodeById.keys() : this.liveIds();
  }

  /**
   * Insert a vector under `id`, replacing any vector the id had. With `over`, the vector is one the index is
   * about to store under `id` (see `over`).
   * @throws AxonError `DIMENSION_MISMATCH`, `INVALID_VECTOR` (non-finite values), `CAPACITY_EXCEEDED` when
   * the memory would pass its limit (nothing is stored, and a replaced vector stays)
   */
  add(id: string, vector: ArrayLike<number>): void {
    if (typeof id !== 'string') throw new AxonError('INVALID_INPUT', 'HNSW ids must be strings.', { component: this.component, details: { argument: 'id' } });
    this.assertVector(vector, 'vector');
    this.bind();
    this.makeRoom();
    const old = this.nodeOf(id);
    if (old !== undefined) this.unlink(old);
    if (this.host === undefined) {
      this.insert(id, -1, vector);
      return;
    }
    const row = this.host.space.stage(vector instanceof Float32Array ? vector : Float32Array.from(vector));
    this.bind();
    this.insert(id, row);
  }

  /**
   * With `over`: link the document the index stores at `row` under `id` (replacing any node of the id).
   * @throws AxonError `CAPACITY_EXCEEDED` as `add`; `INVALID_INPUT` without `over` or for a row the index does not hold
   */
  addRow(id: string, row: number): void {
    const host = this.host;
    if (host === undefined || !(row >= 0 && row < host.index.size) || host.index.idAt(row) !== id) {
      throw new AxonError(
        'INVALID_INPUT',
        `addRow(${JSON.stringify(id)}, ${String(row)}): ${host ? 'the index does not hold that id at that row' : 'this graph keeps its own vectors; use add()'}.`,
        {
          component: this.component,
          details: { argument: 'row' },
        },
      );
    }
    this.bind();
    this.makeRoom();
    const old = this.nodeOf(id);
    if (old !== undefined) this.unlink(old);
    this.insert(id, row);
  }

  /** Make room for `nodes` live nodes in all, so a bulk load allocates once (when the memory limit allows). */
  reserve(nodes: number): void {
    this.bind();
    const capacity = this.layout.capacity;
    if (nodes <= capacity) return;
    if (this.host !== undefined) {
      this.host.space.reserve(nodes);
      return;
    }
    const upper = Math.max(this.upperUsed + (MAX_LEVEL + 1) * (this.m + 1) + upperSlotsFor(nodes - this.size, this.m), upperSlotsFor(nodes, this.m));
    const previous = this.layout;
    this.reallocate(nodes, upper, (old) => this.moveRegions(old, previous), this.nodes);
    this.resizeLevels();
  }

  /**
   * Throw `CAPACITY_EXCEEDED` now, changing nothing, if `count` more adds (new ids or replacements: each
   * takes a slot, a replacement the one it frees) would pass the memory limit; for callers that must refuse
   * a batch before committing it.
   */
  assertRoomFor(count: number): void {
    const needed = this.size + count;
    if (count <= 0 || needed <= this.layout.capacity) return;
    if (this.host === undefined) {
      this.planFor(needed, needed);
      return;
    }
    const { space } = this.host;
    const int8 = space.quantization === 'int8';
    const rows = planLayout(Math.max(needed, space.rowsHeld + count), this.dimensions, int8).capacity;
    const bytes = pagedBytes(planLayout(rows, this.dimensions, int8, this.bytesFor(rows)).bytes);
    if (bytes > space.memoryLimit) throw this.capacityError(needed, bytes, space.memoryLimit);
  }

  /** Renumber the graph without its free slots now (what deletes do at `rebuildRatio`): no vector is linked again. */
  compact(): void {
    if (this.freeSlots.length === 0) return;
    this.bind();
    const { layerZero, upperIndex, upperPool, vectors, stride } = this.layout;
    const ints = this.ints;
    const renumbered = new Int32Array(this.nodes);
    let live = 0;
    for (let node = 0; node < this.nodes; node++) renumbered[node] = this.flagOf(node) === 2 ? -1 : live++;
    /** Copy a list (count at `from` in `source`) to `to`, renumbered, without links to free slots. */
    const moveList = (source: Int32Array, from: number, to: number) => {
      const count = source[from];
      let kept = 0;
      for (let slot = 1; slot <= count; slot++) {
        const target = renumbered[source[from + slot]];
        if (target >= 0) ints[to + 1 + kept++] = target;
      }
      ints[to] = kept;
    };
    const listSlots = this.m + 1;
    const oldUpper = ints.slice(upperPool / 4, upperPool / 4 + this.upperUsed);
    let upperUsed = 0;
    for (let node = 0; node < this.nodes; node++) {
      const target = renumbered[node];
      if (target < 0) continue;
      // Nodes only move down, so each is copied before its new place is written over.
      moveList(ints, layerZero / 4 + node * (this.maxLayerZero + 1), layerZero / 4 + target * (this.maxLayerZero + 1));
      const level = this.levels[node];
      const start = ints[upperIndex / 4 + node];
      ints[upperIndex / 4 + target] = upperUsed;
      for (let list = 0; list < level; list++) moveList(oldUpper, start + list * listSlots, upperPool / 4 + upperUsed + list * listSlots);
      upperUsed += level * listSlots;
      this.levels[target] = level;
      this.allocatedLevels[target] = level;
      this.nodeIds[target] = this.nodeIds[node];
      this.setFlag(target, this.flagOf(node));
      if (this.host === undefined) {
        // This index's own vectors sit at the row of their node: they move with it.
        this.bytes.copyWithin(vectors + target * stride, vectors + node * stride, vectors + (node + 1) * stride);
        this.setRow(target, target);
      } else {
        const row = this.rowOf(node);
        this.setRow(target, row);
        // A staged node's row is not the index's yet; only stored rows are looked up by row.
        if (this.flagOf(target) === 0) this.host.nodeOfRow[row] = target;
      }
    }
    for (const [id, node] of this.nodeById) this.nodeById.set(id, renumbered[node]);
    if (this.host !== undefined) for (const [id, node] of this.host.staged) this.host.staged.set(id, renumbered[node]);
    this.nodeIds.length = live;
    this.nodes = live;
    this.upperUsed = upperUsed;
    this.freeSlots = [];
    this.entryPoint = this.entryPoint < 0 ? -1 : renumbered[this.entryPoint];
  }

  /**
   * The most nodes one graph with these settings can hold within its memory limit; with `sharedWith`, for a
   * graph `over` a `VectorIndex`, the most documents the vectors (float32, and int8 codes with `int8`) and
   * the graph hold together in one memory.
   */
  static maxNodes(dimensions: number, options: { m: number; efConstruction: number; memoryLimitBytes: number; sharedWith?: { int8: boolean } }): number {
    const { m, sharedWith } = options;
    const fits = (nodes: number) => {
      if (sharedWith === undefined) return pagedBytes(planGraph(nodes, dimensions, m).bytes) <= options.memoryLimitBytes;
      const host = { base: 0, vectors: 0, stride: alignTo(dimensions * 4, 16) };
      const graphBytes = planGraph(nodes, dimensions, m, upperSlotsFor(nodes, m), host).bytes;
      return pagedBytes(planLayout(nodes, dimensions, sharedWith.int8, graphBytes).bytes) <= options.memoryLimitBytes;
    };
    if (!fits(1)) return 0;
    let low = 1;
    let high = 2;
    while (fits(high)) {
      low = high;
      high *= 2;
    }
    // fits(low) and not fits(high): bisect.
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (fits(middle)) low = middle;
      else high = middle;
    }
    return low;
  }

  /** Remove an id; returns whether it was present. Unlinks its node at once (see the class); may renumber the graph (see `rebuildRatio`). */
  delete(id: string): boolean {
    const node = this.nodeOf(id);
    if (node === undefined) return false;
    this.bind();
    this.unlink(node);
    if (this.freeSlots.length >= this.options.rebuildRatio * this.nodes) this.compact();
    return true;
  }

  /**
   * The `topK` live vectors with the highest dot product with `query`, best first (approximately).
   * @param options.ef candidates explored on the bottom layer (at least `topK`): more is slower and finds more of the true top K
   */
  search(query: ArrayLike<number>, topK: number, options: { ef?: number } = {}): HnswHits {
    assertTopK(topK, this.component);
    this.assertVector(query, 'query vector');
    assertEf(options.ef, this.component);
    const ef = Math.max(topK, options.ef ?? this.options.ef);
    if (this.size === 0) return { ids: [], scores: new Float64Array(0) };
    this.bind();
    const { query: target, nearest, frontier } = this.layout;
    this.floats.set(query, target / 4);
    const found = this.kernel.hnsw_search(target, this.entryPoint, this.maxLevel, ef, 1, topK, frontier);
    const count = Math.min(topK, found);
    const ids = new Array<string>(count);
    const scores = new Float64Array(this.memory.buffer, frontier, count).slice();
    for (let rank = 0; rank < count; rank++) ids[rank] = this.nodeIds[this.ints[nearest / 4 + 2 * rank]];
    return { ids, scores };
  }

  /**
   * With `over`: the rows of the `topK` best of the `ef` candidates a walk finds for the query that `write`
   * puts in the view it is handed (the query region, `dimensions` floats), all `ef` re-scored exactly:
   * what the index's exact scan over those candidate rows returns (the same rows in the same order, ties to
   * the lower row, the same float64 scores). Nothing is allocated but the result.
   */
  searchRows(write: (query: Float32Array) => void, topK: number, ef: number): SearchHits {
    assertTopK(topK, this.component);
    assertEf(ef, this.component);
    if (this.host === undefined || this.size === 0) return { rows: new Int32Array(0), scores: new Float64Array(0) };
    this.bind();
    const { query: target, nearest, frontier } = this.layout;
    write(new Float32Array(this.memory.buffer, target, this.dimensions));
    const candidates = Math.max(topK, ef);
    // The exact top K of the candidates is among the best topK + 16 by float32 score unless rounding could
    // reorder across that cut: re-score those, and all candidates only when the bound cannot rule it out.
    const rescored = Math.min(topK + RESCORE_MARGIN, candidates);
    const found = this.kernel.hnsw_search(target, this.entryPoint, this.maxLevel, candidates, 1, rescored, frontier);
    const count = Math.min(topK, found);
    if (found > rescored) {
      // The VectorIndex's vectors and queries are unit vectors: |row| |query| ≤ 1 up to float32 rounding.
      const bound = (this.layout.stride / 32 + 8) * 2 ** -23 * 1.001;
      const cut = this.floats[nearest / 4 + 2 * rescored + 1];
      const kth = new Float64Array(this.memory.buffer, frontier, count)[count - 1];
      if (!(kth > cut + bound)) this.kernel.hnsw_rescore(target, found, frontier);
    }
    const hits = { rows: new Int32Array(count), scores: new Float64Array(this.memory.buffer, frontier, count).slice() };
    for (let rank = 0; rank < count; rank++) hits.rows[rank] = this.rowOf(this.ints[nearest / 4 + 2 * rank]);
    return hits;
  }

  /** The row of a node's vector, and its flag (0 live, 1 walked through but not returned, 2 unlinked): see `GraphLayout.nodes`. */
  private rowOf(node: number): number {
    return this.ints[this.layout.nodes / 4 + 2 * node] & 0x3fffffff;
  }

  private flagOf(node: number): number {
    return this.ints[this.layout.nodes / 4 + 2 * node] >>> 30;
  }

  private setNode(node: number, row: number, flag: number): void {
    this.ints[this.layout.nodes / 4 + 2 * node] = nodeWord(row, flag);
  }

  private setRow(node: number, row: number): void {
    this.setNode(node, row, this.flagOf(node));
  }

  private setFlag(node: number, flag: number): void {
    this.setNode(node, this.rowOf(node), flag);
  }

  /** RowObserver: the document of `id` is stored at `row`; its node (staged, or stored elsewhere before) reads it there now. */
  rowStored(id: string, row: number): void {
    const host = this.host;
    const node = host?.staged.get(id);
    if (host === undefined || node === undefined) return;
    this.bind();
    host.staged.delete(id);
    this.setRow(node, row);
    this.nodeOfRowArray(row + 1)[row] = node;
    this.setFlag(node, 0);
  }

  /** RowObserver: the document at `row` is gone. A node still reading it (the graph was not told) is deleted. */
  rowRemoved(row: number): void {
    const host = this.host;
    if (host === undefined || row >= host.nodeOfRow.length) return;
    const node = host.nodeOfRow[row];
    host.nodeOfRow[row] = -1;
    if (node < 0 || this.flagOf(node) === 2) return;
    this.bind();
    this.unlink(node);
  }

  /** RowObserver: the document at row `from` moved to `to`. */
  rowMoved(from: number, to: number): void {
    const host = this.host;
    if (host === undefined || from >= host.nodeOfRow.length) return;
    const node = host.nodeOfRow[from];
    host.nodeOfRow[from] = -1;
    if (node < 0) return;
    this.bind();
    this.setRow(node, to);
    this.nodeOfRowArray(to + 1)[to] = node;
  }

  /**
   * The whole index as bytes (graph, vectors, ids, options): see hnsw-index-format.ts.
   * @param options.vectors `'all'` (default) writes every live node's vector; `'deleted'` none, for a caller
   * that keeps the vectors and passes them back to `deserialize` through `vectorOf` or `over` (deleted nodes
   * have no vector: the name is kept from when they did): at 384 dimensions that leaves about a sixth of the bytes.
   */
  serialize(options: { vectors?: 'all' | 'deleted' } = {}): Uint8Array {
    const form = options?.vectors ?? 'all';
    if (form !== 'all' && form !== 'deleted') {
      throw new AxonError('INVALID_OPTION', `serialize's vectors must be 'all' or 'deleted', got ${String(form)}.`, {
        component: this.component,
        details: { option: 'vectors' },
      });
    }
    this.bind();
    const { vectors: vectorBase, stride, layerZero, upperIndex, upperPool } = this.layout;
    const listSlots = this.m + 1;
    const nodes = this.nodes;
    const levels = this.levels.subarray(0, nodes);
    let upperSlots = 0;
    for (let node = 0; node < nodes; node++) upperSlots += levels[node] * listSlots;
    const upperLayers = new Int32Array(upperSlots);
    let offset = 0;
    for (let node = 0; node < nodes; node++) {
      const slots = levels[node] * listSlots;
      if (slots === 0) continue;
      const start = upperPool / 4 + this.ints[upperIndex / 4 + node];
      upperLayers.set(this.ints.subarray(start, start + slots), offset);
      offset += slots;
    }
    const deleted = new Uint8Array(nodes);
    for (let node = 0; node < nodes; node++) deleted[node] = this.flagOf(node) === 2 ? 1 : 0;
    const vectors = new Float32Array(form === 'all' ? this.size * this.dimensions : 0);
    if (form === 'all') {
      let row = 0;
      for (let node = 0; node < nodes; node++) {
        if (deleted[node]) continue;
        const start = (vectorBase + this.rowOf(node) * stride) / 4;
        vectors.set(this.floats.subarray(start, start + this.dimensions), row++ * this.dimensions);
      }
    }
    const order = new Int32Array(nodes);
    let position = 0;
    if (this.host === undefined) for (const node of this.nodeById.values()) order[position++] = node;
    else for (let node = 0; node < nodes; node++) if (!deleted[node]) order[position++] = node;
    for (const node of this.freeSlots) order[position++] = node;
    const ids = this.nodeIds.slice(0, nodes);
    for (const node of this.freeSlots) ids[node] = '';
    const rows = new Int32Array(nodes).fill(-1);
    if (this.host !== undefined) for (let node = 0; node < nodes; node++) if (!deleted[node]) rows[node] = this.rowOf(node);
    const { dimensions, m, efConstruction, ef, seed } = this.options;
    return encodeHnsw(
      {
        vectors: form,
        dimensions,
        m,
        efConstruction,
        ef,
        seed,
        randomState: this.randomState,
        nodes,
        entryPoint: this.entryPoint,
        maxLevel: this.maxLevel,
        ids,
      },
      {
        levels,
        deleted,
        vectors,
        layerZero: this.ints.subarray(layerZero / 4, layerZero / 4 + nodes * (this.maxLayerZero + 1)),
        upperLayers,
        order,
        rows,
      },
    );
  }

  /**
   * Rebuild an index from `serialize`'s bytes. `options` may change what does not shape the graph
   * (component, ef, rebuildRatio, memoryLimitBytes), and load it `over` a `VectorIndex`.
   *
   * Bytes saved with `vectors: 'deleted'` need `options.vectorOf` (or `over`), called once per live node with
   * its id, to supply its vector (stored as `add` stores it). When it returns `undefined` (the document was
   * deleted after the bytes were written) the node is deleted as `delete` would: unlinked, its neighbours
   * repaired, its slot free. Bytes with all vectors do not call `vectorOf`.
   * @throws AxonError `STORE_CORRUPT` when the bytes are not a valid index, `CAPACITY_EXCEEDED` when it does
   * not fit the memory limit, `INVALID_OPTION` when the bytes need `vectorOf` and it is missing,
   * `DIMENSION_MISMATCH` or `INVALID_VECTOR` for a vector `vectorOf` supplies
   */
  static deserialize(bytes: Uint8Array, options: HnswLoadOptions = {}): HnswIndex {
    const component = options.component ?? 'hnsw-index';
    const { header, sections } = decodeHnsw(bytes, component);
    const { vectorOf, over } = options;
    if (header.vectors === 'deleted' && over === undefined && typeof vectorOf !== 'function') {
      throw new AxonError(
        'INVALID_OPTION',
        `These HNSW bytes were saved without the vectors of their live nodes (serialize({ vectors: 'deleted' })), and no vectorOf was given to supply them${vectorOf === undefined ? '' : ` (got ${typeof vectorOf})`}.`,
        {
          component,
          fix: "Pass HnswIndex.deserialize(bytes, { vectorOf: (id) => the stored vector of id, or undefined when it is gone }), or save with serialize({ vectors: 'all' }).",
          details: { option: 'vectorOf' },
        },
      );
    }
    const nodes = header.nodes;
    const index = new HnswIndex(
      {
        dimensions: header.dimensions,
        m: header.m,
        efConstruction: header.efConstruction,
        ef: options.ef ?? header.ef,
        seed: header.seed,
        rebuildRatio: options.rebuildRatio,
        memoryLimitBytes: options.memoryLimitBytes,
        component,
        initialCapacity: Math.max(1, nodes),
      },
      over,
      sections.upperLayers.length + (MAX_LEVEL + 1) * (header.m + 1),
      Math.max(1, nodes),
    );
    index.assertGraph(
      header.nodes,
      header.entryPoint,
      header.maxLevel,
      sections.levels,
      sections.deleted,
      sections.layerZero,
      sections.upperLayers,
      sections.unlinkFree === true,
    );
    const { vectors, stride, layerZero, upperIndex, upperPool } = index.layout;
    const { dimensions } = header;
    const floats = index.floats;
    const ints = index.ints;
    index.nodes = nodes;
    index.levels.set(sections.levels);
    index.allocatedLevels.set(sections.levels);
    // The bulk of the graph, copied as blocks.
    ints.set(sections.layerZero, layerZero / 4);
    ints.set(sections.upperLayers, upperPool / 4);
    let offset = 0;
    for (let node = 0; node < nodes; node++) {
      ints[upperIndex / 4 + node] = offset;
      index.setNode(node, node, sections.deleted[node] === 1 ? 2 : 0);
      offset += sections.levels[node] * (header.m + 1);
    }
    index.nodeIds = header.ids;
    index.upperUsed = offset;
    index.entryPoint = header.entryPoint;
    index.maxLevel = header.maxLevel;
    index.randomState = header.randomState >>> 0 || 1;
    let live = nodes;
    for (let node = 0; node < nodes; node++) live -= sections.deleted[node];
    if (over === undefined && header.vectors === 'all') {
      let savedRow = 0;
      for (let node = 0; node < nodes; node++) {
        if (sections.deleted[node]) continue;
        floats.set(sections.vectors.subarray(savedRow * dimensions, (savedRow + 1) * dimensions), (vectors + node * stride) / 4);
        savedRow++;
      }
    }
    const gone: number[] = [];
    const nodeOfRow = over === undefined ? undefined : index.nodeOfRowArray(over.size);
    for (let position = 0; position < live; position++) {
      const node = sections.order[position];
      const id = header.ids[node];
      if (nodeOfRow !== undefined) {
        // Ids are looked up through the host: no map of the graph's own, only the row of each node. The row
        // saved is checked first: rows follow the order of the segments until deletes move some.
        const hint = sections.rows[node];
        const row = hint >= 0 && hint < over!.size && over!.idAt(hint) === id ? hint : over!.rowOf(id);
        if (row === undefined) gone.push(node);
        else if (nodeOfRow[row] >= 0) throw corruptData(component, `the id "${id}" belongs to two live nodes`);
        else {
          index.setRow(node, row);
          nodeOfRow[row] = node;
        }
        continue;
      }
      if (index.nodeById.has(id)) throw corruptData(component, `the id "${id}" belongs to two live nodes`);
      index.nodeById.set(id, node);
      if (header.vectors === 'deleted') {
        const vector = vectorOf!(id);
        if (vector === undefined) gone.push(node);
        else {
          index.assertVector(vector, `vector of "${id}"`);
          floats.set(vector, (vectors + node * stride) / 4);
        }
      }
    }
    index.freeSlots = Array.from(sections.order.subarray(live));
    // Nodes whose vectors are gone are deleted once every other vector is in place for the repairs, and all
    // are flagged first, so no repair reads a vector that is not there.
    for (const node of gone) index.setFlag(node, 2);
    // The links above layer 0 to all of them are dropped in one pass at the end, not one pass over every node
    // each (the repairs never read or add a node flagged 2, so the order does not change a list).
    const doomed = new Uint8Array(index.nodes);
    for (const node of gone) {
      index.unlink(node, false);
      doomed[node] = 1;
    }
    // A version-2 file's free slots are its tombstones, still linked: unlinked now, as deletes now are.
    if (sections.unlinkFree) {
      for (const node of index.freeSlots) {
        index.kernel.hnsw_unlink(node, index.levels[node]);
        doomed[node] = 1;
      }
    }
    index.removeUpperLinksOf(doomed);
    if (index.entryPoint >= 0 && index.flagOf(index.entryPoint) === 2) index.chooseEntryPoint();
    return index;
  }

  // --- Internal helpers ---

  /**
   * Take a free slot or the next node (there is room) for `id` and link it into the graph: the vector at
   * `row` of the host (staged when `row` is past the host's rows), or, without a host, `vector`, stored at
   * the node's own row.
   */
  private insert(id: string, row: number, vector?: ArrayLike<number>): void {
    const level = this.drawLevel();
    const node = this.freeSlots.length > 0 ? this.freeSlots.pop()! : this.nodes++;
    // A slot keeps the upper lists it had; a taller node gets new ones from the pool (`makeRoom` left room).
    if (level > this.allocatedLevels[node]) {
      this.ints[this.layout.upperIndex / 4 + node] = this.upperUsed;
      this.upperUsed += level * (this.m + 1);
      this.allocatedLevels[node] = level;
    }
    const { vectors, stride, layerZero, upperIndex, upperPool } = this.layout;
    const host = this.host;
    if (host === undefined) {
      this.floats.set(vector!, (vectors + node * stride) / 4);
      this.setRow(node, node);
      this.setFlag(node, 0);
    } else {
      this.setRow(node, row);
      const stored = row < host.index.size;
      if (stored) this.nodeOfRowArray(row + 1)[row] = node;
      this.setFlag(node, stored ? 0 : 1);
    }
    this.levels[node] = level;
    const list = layerZero / 4 + node * (this.maxLayerZero + 1);
    this.ints.fill(0, list, list + this.maxLayerZero + 1);
    const upper = upperPool / 4 + this.ints[upperIndex / 4 + node];
    this.ints.fill(0, upper, upper + level * (this.m + 1));
    this.nodeIds[node] = id;
    if (host === undefined) this.nodeById.set(id, node);
    else if (this.flagOf(node) === 1) host.staged.set(id, node);
    if (this.entryPoint < 0) {
      this.entryPoint = node;
      this.maxLevel = level;
      return;
    }
    this.kernel.hnsw_link(node, level, this.entryPoint, this.maxLevel, this.options.efConstruction);
    if (level > this.maxLevel) {
      this.entryPoint = node;
      this.maxLevel = level;
    }
  }

  /**
   * Unlink a live node and free its slot; a new entry point when it was the entry. With `upperLinks` false the
   * caller drops the links to it above layer 0 itself (`removeUpperLinksOf`, for many nodes at once).
   */
  private unlink(node: number, upperLinks = true): void {
    const host = this.host;
    if (host === undefined) this.nodeById.delete(this.nodeIds[node]);
    else if (this.flagOf(node) === 1) host.staged.delete(this.nodeIds[node]);
    else if (this.flagOf(node) === 0) {
      const row = this.rowOf(node);
      if (host.nodeOfRow[row] === node) host.nodeOfRow[row] = -1;
    }
    this.setFlag(node, 2);
    const level = this.levels[node];
    this.kernel.hnsw_unlink(node, level);
    // Upper layers must not keep a link to the slot: the node that reuses it may not reach that level. They
    // hold about one node in m, so every list above layer 0 is looked through.
    if (upperLinks && level > 0) this.removeUpperLinks(node, level);
    this.freeSlots.push(node);
    if (node === this.entryPoint) this.chooseEntryPoint();
  }

  /** Remove `node` from every list on levels 1..level. */
  private removeUpperLinks(node: number, level: number): void {
    const { upperIndex, upperPool } = this.layout;
    const ints = this.ints;
    const listSlots = this.m + 1;
    for (let owner = 0; owner < this.nodes; owner++) {
      const top = Math.min(level, this.levels[owner]);
      if (top === 0 || owner === node) continue;
      const lists = upperPool / 4 + ints[upperIndex / 4 + owner];
      for (let current = 1; current <= top; current++) {
        const list = lists + (current - 1) * listSlots;
        const count = ints[list];
        for (let slot = 1; slot <= count; slot++) {
          if (ints[list + slot] !== node) continue;
          ints.copyWithin(list + slot, list + slot + 1, list + count + 1);
          ints[list] = count - 1;
          break;
        }
      }
    }
  }

  /** Remove every node marked in `doomed` from every list above layer 0, in one pass over the lists. */
  private removeUpperLinksOf(doomed: Uint8Array): void {
    if (!doomed.includes(1)) return;
    const { upperIndex, upperPool } = this.layout;
    const ints = this.ints;
    const listSlots = this.m + 1;
    for (let owner = 0; owner < this.nodes; owner++) {
      const top = this.levels[owner];
      if (top === 0 || doomed[owner] === 1) continue;
      const lists = upperPool / 4 + ints[upperIndex / 4 + owner];
      for (let current = 1; current <= top; current++) {
        const list = lists + (current - 1) * listSlots;
        const count = ints[list];
        let kept = 0;
        for (let slot = 1; slot <= count; slot++) {
          const neighbour = ints[list + slot];
          if (doomed[neighbour] !== 1) ints[list + ++kept] = neighbour;
        }
        ints[list] = kept;
      }
    }
  }

  /** The first live node of the highest level, or none. */
  private chooseEntryPoint(): void {
    this.entryPoint = -1;
    this.maxLevel = -1;
    for (let node = 0; node < this.nodes; node++) {
      if (this.flagOf(node) !== 2 && this.levels[node] > this.maxLevel) {
        this.entryPoint = node;
        this.maxLevel = this.levels[node];
      }
    }
  }

  /** The live node of `id`: without a host from the graph's map; with one, a staged node by id, else the node at the id's row. */
  private nodeOf(id: string): number | undefined {
    const host = this.host;
    if (host === undefined) return this.nodeById.get(id);
    const staged = host.staged.get(id);
    if (staged !== undefined) return staged;
    const row = host.index.rowOf(id);
    if (row === undefined || row >= host.nodeOfRow.length) return undefined;
    const node = host.nodeOfRow[row];
    return node >= 0 ? node : undefined;
  }

  private *liveIds(): IterableIterator<string> {
    for (let node = 0; node < this.nodes; node++) if (this.flagOf(node) !== 2) yield this.nodeIds[node];
  }

  /** The host's row-to-node array, grown to at least `rows` entries. */
  private nodeOfRowArray(rows: number): Int32Array {
    const host = this.host!;
    if (host.nodeOfRow.length < rows) {
      const grown = new Int32Array(Math.max(rows, 2 * host.nodeOfRow.length, 1024)).fill(-1);
      grown.set(host.nodeOfRow);
      host.nodeOfRow = grown;
    }
    return host.nodeOfRow;
  }

  /** Grow, unless there is a slot and room in the upper pool for the tallest node. */
  private makeRoom(): void {
    const slotFree = this.freeSlots.length > 0 || this.nodes < this.layout.capacity;
    if (!slotFree || this.upperUsed + MAX_LEVEL * (this.m + 1) > this.layout.upperCapacity) this.grow();
  }

  /** Move into room for twice the nodes (or as many as the limit allows) and a larger upper pool. */
  private grow(): void {
    const previous = this.layout;
    const host = this.host;
    if (host !== undefined) {
      // Over a host the nodes grow with its rows; the pool, rarely, on its own.
      if (this.freeSlots.length === 0 && this.nodes >= previous.capacity) host.space.grow(this.nodes + 1);
      if (this.upperUsed + MAX_LEVEL * (this.m + 1) > this.layout.upperCapacity) {
        const needed = this.upperUsed + (MAX_LEVEL + 1) * (this.m + 1);
        for (const wanted of [needed + this.upperUsed, needed]) {
          host.upperWanted = wanted;
          try {
            host.space.tenantResized();
            return;
          } catch (error) {
            if (wanted === needed || !AxonError.isInstance(error) || error.code !== 'CAPACITY_EXCEEDED') throw error;
          }
        }
      }
      return;
    }
    const full = this.freeSlots.length === 0 && this.nodes === previous.capacity;
    const capacity = full ? 2 * previous.capacity : previous.capacity;
    // The pool as planned for the capacity, and at least room for the tallest node. When the pool filled
    // before the nodes did (rare: it is planned at twice the expected need), twice what it holds if that fits.
    const needed = this.upperUsed + (MAX_LEVEL + 1) * (this.m + 1);
    const minimum = full ? this.nodes + 1 : this.nodes;
    const move = (old: ArrayBuffer) => this.moveRegions(old, previous);
    const attempts: [number, number][] = full ? [] : [[capacity, needed + this.upperUsed]];
    attempts.push([capacity, needed], [minimum, needed]);
    let error: unknown;
    for (const [nodes, upper] of attempts) {
      try {
        this.reallocate(nodes, Math.max(upper, upperSlotsFor(nodes, this.m)), move, minimum);
        this.resizeLevels();
        return;
      } catch (caught) {
        if (!AxonError.isInstance(caught) || caught.code !== 'CAPACITY_EXCEEDED') throw caught;
        error = caught;
      }
    }
    throw error;
  }

  /** Copy the graph from the memory laid out as `previous` (now `old`) into the current one. Visit marks and heaps start again. */
  private moveRegions(old: ArrayBuffer, previous: GraphLayout): void {
    const oldBytes = new Uint8Array(old);
    const next = this.layout;
    const bytes = this.bytes;
    // Strides do not change, so each region moves as one block.
    const copy = (from: number, to: number, length: number) => bytes.set(oldBytes.subarray(from, from + length), to);
    // Rows and flags; the visit marks with them are cleared by `configure`, which follows.
    copy(previous.nodes, next.nodes, this.nodes * 8);
    copy(previous.layerZero, next.layerZero, this.nodes * (this.maxLayerZero + 1) * 4);
    copy(previous.upperIndex, next.upperIndex, this.nodes * 4);
    copy(previous.upperPool, next.upperPool, this.upperUsed * 4);
    if (this.host === undefined) copy(previous.vectors, next.vectors, this.nodes * previous.stride);
  }

  /** The per-node arrays outside the memory, at the capacity of the layout. */
  private resizeLevels(): void {
    const resized = (array: Uint8Array) => {
      const copy = new Uint8Array(this.layout.capacity);
      copy.set(array.subarray(0, Math.min(array.length, copy.length)));
      return copy;
    };
    this.levels = resized(this.levels);
    this.allocatedLevels = resized(this.allocatedLevels);
  }

  /** Empty regions for an empty graph of `capacity` nodes (or as many from `minimum` up as fit the limit). */
  private allocate(capacity: number, upperCapacity: number, minimum: number): void {
    this.reallocate(capacity, upperCapacity, undefined, minimum);
    this.levels = new Uint8Array(this.layout.capacity);
    this.allocatedLevels = new Uint8Array(this.layout.capacity);
  }

  /**
   * A memory of its own for `wanted` nodes (or as many from `minimum` up as fit the limit) and `wantedUpper`
   * upper slots; `move` then copies what the old memory held.
   * @throws AxonError `CAPACITY_EXCEEDED`, changing nothing
   */
  private reallocate(wanted: number, wantedUpper: number, move: ((old: ArrayBuffer) => void) | undefined, minimum: number): void {
    const layout = this.planFor(minimum, wanted, wantedUpper);
    const old = this.memory?.buffer;
    this.memory = createMemory(pagedBytes(layout.bytes) / WASM_PAGE_BYTES);
    this.kernel = instantiateKernel(this.memory);
    this.floats = new Float32Array(this.memory.buffer);
    this.ints = new Int32Array(this.memory.buffer);
    this.bytes = new Uint8Array(this.memory.buffer);
    this.layout = layout;
    if (old !== undefined) move?.(old);
    this.configure();
  }

  /** With a host: check that the graph still holds its region there (the host tells it of every move). */
  private bind(): void {
    const host = this.host;
    // On every search: the owner alone, not the whole `shared` view.
    if (host === undefined || host.space.tenantOwner === this) return;
    throw new AxonError('INTERNAL', 'This HNSW graph no longer holds its region in the vectors it reads: another graph was made over the same index.', {
      component: this.component,
      fix: 'Keep one HnswIndex.over() per VectorIndex, and stop using one that was replaced.',
      details: { invariant: 'one-graph-per-vector-index' },
    });
  }

  /** The host's row geometry, with the graph's region at 0: what sizes a region. */
  private hostGeometry(): GraphHost {
    return { base: 0, vectors: 0, stride: alignTo(this.dimensions * 4, 16) };
  }

  private configure(): void {
    const { vectors, stride, nodes, capacity, layerZero, upperIndex, upperPool, frontier, nearest, buffer, pool, kept } = this.layout;
    this.kernel.hnsw_configure(
      vectors,
      stride,
      this.dimensions,
      nodes,
      capacity,
      layerZero,
      this.m,
      upperIndex,
      upperPool,
      frontier,
      nearest,
      buffer,
      pool,
      kept,
    );
  }

  /** A memory of its own laid out for `preferredRows` nodes, or as many from `rows` up as fit the limit. */
  private planFor(rows: number, preferredRows: number, upperSlots?: number): GraphLayout {
    const limit = this.options.memoryLimitBytes;
    const m = this.options.m;
    const plan = (capacity: number) => planGraph(capacity, this.dimensions, m, Math.max(upperSlots ?? 0, upperSlotsFor(capacity, m)));
    const planned = planWithinLimit(rows, preferredRows, plan, limit);
    if (planned) return planned;
    throw this.capacityError(rows, pagedBytes(plan(rows).bytes), limit);
  }

  private capacityError(nodes: number, neededBytes: number, limit: number): AxonError {
    const what = this.host ? ', with the vectors they read,' : '';
    return new AxonError(
      'CAPACITY_EXCEEDED',
      `${nodes.toLocaleString('en')} HNSW ${nodes === 1 ? 'node' : 'nodes'} of ${this.dimensions} dimensions (m ${this.m})${what} need ${formatBytes(neededBytes, 2)} of WebAssembly memory, past this index's limit of ${formatBytes(limit, 2)} (one 32-bit WebAssembly memory addresses at most 4 GiB). Nothing was stored.`,
      {
        component: this.component,
        fix: 'Split the collection across several stores, use fewer dimensions or a smaller m, or move it to a server store such as Qdrant.',
        details: { nodes, dimensions: this.dimensions, m: this.m, neededBytes, limitBytes: limit },
      },
    );
  }

  /** A level drawn with P(level ≥ l) = m^-l, from a seeded generator so builds are reproducible. */
  private drawLevel(): number {
    // xorshift32: small, fast and good enough to spread levels.
    let state = this.randomState;
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    this.randomState = state >>> 0;
    const uniform = (this.randomState + 1) / 2 ** 32;
    return Math.min(MAX_LEVEL, Math.floor(-Math.log(uniform) / Math.log(this.options.m)));
  }

  private assertVector(vector: ArrayLike<number>, label: string): void {
    if (vector === null || typeof vector !== 'object' || vector.length !== this.dimensions) {
      throw new AxonError('DIMENSION_MISMATCH', `The ${label} must have ${this.dimensions} values, got ${vector?.length ?? typeof vector}.`, {
        component: this.component,
      });
    }
    for (let index = 0; index < vector.length; index++) {
      if (!Number.isFinite(vector[index])) {
        throw new AxonError('INVALID_VECTOR', `${label}[${index}] is ${String(vector[index])}; every component must be a finite number.`, {
          component: this.component,
        });
      }
    }
  }

  /** Refuse a decoded graph whose links point outside it, so a damaged file cannot crash a search. One pass over every list, no call per link. */
  private assertGraph(
    nodes: number,
    entryPoint: number,
    maxLevel: number,
    levels: Uint8Array,
    deleted: Uint8Array,
    layerZero: Int32Array,
    upperLayers: Int32Array,
    /** Version 2: the entry point may be a deleted node, still linked. */
    deletedEntry = false,
  ): void {
    const corrupt = (problem: string) => corruptData(this.component, problem);
    const entryDeleted = entryPoint >= 0 && deleted[entryPoint] === 1 && !deletedEntry;
    if (entryPoint >= nodes || (entryPoint >= 0 && (entryDeleted || levels[entryPoint] !== maxLevel)) || (entryPoint < 0 && maxLevel !== -1))
      throw corrupt('its entry point is not its highest node');
    /** The first list at or after `offset` (lists of `slots` entries, `count` of them) that is too long or links outside, or -1. */
    const firstBad = (list: Int32Array, offset: number, count: number, slots: number): number => {
      for (let at = offset, end = offset + count * slots; at < end; at += slots) {
        const length = list[at];
        // Unsigned comparisons take negative values as huge ones.
        if (length >>> 0 > slots - 1) return at;
        for (let slot = at + 1, last = at + length; slot <= last; slot++) if (list[slot] >>> 0 >= nodes) return at;
      }
      return -1;
    };
    const describe = (list: Int32Array, at: number, slots: number, where: string) => {
      const length = list[at];
      return corrupt(length >>> 0 > slots - 1 ? `${where} has ${length} neighbours (at most ${slots - 1})` : `${where} links to a node that does not exist`);
    };
    const layerSlots = this.maxLayerZero + 1;
    const bad = firstBad(layerZero, 0, nodes, layerSlots);
    if (bad >= 0) throw describe(layerZero, bad, layerSlots, `node ${bad / layerSlots} on layer 0`);
    const upperSlots = this.options.m + 1;
    const badUpper = firstBad(upperLayers, 0, upperLayers.length / upperSlots, upperSlots);
    if (badUpper >= 0) throw describe(upperLayers, badUpper, upperSlots, 'a list above layer 0');
    let live = 0;
    for (let node = 0; node < nodes; node++) {
      if (deleted[node]) continue;
      live++;
      if (levels[node] > maxLevel) throw corrupt(`node ${node} is above the top level`);
    }
    if (live > 0 && entryPoint < 0) throw corrupt('it has live nodes but no entry point');
  }
}

function corruptData(component: string, problem: string): AxonError {
  return new AxonError('STORE_CORRUPT', `The HNSW index data is inconsistent: ${problem}.`, { component, fix: 'Rebuild the index from the stored vectors.' });
}
