import { z } from 'zod';
import { parseOptions } from '../../src/runtime/options.ts';
import { AxonError } from '../../src/errors.ts';
import { decodeHnsw, encodeHnsw } from './hnsw-index-format.ts';
import { WASM_MEMORY_LIMIT_BYTES } from './simd/simd-index.ts';
import { formatBytes, pagedBytes, planGraph, planWithinLimit, upperSlotsFor, WASM_PAGE_BYTES, type GraphLayout } from './simd/space-layout.ts';
import { createMemory, instantiateKernel, type SearchKernel, type WasmMemory } from './simd/wasm-runtime.ts';
import { assertEf, assertTopK } from './arguments.ts';

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
    /** Rebuild the graph without deleted nodes once they are this share of all nodes. @default 0.25 */
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
}

/** Ids and dot-product scores, best first. */
export interface HnswHits {
  readonly ids: string[];
  readonly scores: Float64Array;
}

/** The highest level a node can draw (levels are stored in a byte). */
const MAX_LEVEL = 255;

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
 * when full, never grown in place. One memory holds at most 4 GiB: at m 32, about 670,000 vectors of 1536
 * dimensions or 2.3 million of 384 (`CAPACITY_EXCEEDED` past that).
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
export class HnswIndex {
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
  private readonly nodeById = new Map<string, number>();
  /** Slots of deleted nodes, unlinked (flag 2), for the next adds: the last freed is reused first. */
  private freeSlots: number[] = [];
  private entryPoint = -1;
  private maxLevel = -1;
  private randomState: number;

  constructor(options: HnswIndexOptions) {
    const parsed = parseOptions(hnswIndexOptionsSchema, options, typeof options?.component === 'string' ? options.component : 'hnsw-index');
    this.options = parsed;
    this.component = parsed.component;
    this.dimensions = parsed.dimensions;
    this.m = parsed.m;
    this.efConstruction = parsed.efConstruction;
    this.maxLayerZero = 2 * parsed.m;
    this.randomState = parsed.seed >>> 0 || 1;
    this.allocate(this.planFor(1, parsed.initialCapacity));
  }

  /** Live vectors. */
  get size(): number {
    return this.nodes - this.freeSlots.length;
  }

  /** Slots of deleted nodes, already unlinked from the graph, that the next adds reuse; `compact()` drops them. */
  get tombstones(): number {
    return this.freeSlots.length;
  }

  /** Bytes held: the WebAssembly memory (vectors, graph, visit marks, heaps) and two bytes a node outside it (ids not counted). */
  get memoryBytes(): number {
    return this.memory.buffer.byteLength + this.levels.byteLength + this.allocatedLevels.byteLength;
  }

  has(id: string): boolean {
    return this.nodeById.has(id);
  }

  /**
   * The live ids, in the order they were added (an id added again counts as added last). Adds and deletes
   * while iterating may renumber the graph: copy the ids first (`[...index.ids()]`) to change the index.
   */
  ids(): IterableIterator<string> {
    return this.nodeById.keys();
  }

  /**
   * Insert a vector under `id`, replacing any vector the id had.
   * @throws AxonError `DIMENSION_MISMATCH`, `INVALID_VECTOR` (non-finite values), `CAPACITY_EXCEEDED` when
   * the memory would pass its limit (nothing is stored, and a replaced vector stays)
   */
  add(id: string, vector: ArrayLike<number>): void {
    if (typeof id !== 'string') throw new AxonError('INVALID_INPUT', 'HNSW ids must be strings.', { component: this.component, details: { argument: 'id' } });
    this.assertVector(vector, 'vector');
    // Room first (a slot, and upper lists for the tallest node), so a full memory refuses the add before an
    // old vector of the id is deleted.
    const slotFree = this.freeSlots.length > 0 || this.nodes < this.layout.capacity;
    if (!slotFree || this.upperUsed + MAX_LEVEL * (this.m + 1) > this.layout.upperCapacity) this.grow();
    const old = this.nodeById.get(id);
    if (old !== undefined) this.unlink(old);
    this.insert(id, vector);
  }

