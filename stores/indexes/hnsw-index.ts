import { z } from 'zod';
import { parseOptions } from '../../src/runtime/options.ts';
import { AxonError } from '../../src/errors.ts';
import { decodeHnsw, encodeHnsw } from './hnsw-index-format.ts';
import { WASM_MEMORY_LIMIT_BYTES } from './simd/simd-index.ts';
import { formatBytes, pagedBytes, planGraph, planWithinLimit, WASM_PAGE_BYTES, type GraphLayout } from './simd/space-layout.ts';
import { createMemory, instantiateKernel, type SearchKernel, type WasmMemory } from './simd/wasm-runtime.ts';
import { assertEf, assertTopK } from './arguments.ts';
import { ScoredHeap } from './top-k-heap.ts';

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

/**
 * Approximate nearest neighbours by dot product (the cosine for unit vectors) with a hierarchical navigable
 * small-world graph (Malkov and Yashunin, 2016): for large collections, where an exact scan (see
 * `SimdVectorSpace`) takes too long per query.
 *
 * The vectors, the bottom layer of the graph and the visit marks live in one WebAssembly memory, and the
 * SIMD kernel (stores/indexes/simd/search-kernel.wat) scores a node's whole neighbour list, or runs the whole
 * neighbour-selection heuristic, in one call; the graph walk stays in TypeScript. The walk compares float32
 * scores; the hits returned are re-scored in float64 (the scores `scanTopK` gives). Like `SimdVectorSpace`,
 * the memory is replaced by a larger copy when full, never grown in place. One memory holds at most 4 GiB:
 * at m 32, about 670,000 vectors of 1536 dimensions or 2.3 million of 384 (`CAPACITY_EXCEEDED` past that).
 *
 * Neighbours are chosen with the paper's diversity heuristic. Adding an id that exists replaces it.
 * Deleting marks a tombstone (searches pass through it but never return it); once tombstones reach
 * `rebuildRatio` of the nodes the graph is rebuilt from the live ones. Filters are not applied here: a
 * filtered search stays exact, over the rows the filter selects.
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
  private nodes = 0;
  private levels!: Uint8Array;
  private deleted!: Uint8Array;
  /** Per node: for each level 1..level, a count and up to m neighbours; undefined on level 0 only. */
  private upperLayers: (Int32Array | undefined)[] = [];
  private nodeIds: string[] = [];
  private readonly nodeById = new Map<string, number>();
  private deletedCount = 0;
  private entryPoint = -1;
  private maxLevel = -1;
  private randomState: number;
  /** A node is visited in the current search when its mark equals `visitEpoch`. */
  private visitEpoch = 0;
  /** Reused by every search, so an insert allocates nothing but an upper-layer list now and then. */
  private readonly frontier = new ScoredHeap(true);
  private readonly nearest = new ScoredHeap(false);
  /** What `searchLayer` found, best first. */
  private resultCount = 0;
  private resultRows = new Int32Array(256);
  private resultScores = new Float64Array(256);

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

  /** Live (not deleted) vectors. */
  get size(): number {
    return this.nodes - this.deletedCount;
  }

  /** Deleted nodes still in the graph (searches walk through them); a rebuild drops them. */
  get tombstones(): number {
    return this.deletedCount;
  }

  /** Bytes held: the WebAssembly memory (vectors, layer 0, visit marks) and the typed arrays outside it (ids not counted). */
  get memoryBytes(): number {
    let bytes = this.memory.buffer.byteLength + this.levels.byteLength + this.deleted.byteLength;
    bytes += this.frontier.byteLength + this.nearest.byteLength + this.resultRows.byteLength + this.resultScores.byteLength;
    for (const layers of this.upperLayers) bytes += layers?.byteLength ?? 0;
    return bytes;
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
    // Room first, so a full memory refuses the add before an old vector of the id is deleted.
    if (this.nodes === this.layout.capacity) this.grow();
    if (this.nodeById.has(id)) this.delete(id);
    this.insert(id, vector);
  }

  /**
   * Throw `CAPACITY_EXCEEDED` now, changing nothing, if `count` more adds (new ids or replacements: each
   * takes a node) would pass the memory limit; for callers that must refuse a batch before committing it.
   */
  assertRoomFor(count: number): void {
    if (count > 0 && this.nodes + count > this.layout.capacity) this.planFor(this.nodes + count, this.nodes + count);
  }

  /** Rebuild the graph from its live nodes now, dropping every tombstone (what deletes do at `rebuildRatio`). */
  compact(): void {
    if (this.deletedCount > 0) this.rebuild();
  }

  /** The most nodes one graph with these settings can hold within its memory limit. */
  static maxNodes(dimensions: number, options: { m: number; efConstruction: number; memoryLimitBytes: number }): number {
    const fits = (nodes: number) => pagedBytes(planGraph(nodes, dimensions, options.m, options.efConstruction).bytes) <= options.memoryLimitBytes;
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

  /** Remove an id; returns whether it was present. May rebuild the graph (see `rebuildRatio`). */
  delete(id: string): boolean {
    const node = this.nodeById.get(id);
    if (node === undefined) return false;
    this.nodeById.delete(id);
    this.deleted[node] = 1;
    this.deletedCount++;
    if (this.deletedCount >= this.options.rebuildRatio * this.nodes) this.rebuild();
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
    const target = this.layout.query;
    this.floats.set(query, target / 4);
    let entry = this.entryPoint;
    for (let level = this.maxLevel; level > 0; level--) entry = this.greedyClosest(target, entry, level);
    this.searchLayer(target, entry, ef, 0, true);
    return this.exactHits(Math.min(topK, this.resultCount));
  }

  /**
   * The whole index as bytes (graph, vectors, ids, options): see hnsw-index-format.ts.
   * @param options.vectors `'all'` (default) writes every node's vector; `'deleted'` only the deleted nodes'
   * (searches still walk through them), for a caller that keeps the live vectors and passes them back to
   * `deserialize` through `vectorOf`: at 384 dimensions that leaves about a sixth of the bytes.
   */
  serialize(options: { vectors?: 'all' | 'deleted' } = {}): Uint8Array {
    const form = options?.vectors ?? 'all';
    if (form !== 'all' && form !== 'deleted') {
      throw new AxonError('INVALID_OPTION', `serialize's vectors must be 'all' or 'deleted', got ${String(form)}.`, {
        component: this.component,
        details: { option: 'vectors' },
      });
    }
    const upperSlots = this.upperLayers.slice(0, this.nodes).reduce((sum, layers) => sum + (layers?.length ?? 0), 0);
    const upperLayers = new Int32Array(upperSlots);
    let offset = 0;
    for (let node = 0; node < this.nodes; node++) {
      const layers = this.upperLayers[node];
      if (layers) {
        upperLayers.set(layers, offset);
        offset += layers.length;
      }
    }
    const { vectors: vectorBase, stride, layerZero } = this.layout;
    const vectors = new Float32Array((form === 'all' ? this.nodes : this.deletedCount) * this.dimensions);
    let row = 0;
    for (let node = 0; node < this.nodes; node++) {
      if (form === 'deleted' && !this.deleted[node]) continue;
      const start = (vectorBase + node * stride) / 4;
      vectors.set(this.floats.subarray(start, start + this.dimensions), row++ * this.dimensions);
    }
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
        nodes: this.nodes,
        entryPoint: this.entryPoint,
        maxLevel: this.maxLevel,
        ids: this.nodeIds.slice(0, this.nodes),
      },
      {
        levels: this.levels.subarray(0, this.nodes),
        deleted: this.deleted.subarray(0, this.nodes),
        vectors,
        layerZero: this.ints.subarray(layerZero / 4, layerZero / 4 + this.nodes * (this.maxLayerZero + 1)),
        upperLayers,
      },
    );
  }

  /**
   * Rebuild an index from `serialize`'s bytes. `options` may change what does not shape the graph
   * (component, ef, rebuildRatio, memoryLimitBytes).
   *
   * Bytes saved with `vectors: 'deleted'` need `options.vectorOf`, called once per live node with its id, to
   * supply its vector (stored as `add` stores it). When it returns `undefined` (the document was deleted
   * after the bytes were written) the node is loaded as deleted, with a zero vector: searches walk through
   * it but never return it, `tombstones` counts it and `ids()` leaves it out. Bytes with all vectors do not
   * call `vectorOf`.
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
      initialCapacity: Math.max(1, header.nodes),
    });
    index.assertGraph(header.nodes, header.entryPoint, header.maxLevel, sections.levels, sections.layerZero, sections.upperLayers);
    if (header.nodes > index.layout.capacity) index.allocate(index.planFor(header.nodes, header.nodes));
    const { vectors, stride, layerZero } = index.layout;
    const { dimensions } = header;
    const floats = index.floats;
    let savedRow = 0;
    for (let node = 0; node < header.nodes; node++) {
      const id = header.ids[node];
      const target = (vectors + node * stride) / 4;
      let deleted = sections.deleted[node] === 1;
      if (header.vectors === 'all' || deleted) {
        floats.set(sections.vectors.subarray(savedRow * dimensions, (savedRow + 1) * dimensions), target);
        savedRow++;
      } else {
        const vector = vectorOf!(id);
        if (vector === undefined) {
          // Gone since the bytes were written: kept as a tombstone, so the links through it still hold.
          floats.fill(0, target, target + dimensions);
          deleted = true;
        } else {
          index.assertVector(vector, `vector of "${id}"`);
          floats.set(vector, target);
        }
      }
      if (deleted) {
        index.deleted[node] = 1;
        index.deletedCount++;
      } else {
        if (index.nodeById.has(id)) throw corruptData(component, `the id "${id}" belongs to two live nodes`);
        index.nodeById.set(id, node);
      }
      index.nodeIds[node] = id;
    }
    index.nodes = header.nodes;
    index.levels.set(sections.levels);
    index.ints.set(sections.layerZero, layerZero / 4);
    let offset = 0;
    for (let node = 0; node < header.nodes; node++) {
      const slots = sections.levels[node] * (header.m + 1);
      if (slots > 0) index.upperLayers[node] = sections.upperLayers.slice(offset, offset + slots);
      offset += slots;
    }
    index.entryPoint = header.entryPoint;
    index.maxLevel = header.maxLevel;
    index.randomState = header.randomState >>> 0 || 1;
    return index;
  }

  // --- Internal helpers ---

  /** Store a vector in the next node (there is room) and link it into the graph. */
  private insert(id: string, vector: ArrayLike<number>): void {
    const node = this.nodes++;
    this.floats.set(vector, (this.layout.vectors + node * this.layout.stride) / 4);
    this.nodeIds[node] = id;
    this.nodeById.set(id, node);
    this.link(node, this.drawLevel());
  }

  /** Connect a new node on every level up to `level` (the insertion algorithm of the paper). */
  private link(node: number, level: number): void {
    this.levels[node] = level;
    if (level > 0) this.upperLayers[node] = new Int32Array(level * (this.options.m + 1));
    if (this.entryPoint < 0) {
      this.entryPoint = node;
      this.maxLevel = level;
      return;
    }
    const { vectors, stride, candidateRows, candidateScores, keptRows } = this.layout;
    const target = vectors + node * stride;
    let entry = this.entryPoint;
    for (let current = this.maxLevel; current > level; current--) entry = this.greedyClosest(target, entry, current);
    for (let current = Math.min(level, this.maxLevel); current >= 0; current--) {
      this.searchLayer(target, entry, this.options.efConstruction, current, false);
      const found = this.resultCount;
      const rows = candidateRows / 4;
      const scores = candidateScores / 4;
      for (let rank = 0; rank < found; rank++) {
        this.ints[rows + rank] = this.resultRows[rank];
        this.floats[scores + rank] = this.resultScores[rank];
      }
      const chosen = this.kernel.select_diverse(vectors, stride, node, candidateRows, candidateScores, found, this.options.m, keptRows);
      this.writeNeighbours(node, current, keptRows / 4, chosen);
      entry = this.resultRows[0];
      // The new node's own list is read back, since `connect` reuses the kernel's scratch lists.
      const list = current === 0 ? this.ints : this.upperLayers[node]!;
      const start = this.listStart(node, current);
      for (let slot = 1; slot <= chosen; slot++) this.connect(list[start + slot], node, current);
    }
    if (level > this.maxLevel) {
      this.entryPoint = node;
      this.maxLevel = level;
    }
  }

  /** Add `node` to the neighbours of `owner`, pruning with the heuristic when the list is full. */
  private connect(owner: number, node: number, level: number): void {
    const list = level === 0 ? this.ints : this.upperLayers[owner]!;
    const start = this.listStart(owner, level);
    const limit = level === 0 ? this.maxLayerZero : this.options.m;
    const count = list[start];
    if (count < limit) {
      list[start + 1 + count] = node;
      list[start] = count + 1;
      return;
    }
    // The pool: the new node, then the current neighbours, sorted by their score against the owner.
    const { vectors, stride, candidateRows, candidateScores, keptRows } = this.layout;
    const ints = this.ints;
    const floats = this.floats;
    const rows = candidateRows / 4;
    const scores = candidateScores / 4;
    ints[rows] = node;
    for (let slot = 0; slot < count; slot++) ints[rows + 1 + slot] = list[start + 1 + slot];
    this.kernel.dot_rows(vectors, stride, vectors + owner * stride, candidateRows, count + 1, candidateScores);
    // Insertion sort, best first and stable: the pool is at most 2m + 1 entries, most already in order.
    for (let position = 1; position <= count; position++) {
      const row = ints[rows + position];
      const score = floats[scores + position];
      let hole = position;
      while (hole > 0 && floats[scores + hole - 1] < score) {
        ints[rows + hole] = ints[rows + hole - 1];
        floats[scores + hole] = floats[scores + hole - 1];
        hole--;
      }
      ints[rows + hole] = row;
      floats[scores + hole] = score;
    }
    const chosen = this.kernel.select_diverse(vectors, stride, owner, candidateRows, candidateScores, count + 1, limit, keptRows);
    this.writeNeighbours(owner, level, keptRows / 4, chosen);
  }

  /** Copy `count` rows from `this.ints[from…]` into the neighbour list of `node` on `level`. */
  private writeNeighbours(node: number, level: number, from: number, count: number): void {
    const list = level === 0 ? this.ints : this.upperLayers[node]!;
    const start = this.listStart(node, level);
    list[start] = count;
    for (let slot = 0; slot < count; slot++) list[start + 1 + slot] = this.ints[from + slot];
  }

  /** Index of the count of `node`'s neighbour list on `level`: in `this.ints` on layer 0, else in `upperLayers[node]`. */
  private listStart(node: number, level: number): number {
    return level === 0 ? this.layout.layerZero / 4 + node * (this.maxLayerZero + 1) : (level - 1) * (this.options.m + 1);
  }

  /** Byte address of the neighbours of `node` on `level`, copying an upper-layer list where the kernel reads it. */
  private neighbourAddress(node: number, level: number): number {
    if (level === 0) return this.layout.layerZero + (node * (this.maxLayerZero + 1) + 1) * 4;
    const list = this.upperLayers[node]!;
    const start = (level - 1) * (this.options.m + 1);
    const target = this.layout.listRows / 4;
    for (let slot = 0; slot < list[start]; slot++) this.ints[target + slot] = list[start + 1 + slot];
    return this.layout.listRows;
  }

  private neighbourCount(node: number, level: number): number {
    return level === 0 ? this.ints[this.listStart(node, 0)] : this.upperLayers[node]![this.listStart(node, level)];
  }

  /** Walk to the neighbour most similar to the row at `target` until none is better (the descent through upper layers). */
  private greedyClosest(target: number, start: number, level: number): number {
    const { vectors, stride, listRows, foundScores } = this.layout;
    const kernel = this.kernel;
    let best = start;
    this.ints[listRows / 4] = start;
    kernel.dot_rows(vectors, stride, target, listRows, 1, foundScores);
    let bestScore = this.floats[foundScores / 4];
    for (let improved = true; improved; ) {
      improved = false;
      const count = this.neighbourCount(best, level);
      const address = this.neighbourAddress(best, level);
      kernel.dot_rows(vectors, stride, target, address, count, foundScores);
      const rows = address / 4;
      const scores = foundScores / 4;
      for (let slot = 0; slot < count; slot++) {
        const score = this.floats[scores + slot];
        if (score > bestScore) {
          bestScore = score;
          best = this.ints[rows + slot];
          improved = true;
        }
      }
    }
    return best;
  }

  /**
   * Best-first search of one layer from `start` for the row at `target`, keeping the `ef` most similar
   * nodes. With `liveOnly`, deleted nodes are walked through but not returned. Leaves the nodes found, best
   * first (ties to the lower node), in `resultRows` and `resultScores`.
   */
  private searchLayer(target: number, start: number, ef: number, level: number, liveOnly: boolean): void {
    const { vectors, stride, listRows, visitMarks, foundRows, foundScores } = this.layout;
    const kernel = this.kernel;
    const ints = this.ints;
    const floats = this.floats;
    const deleted = this.deleted;
    const epoch = this.nextVisitEpoch();
    // Nodes to expand (best on top) and the nearest found so far (worst on top, ready to be dropped).
    const frontier = this.frontier;
    const nearest = this.nearest;
    frontier.clear();
    nearest.clear();
    ints[listRows / 4] = start;
    kernel.dot_unvisited(vectors, stride, target, listRows, 1, visitMarks, epoch, foundRows, foundScores);
    const startScore = floats[foundScores / 4];
    frontier.push(start, startScore);
    if (!liveOnly || !deleted[start]) nearest.push(start, startScore);
    while (frontier.size > 0) {
      if (nearest.size >= ef && frontier.topScore() < nearest.topScore()) break;
      const current = frontier.pop();
      const count = this.neighbourCount(current, level);
      const written = kernel.dot_unvisited(vectors, stride, target, this.neighbourAddress(current, level), count, visitMarks, epoch, foundRows, foundScores);
      for (let index = 0; index < written; index++) {
        const score = floats[foundScores / 4 + index];
        if (nearest.size < ef || score > nearest.topScore()) {
          const neighbour = ints[foundRows / 4 + index];
          frontier.push(neighbour, score);
          if (!liveOnly || !deleted[neighbour]) {
            if (nearest.size < ef) nearest.push(neighbour, score);
            else nearest.replaceTop(neighbour, score);
          }
        }
      }
    }
    const found = nearest.size;
    if (this.resultRows.length < found) {
      this.resultRows = new Int32Array(2 * found);
      this.resultScores = new Float64Array(2 * found);
    }
    for (let rank = found - 1; rank >= 0; rank--) {
      this.resultScores[rank] = nearest.topScore();
      this.resultRows[rank] = nearest.pop();
    }
    this.resultCount = found;
  }

  /**
   * The best `count` nodes of the last search, re-scored exactly (float64, the arithmetic of `scanTopK`) and
   * ordered by those scores, ties to the lower node. The query must be in the query region.
   */
  private exactHits(count: number): HnswHits {
    const { vectors, stride, query, scratch, candidateRows, exactScores } = this.layout;
    const nodes = this.resultRows.slice(0, count);
    const scores = new Float64Array(count);
    const exact = new Float64Array(this.memory.buffer, exactScores, scratch);
    for (let first = 0; first < count; first += scratch) {
      const chunk = Math.min(scratch, count - first);
      this.ints.set(nodes.subarray(first, first + chunk), candidateRows / 4);
      this.kernel.score_f64(vectors, stride, this.dimensions, query, candidateRows, 1, chunk, exactScores);
      scores.set(exact.subarray(0, chunk), first);
    }
    const order = Array.from({ length: count }, (_, rank) => rank).sort((left, right) => scores[right] - scores[left] || nodes[left] - nodes[right]);
    return { ids: order.map((rank) => this.nodeIds[nodes[rank]]), scores: Float64Array.from(order, (rank) => scores[rank]) };
  }

  /** Build the graph again from the live nodes, in their insertion order, without the tombstones. */
  private rebuild(): void {
    const live: number[] = [];
    for (let node = 0; node < this.nodes; node++) if (!this.deleted[node]) live.push(node);
    const oldFloats = this.floats;
    const { vectors, stride } = this.layout;
    const ids = this.nodeIds;
    // Room for one more, so the add that may follow a delete (a replaced id) needs no growth.
    this.allocate(this.planFor(live.length + 1, Math.max(this.options.initialCapacity, live.length * 2)));
    this.upperLayers = [];
    this.nodeIds = [];
    this.nodeById.clear();
    this.nodes = 0;
    this.deletedCount = 0;
    this.entryPoint = -1;
    this.maxLevel = -1;
    this.visitEpoch = 0;
    for (const old of live) this.insert(ids[old], oldFloats.subarray((vectors + old * stride) / 4, (vectors + old * stride) / 4 + this.dimensions));
  }

  /** Move everything into a memory with room for twice the nodes (or as many as the limit allows). */
  private grow(): void {
    const previous = this.layout;
    const next = this.planFor(this.nodes + 1, 2 * previous.capacity);
    const oldBytes = new Uint8Array(this.memory.buffer);
    this.replaceMemory(next);
    const bytes = new Uint8Array(this.memory.buffer);
    // Strides do not change, so each region moves as one block. Visit marks start again from zero.
    bytes.set(oldBytes.subarray(previous.layerZero, previous.layerZero + this.nodes * (this.maxLayerZero + 1) * 4), next.layerZero);
    bytes.set(oldBytes.subarray(previous.vectors, previous.vectors + this.nodes * previous.stride), next.vectors);
    const levels = new Uint8Array(next.capacity);
    levels.set(this.levels);
    this.levels = levels;
    const deleted = new Uint8Array(next.capacity);
    deleted.set(this.deleted);
    this.deleted = deleted;
  }

  /** A memory laid out for `preferredRows` nodes, or as many from `rows` up as fit the limit. */
  private planFor(rows: number, preferredRows: number): GraphLayout {
    const limit = this.options.memoryLimitBytes;
    const plan = (capacity: number) => planGraph(capacity, this.dimensions, this.options.m, this.options.efConstruction);
    const planned = planWithinLimit(rows, preferredRows, plan, limit);
    if (planned) return planned;
    const neededBytes = pagedBytes(plan(rows).bytes);
    throw new AxonError(
      'CAPACITY_EXCEEDED',
      `${rows.toLocaleString('en')} HNSW ${rows === 1 ? 'node' : 'nodes'} of ${this.dimensions} dimensions (m ${this.options.m}) need ${formatBytes(neededBytes, 2)} of WebAssembly memory, past this index's limit of ${formatBytes(limit, 2)} (one 32-bit WebAssembly memory addresses at most 4 GiB). Nothing was stored.`,
      {
        component: this.component,
        fix: 'Split the collection across several stores, use fewer dimensions or a smaller m, or move it to a server store such as Qdrant.',
        details: { nodes: rows, dimensions: this.dimensions, m: this.options.m, neededBytes, limitBytes: limit },
      },
    );
  }

  /** Empty arrays for an empty graph of `layout.capacity` nodes. */
  private allocate(layout: GraphLayout): void {
    this.replaceMemory(layout);
    this.levels = new Uint8Array(layout.capacity);
    this.deleted = new Uint8Array(layout.capacity);
  }

  private replaceMemory(layout: GraphLayout): void {
    this.memory = createMemory(pagedBytes(layout.bytes) / WASM_PAGE_BYTES);
    this.kernel = instantiateKernel(this.memory);
    this.floats = new Float32Array(this.memory.buffer);
    this.ints = new Int32Array(this.memory.buffer);
    this.layout = layout;
    this.visitEpoch = 0;
  }

  private nextVisitEpoch(): number {
    if (this.visitEpoch === 0x7fffffff) {
      const marks = this.layout.visitMarks / 4;
      this.ints.fill(0, marks, marks + this.layout.capacity);
      this.visitEpoch = 0;
    }
    return ++this.visitEpoch;
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
    return Math.min(255, Math.floor(-Math.log(uniform) / Math.log(this.options.m)));
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
  private assertGraph(nodes: number, entryPoint: number, maxLevel: number, levels: Uint8Array, layerZero: Int32Array, upperLayers: Int32Array): void {
    const corrupt = (problem: string) => corruptData(this.component, problem);
    if (entryPoint >= nodes || (nodes > 0 && (entryPoint < 0 || levels[entryPoint] !== maxLevel))) throw corrupt('its entry point is not its highest node');
    const checkList = (list: Int32Array, offset: number, limit: number, where: string) => {
      const count = list[offset];
      if (count < 0 || count > limit) throw corrupt(`${where} has ${count} neighbours (at most ${limit})`);
      for (let slot = 1; slot <= count; slot++)
        if (list[offset + slot] < 0 || list[offset + slot] >= nodes) throw corrupt(`${where} links to a node that does not exist`);
    };
    let upperOffset = 0;
    for (let node = 0; node < nodes; node++) {
      if (levels[node] > maxLevel) throw corrupt(`node ${node} is above the top level`);
      checkList(layerZero, node * (this.maxLayerZero + 1), this.maxLayerZero, `node ${node} on layer 0`);
      for (let level = 1; level <= levels[node]; level++) {
        checkList(upperLayers, upperOffset, this.options.m, `node ${node} on layer ${level}`);
        upperOffset += this.options.m + 1;
      }
    }
  }
}

function corruptData(component: string, problem: string): AxonError {
  return new AxonError('STORE_CORRUPT', `The HNSW index data is inconsistent: ${problem}.`, { component, fix: 'Rebuild the index from the stored vectors.' });
}