  /**
   * Throw `CAPACITY_EXCEEDED` now, changing nothing, if `count` more adds (new ids or replacements: each
   * takes a slot, a replacement the one it frees) would pass the memory limit; for callers that must refuse
   * a batch before committing it.
   */
  assertRoomFor(count: number): void {
    const needed = this.size + count;
    if (count > 0 && needed > this.layout.capacity) this.planFor(needed, needed);
  }

  /** Renumber the graph without its free slots now (what deletes do at `rebuildRatio`): no vector is linked again. */
  compact(): void {
    if (this.freeSlots.length === 0) return;
    const { rows, flags, layerZero, upperIndex, upperPool, vectors, stride } = this.layout;
    const ints = this.ints;
    const renumbered = new Int32Array(this.nodes);
    let live = 0;
    for (let node = 0; node < this.nodes; node++) renumbered[node] = this.bytes[flags + node] === 2 ? -1 : live++;
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
      this.bytes[flags + target] = this.bytes[flags + node];
      // This index's own vectors sit at the row of their node: they move with it.
      this.bytes.copyWithin(vectors + target * stride, vectors + node * stride, vectors + (node + 1) * stride);
      ints[rows / 4 + target] = target;
    }
    for (const [id, node] of this.nodeById) this.nodeById.set(id, renumbered[node]);
    this.nodeIds.length = live;
    this.nodes = live;
    this.upperUsed = upperUsed;
    this.freeSlots = [];
    this.entryPoint = this.entryPoint < 0 ? -1 : renumbered[this.entryPoint];
  }

  /** The most nodes one graph with these settings can hold within its memory limit. */
  static maxNodes(dimensions: number, options: { m: number; efConstruction: number; memoryLimitBytes: number }): number {
    const fits = (nodes: number) => pagedBytes(planGraph(nodes, dimensions, options.m).bytes) <= options.memoryLimitBytes;
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
    const node = this.nodeById.get(id);
    if (node === undefined) return false;
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
   * The whole index as bytes (graph, vectors, ids, options): see hnsw-index-format.ts.
   * @param options.vectors `'all'` (default) writes every live node's vector; `'deleted'` none, for a caller
   * that keeps the vectors and passes them back to `deserialize` through `vectorOf` (deleted nodes have
   * no vector: the name is kept from when they did): at 384 dimensions that leaves about a sixth of the bytes.
   */
  serialize(options: { vectors?: 'all' | 'deleted' } = {}): Uint8Array {
    const form = options?.vectors ?? 'all';
    if (form !== 'all' && form !== 'deleted') {
      throw new AxonError('INVALID_OPTION', `serialize's vectors must be 'all' or 'deleted', got ${String(form)}.`, {
        component: this.component,
        details: { option: 'vectors' },
      });
    }
    const { vectors: vectorBase, stride, layerZero, flags, upperIndex, upperPool, rows } = this.layout;
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
    for (let node = 0; node < nodes; node++) deleted[node] = this.bytes[flags + node] === 2 ? 1 : 0;
    const vectors = new Float32Array(form === 'all' ? this.size * this.dimensions : 0);
    if (form === 'all') {
      let row = 0;
      for (let node = 0; node < nodes; node++) {
        if (deleted[node]) continue;
        const start = (vectorBase + this.ints[rows / 4 + node] * stride) / 4;
        vectors.set(this.floats.subarray(start, start + this.dimensions), row++ * this.dimensions);
      }
    }
    const order = new Int32Array(nodes);
    let position = 0;
    for (const node of this.nodeById.values()) order[position++] = node;
    for (const node of this.freeSlots) order[position++] = node;
    const ids = this.nodeIds.slice(0, nodes);
    for (const node of this.freeSlots) ids[node] = '';
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
      },
    );
  }

  /**
   * Rebuild an index from `serialize`'s bytes. `options` may change what does not shape the graph
   * (component, ef, rebuildRatio, memoryLimitBytes).
   *
   * Bytes saved with `vectors: 'deleted'` need `options.vectorOf`, called once per live node with its id, to
   * supply its vector (stored as `add` stores it). When it returns `undefined` (the document was deleted
   * after the bytes were written) the node is deleted as `delete` would: unlinked, its neighbours repaired,
   * its slot free. Bytes with all vectors do not call `vectorOf`.
   * @throws AxonError `STORE_CORRUPT` when the bytes are not a valid index, `CAPACITY_EXCEEDED` when it does
   * not fit the memory limit, `INVALID_OPTION` when the bytes need `vectorOf` and it is missing,
   * `DIMENSION_MISMATCH` or `INVALID_VECTOR` for a vector `vectorOf` supplies
   */
  static deserialize(bytes: Uint8Array, options: HnswLoadOptions = {}): HnswIndex {
    const component = options.component ?? 'hnsw-index';
    const { header, sections } = decodeHnsw(bytes, component);
    const vectorOf = options.vectorOf;
    if (header.vectors === 'deleted' && typeof vectorOf !== 'function') {
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
    const index = new HnswIndex({
      dimensions: header.dimensions,
      m: header.m,
      efConstruction: header.efConstruction,
      ef: options.ef ?? header.ef,
      seed: header.seed,
      rebuildRatio: options.rebuildRatio,
      memoryLimitBytes: options.memoryLimitBytes,
      component,
      initialCapacity: 1,
    });
    index.assertGraph(header.nodes, header.entryPoint, header.maxLevel, sections.levels, sections.deleted, sections.layerZero, sections.upperLayers);
    const nodes = header.nodes;
    const upperSlots = sections.upperLayers.length;
    index.allocate(index.planFor(Math.max(1, nodes), Math.max(1, nodes), upperSlots + (MAX_LEVEL + 1) * (header.m + 1)));
    const { vectors, stride, layerZero, rows, flags, upperIndex, upperPool } = index.layout;
    const { dimensions } = header;
    const floats = index.floats;
    index.nodes = nodes;
    index.levels.set(sections.levels);
    index.allocatedLevels.set(sections.levels);
    index.ints.set(sections.layerZero, layerZero / 4);
    index.ints.set(sections.upperLayers, upperPool / 4);
    let offset = 0;
    for (let node = 0; node < nodes; node++) {
      index.ints[upperIndex / 4 + node] = offset;
      index.ints[rows / 4 + node] = node;
      index.bytes[flags + node] = sections.deleted[node] === 1 ? 2 : 0;
      index.nodeIds[node] = header.ids[node];
      offset += sections.levels[node] * (header.m + 1);
    }
    index.upperUsed = offset;
    index.entryPoint = header.entryPoint;
    index.maxLevel = header.maxLevel;
    index.randomState = header.randomState >>> 0 || 1;
    const live = nodes - index.countFree(sections.deleted);
    if (header.vectors === 'all') {
      let savedRow = 0;
      for (let node = 0; node < nodes; node++) {
        if (sections.deleted[node]) continue;
        floats.set(sections.vectors.subarray(savedRow * dimensions, (savedRow + 1) * dimensions), (vectors + node * stride) / 4);
        savedRow++;
      }
    }
    const gone: number[] = [];
    for (let position = 0; position < live; position++) {
      const node = sections.order[position];
      const id = header.ids[node];
      if (index.nodeById.has(id)) throw corruptData(component, `the id "${id}" belongs to two live nodes`);
      index.nodeById.set(id, node);
      if (header.vectors === 'all') continue;
      const vector = vectorOf!(id);
      if (vector === undefined) gone.push(node);
      else {
        index.assertVector(vector, `vector of "${id}"`);
        floats.set(vector, (vectors + node * stride) / 4);
      }
    }
    index.freeSlots = Array.from(sections.order.subarray(live));
    // Nodes whose vectors are gone are deleted now that every other vector is in place for the repairs.
    for (const node of gone) index.unlink(node);
    return index;
  }

  // --- Internal helpers ---

  private countFree(deleted: Uint8Array): number {
    let free = 0;
    for (let node = 0; node < deleted.length; node++) free += deleted[node];
    return free;
  }

  /** Store a vector in a free slot or the next node (there is room) and link it into the graph. */
  private insert(id: string, vector: ArrayLike<number>): void {
    const level = this.drawLevel();
    const node = this.freeSlots.length > 0 ? this.freeSlots.pop()! : this.nodes++;
    // A slot keeps the upper lists it had; a taller node gets new ones from the pool.
    if (level > this.allocatedLevels[node]) {
      if (this.upperUsed + level * (this.m + 1) > this.layout.upperCapacity) this.grow();
      this.ints[this.layout.upperIndex / 4 + node] = this.upperUsed;
      this.upperUsed += level * (this.m + 1);
      this.allocatedLevels[node] = level;
    }
    const { vectors, stride, rows, flags, layerZero, upperIndex, upperPool } = this.layout;
    this.floats.set(vector, (vectors + node * stride) / 4);
    this.ints[rows / 4 + node] = node;
    this.levels[node] = level;
    const list = layerZero / 4 + node * (this.maxLayerZero + 1);
    this.ints.fill(0, list, list + this.maxLayerZero + 1);
    const upper = upperPool / 4 + this.ints[upperIndex / 4 + node];
    this.ints.fill(0, upper, upper + level * (this.m + 1));
    this.bytes[flags + node] = 0;
    this.nodeIds[node] = id;
    this.nodeById.set(id, node);
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

  /** Unlink a live node and free its slot; a new entry point when it was the entry. */
  private unlink(node: number): void {
    this.nodeById.delete(this.nodeIds[node]);
    this.bytes[this.layout.flags + node] = 2;
    const level = this.levels[node];
    this.kernel.hnsw_unlink(node, level);
    // Upper layers must not keep a link to the slot: the node that reuses it may not reach that level. They
    // hold about one node in m, so every list above layer 0 is looked through.
    if (level > 0) this.removeUpperLinks(node, level);
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

  /** The first live node of the highest level, or none. */
  private chooseEntryPoint(): void {
    const flags = this.layout.flags;
    this.entryPoint = -1;
    this.maxLevel = -1;
    for (let node = 0; node < this.nodes; node++) {
      if (this.bytes[flags + node] !== 2 && this.levels[node] > this.maxLevel) {
        this.entryPoint = node;
        this.maxLevel = this.levels[node];
      }
    }
  }

  /** Move everything into a memory with room for twice the nodes (or as many as the limit allows) and a larger upper pool. */
  private grow(): void {
    const previous = this.layout;
    const full = this.freeSlots.length === 0 && this.nodes === previous.capacity;
    const capacity = full ? 2 * previous.capacity : previous.capacity;
    // The pool as planned for the capacity, and at least room for the tallest node. When the pool filled
    // before the nodes did (rare: it is planned at twice the expected need), twice what it holds if that fits.
    const needed = this.upperUsed + (MAX_LEVEL + 1) * (this.m + 1);
    let next: GraphLayout | undefined;
    if (!full) {
      try {
        next = this.planFor(this.nodes, capacity, needed + this.upperUsed);
      } catch {
        // Planned again below with only what the next add needs.
      }
    }
    next ??= this.planFor(full ? this.nodes + 1 : this.nodes, capacity, needed);
    const oldBytes = this.bytes;
    this.replaceMemory(next);
    const bytes = this.bytes;
    // Strides do not change, so each region moves as one block. Visit marks and heaps start again.
    const move = (from: number, to: number, length: number) => bytes.set(oldBytes.subarray(from, from + length), to);
    move(previous.rows, next.rows, this.nodes * 4);
    move(previous.flags, next.flags, this.nodes);
    move(previous.layerZero, next.layerZero, this.nodes * (this.maxLayerZero + 1) * 4);
    move(previous.upperIndex, next.upperIndex, this.nodes * 4);
    move(previous.upperPool, next.upperPool, this.upperUsed * 4);
    move(previous.vectors, next.vectors, this.nodes * previous.stride);
    const resized = (array: Uint8Array) => {
      const copy = new Uint8Array(next.capacity);
      copy.set(array.subarray(0, Math.min(array.length, next.capacity)));
      return copy;
    };
    this.levels = resized(this.levels);
    this.allocatedLevels = resized(this.allocatedLevels);
  }

  /** A memory laid out for `preferredRows` nodes, or as many from `rows` up as fit the limit. */
  private planFor(rows: number, preferredRows: number, upperSlots?: number): GraphLayout {
    const limit = this.options.memoryLimitBytes;
    const m = this.options.m;
    const plan = (capacity: number) => planGraph(capacity, this.dimensions, m, Math.max(upperSlots ?? 0, upperSlotsFor(capacity, m)));
    const planned = planWithinLimit(rows, preferredRows, plan, limit);
    if (planned) return planned;
    const neededBytes = pagedBytes(plan(rows).bytes);
    throw new AxonError(
      'CAPACITY_EXCEEDED',
      `${rows.toLocaleString('en')} HNSW ${rows === 1 ? 'node' : 'nodes'} of ${this.dimensions} dimensions (m ${m}) need ${formatBytes(neededBytes, 2)} of WebAssembly memory, past this index's limit of ${formatBytes(limit, 2)} (one 32-bit WebAssembly memory addresses at most 4 GiB). Nothing was stored.`,
      {
        component: this.component,
        fix: 'Split the collection across several stores, use fewer dimensions or a smaller m, or move it to a server store such as Qdrant.',
        details: { nodes: rows, dimensions: this.dimensions, m, neededBytes, limitBytes: limit },
      },
    );
  }

  /** Empty arrays for an empty graph of `layout.capacity` nodes. */
  private allocate(layout: GraphLayout): void {
    this.replaceMemory(layout);
    this.levels = new Uint8Array(layout.capacity);
    this.allocatedLevels = new Uint8Array(layout.capacity);
  }

  private replaceMemory(layout: GraphLayout): void {
    this.memory = createMemory(pagedBytes(layout.bytes) / WASM_PAGE_BYTES);
    this.kernel = instantiateKernel(this.memory);
    this.floats = new Float32Array(this.memory.buffer);
    this.ints = new Int32Array(this.memory.buffer);
    this.bytes = new Uint8Array(this.memory.buffer);
    this.layout = layout;
    const { vectors, stride, rows, flags, visitMarks, capacity, layerZero, upperIndex, upperPool, frontier, nearest, buffer, pool, kept } = layout;
    this.kernel.hnsw_configure(
      vectors,
      stride,
      this.dimensions,
      rows,
      flags,
      visitMarks,
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

  /** Refuse a decoded graph whose links point outside it, so a damaged file cannot crash a search. */
  private assertGraph(
    nodes: number,
    entryPoint: number,
    maxLevel: number,
    levels: Uint8Array,
    deleted: Uint8Array,
    layerZero: Int32Array,
    upperLayers: Int32Array,
  ): void {
    const corrupt = (problem: string) => corruptData(this.component, problem);
    if (entryPoint >= nodes || (entryPoint >= 0 && (deleted[entryPoint] || levels[entryPoint] !== maxLevel)) || (entryPoint < 0 && maxLevel !== -1))
      throw corrupt('its entry point is not its highest node');
    const checkList = (list: Int32Array, offset: number, limit: number, where: string) => {
      const count = list[offset];
      if (count < 0 || count > limit) throw corrupt(`${where} has ${count} neighbours (at most ${limit})`);
      for (let slot = 1; slot <= count; slot++)
        if (list[offset + slot] < 0 || list[offset + slot] >= nodes) throw corrupt(`${where} links to a node that does not exist`);
    };
    let upperOffset = 0;
    let live = 0;
    for (let node = 0; node < nodes; node++) {
      if (levels[node] > maxLevel && !deleted[node]) throw corrupt(`node ${node} is above the top level`);
      if (!deleted[node]) live++;
      checkList(layerZero, node * (this.maxLayerZero + 1), this.maxLayerZero, `node ${node} on layer 0`);
      for (let level = 1; level <= levels[node]; level++) {
        checkList(upperLayers, upperOffset, this.options.m, `node ${node} on layer ${level}`);
        upperOffset += this.options.m + 1;
      }
    }
    if (live > 0 && entryPoint < 0) throw corrupt('it has live nodes but no entry point');
  }
}

function corruptData(component: string, problem: string): AxonError {
  return new AxonError('STORE_CORRUPT', `The HNSW index data is inconsistent: ${problem}.`, { component, fix: 'Rebuild the index from the stored vectors.' });
}
