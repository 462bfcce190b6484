import type { z } from 'zod';
import { parseOptions } from '../../src/runtime/options.ts';
import { AxonError } from '../../src/errors.ts';
import { assertGraphLinks, corruptGraph, decodeHnsw } from './hnsw-index-format.ts';
import { encodeGraph } from './hnsw-index-save.ts';
import { FREE, HnswGraphMemory, LIVE, STAGED } from './hnsw-graph-memory.ts';
import { type HnswHits, type HnswIndexOptions, hnswIndexOptionsSchema, type HnswLoadOptions } from './hnsw-index-options.ts';
import type { SimdVectorSpace } from './simd/simd-index.ts';
import { HNSW_MAX_LEVEL, tallestNodeSlots } from './simd/space-layout.ts';
import { assertEf, assertTopK } from './arguments.ts';
import type { RowObserver, VectorIndex } from './vector-index.ts';
import type { SearchHits } from './vector-scan.ts';

export { hnswIndexOptionsSchema, type HnswHits, type HnswIndexOptions, type HnswLoadOptions };

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
export class HnswIndex implements RowObserver {
  readonly component: string;
  readonly dimensions: number;
  /** The options that shape the graph (a saved graph keeps those it was built with). */
  readonly m: number;
  readonly efConstruction: number;
  private readonly options: z.output<typeof hnswIndexOptionsSchema>;
  /** The graph's arrays, their layout and growth (hnsw-graph-memory.ts). */
  private readonly memory: HnswGraphMemory;
  private nodeIds: string[] = [];
  /** Without a host: the live node of each id, in the order the ids were added. With one, ids are looked up through the host (`nodeOf`). */
  private readonly nodeById = new Map<string, number>();
  /** Slots of deleted nodes, unlinked (flag `FREE`), for the next adds: the last freed is reused first. */
  private freeSlots: number[] = [];
  private entryPoint = -1;
  private maxLevel = -1;
  private randomState: number;
  /** With `over`: the index whose vectors the nodes read, its space, the node at each row (-1: none), and the staged nodes by id. */
  private readonly host: { index: VectorIndex; space: SimdVectorSpace; nodeOfRow: Int32Array; staged: Map<string, number> } | undefined;

  constructor(options: HnswIndexOptions, over?: VectorIndex, upperCapacity?: number, minimumCapacity = 1) {
    const parsed = parseOptions(hnswIndexOptionsSchema, options, typeof options?.component === 'string' ? options.component : 'hnsw-index');
    this.options = parsed;
    this.component = parsed.component;
    this.dimensions = parsed.dimensions;
    this.m = parsed.m;
    this.efConstruction = parsed.efConstruction;
    this.randomState = parsed.seed >>> 0 || 1;
    if (over !== undefined && over.dimensions !== undefined && over.dimensions !== parsed.dimensions) {
      throw new AxonError('DIMENSION_MISMATCH', `The graph is for ${parsed.dimensions}-dimensional vectors; the index holds ${over.dimensions}.`, {
        component: this.component,
        fix: "Give the graph the index's dimensions, or build it over an index of vectors of its own size.",
        details: { expected: parsed.dimensions, actual: over.dimensions },
      });
    }
    const space = over?.sharedVectors(parsed.dimensions);
    if (over !== undefined) this.host = { index: over, space: space!, nodeOfRow: new Int32Array(0), staged: new Map() };
    this.memory = new HnswGraphMemory(parsed, { space, capacity: parsed.initialCapacity, upperCapacity: upperCapacity ?? 0, minimum: minimumCapacity });
    over?.observeRows(this);
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
    return this.memory.nodes - this.freeSlots.length;
  }

  /** Slots of deleted nodes, already unlinked from the graph, that the next adds reuse; `compact()` drops them. */
  get tombstones(): number {
    return this.freeSlots.length;
  }

  /** Bytes held: the WebAssembly memory (vectors, graph, visit marks, heaps; with `over`, the graph's region only) and two bytes a node outside it (ids not counted). */
  get memoryBytes(): number {
    return this.memory.bytesHeld + (this.host ? this.host.nodeOfRow.byteLength : 0);
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
    if (typeof id !== 'string')
      throw new AxonError('INVALID_ID', 'HNSW ids must be strings.', {
        component: this.component,
        fix: 'Pass the id as a string.',
        details: { argument: 'id' },
      });
    this.assertVector(vector, 'vector');
    this.memory.bind();
    this.memory.makeRoom(this.freeSlots.length);
    const old = this.nodeOf(id);
    if (old !== undefined) this.unlink(old);
    if (this.host === undefined) {
      this.insert(id, -1, vector);
      return;
    }
    const row = this.host.space.stage(vector instanceof Float32Array ? vector : Float32Array.from(vector));
    this.memory.bind();
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
          fix: 'Pass the row the index holds the id at (index.rowOf(id)); a graph built without an index takes add(id, vector).',
          details: { argument: 'row' },
        },
      );
    }
    this.memory.bind();
    this.memory.makeRoom(this.freeSlots.length);
    const old = this.nodeOf(id);
    if (old !== undefined) this.unlink(old);
    this.insert(id, row);
  }

  /** Make room for `nodes` live nodes in all, so a bulk load allocates once (when the memory limit allows). */
  reserve(nodes: number): void {
    this.memory.bind();
    this.memory.reserve(nodes, this.size);
  }

  /**
   * Throw `CAPACITY_EXCEEDED` now, changing nothing, if `count` more adds (new ids or replacements: each
   * takes a slot, a replacement the one it frees) would pass the memory limit; for callers that must refuse
   * a batch before committing it.
   */
  assertRoomFor(count: number): void {
    this.memory.assertRoomFor(count, this.size);
  }

  /** Renumber the graph without its free slots now (what deletes do at `rebuildRatio`): no vector is linked again. */
  compact(): void {
    if (this.freeSlots.length === 0) return;
    const memory = this.memory;
    memory.bind();
    const nodes = memory.nodes;
    const renumbered = new Int32Array(nodes);
    let live = 0;
    for (let node = 0; node < nodes; node++) renumbered[node] = memory.flagOf(node) === FREE ? -1 : live++;
    memory.renumber(renumbered, live);
    for (let node = 0; node < nodes; node++) {
      const target = renumbered[node];
      if (target < 0) continue;
      this.nodeIds[target] = this.nodeIds[node];
      // A staged node's row is not the index's yet; only stored rows are looked up by row.
      if (this.host !== undefined && memory.flagOf(target) === LIVE) this.host.nodeOfRow[memory.rowOf(target)] = target;
    }
    for (const [id, node] of this.nodeById) this.nodeById.set(id, renumbered[node]);
    if (this.host !== undefined) for (const [id, node] of this.host.staged) this.host.staged.set(id, renumbered[node]);
    this.nodeIds.length = live;
    this.freeSlots = [];
    this.entryPoint = this.entryPoint < 0 ? -1 : renumbered[this.entryPoint];
  }

  /**
   * The most nodes one graph with these settings can hold within its memory limit; with `sharedWith`, for a
   * graph `over` a `VectorIndex`, the most documents the vectors (float32, and int8 codes with `int8`) and
   * the graph hold together in one memory.
   */
  static maxNodes(dimensions: number, options: { m: number; efConstruction: number; memoryLimitBytes: number; sharedWith?: { int8: boolean } }): number {
    return HnswGraphMemory.maxNodes(dimensions, options);
  }

  /** Remove an id; returns whether it was present. Unlinks its node at once (see the class); may renumber the graph (see `rebuildRatio`). */
  delete(id: string): boolean {
    const node = this.nodeOf(id);
    if (node === undefined) return false;
    this.memory.bind();
    this.unlink(node);
    if (this.freeSlots.length >= this.options.rebuildRatio * this.memory.nodes) this.compact();
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
    const memory = this.memory;
    memory.bind();
    const { query: target, nearest, frontier } = memory.layout;
    memory.floats.set(query, target / 4);
    const found = memory.kernel.hnsw_search(target, this.entryPoint, this.maxLevel, ef, 1, topK, frontier);
    const count = Math.min(topK, found);
    const ids = new Array<string>(count);
    const scores = new Float64Array(memory.buffer, frontier, count).slice();
    const ints = memory.ints;
    for (let rank = 0; rank < count; rank++) ids[rank] = this.nodeIds[ints[nearest / 4 + 2 * rank]];
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
    const memory = this.memory;
    memory.bind();
    const { query: target, nearest, frontier, stride } = memory.layout;
    write(new Float32Array(memory.buffer, target, this.dimensions));
    const candidates = Math.max(topK, ef);
    // The exact top K of the candidates is among the best topK + 16 by float32 score unless rounding could
    // reorder across that cut: re-score those, and all candidates only when the bound cannot rule it out.
    const rescored = Math.min(topK + RESCORE_MARGIN, candidates);
    const found = memory.kernel.hnsw_search(target, this.entryPoint, this.maxLevel, candidates, 1, rescored, frontier);
    const count = Math.min(topK, found);
    if (found > rescored) {
      // The VectorIndex's vectors and queries are unit vectors: |row| |query| ≤ 1 up to float32 rounding.
      const bound = (stride / 32 + 8) * 2 ** -23 * 1.001;
      const cut = memory.floats[nearest / 4 + 2 * rescored + 1];
      const kth = new Float64Array(memory.buffer, frontier, count)[count - 1];
      if (!(kth > cut + bound)) memory.kernel.hnsw_rescore(target, found, frontier);
    }
    const hits = { rows: new Int32Array(count), scores: new Float64Array(memory.buffer, frontier, count).slice() };
    for (let rank = 0; rank < count; rank++) hits.rows[rank] = memory.rowOf(memory.ints[nearest / 4 + 2 * rank]);
    return hits;
  }

  /** RowObserver: the document of `id` is stored at `row`; its node (staged, or stored elsewhere before) reads it there now. */
  rowStored(id: string, row: number): void {
    const host = this.host;
    const node = host?.staged.get(id);
    if (host === undefined || node === undefined) return;
    this.memory.bind();
    host.staged.delete(id);
    this.memory.setRow(node, row);
    this.nodeOfRowArray(row + 1)[row] = node;
    this.memory.setFlag(node, LIVE);
  }

  /** RowObserver: the document at `row` is gone. A node still reading it (the graph was not told) is deleted. */
  rowRemoved(row: number): void {
    const host = this.host;
    if (host === undefined || row >= host.nodeOfRow.length) return;
    const node = host.nodeOfRow[row];
    host.nodeOfRow[row] = -1;
    if (node < 0 || this.memory.flagOf(node) === FREE) return;
    this.memory.bind();
    this.unlink(node);
  }

  /** RowObserver: the document at row `from` moved to `to`. */
  rowMoved(from: number, to: number): void {
    const host = this.host;
    if (host === undefined || from >= host.nodeOfRow.length) return;
    const node = host.nodeOfRow[from];
    host.nodeOfRow[from] = -1;
    if (node < 0) return;
    this.memory.bind();
    this.memory.setRow(node, to);
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
        fix: "Pass vectors: 'all' or vectors: 'deleted'.",
        details: { option: 'vectors' },
      });
    }
    return encodeGraph(
      {
        memory: this.memory,
        options: this.options,
        nodeById: this.host === undefined ? this.nodeById : undefined,
        freeSlots: this.freeSlots,
        nodeIds: this.nodeIds,
        randomState: this.randomState,
        entryPoint: this.entryPoint,
        maxLevel: this.maxLevel,
        size: this.size,
      },
      form,
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
      sections.upperLayers.length + tallestNodeSlots(header.m),
      Math.max(1, nodes),
    );
    assertGraphLinks(header, sections, component);
    const memory = index.memory;
    memory.load(sections, nodes, header.vectors === 'all');
    index.nodeIds = header.ids;
    index.entryPoint = header.entryPoint;
    index.maxLevel = header.maxLevel;
    index.randomState = header.randomState >>> 0 || 1;
    let live = nodes;
    for (let node = 0; node < nodes; node++) live -= sections.deleted[node];
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
        else if (nodeOfRow[row] >= 0) throw corruptGraph(component, `the id "${id}" belongs to two live nodes`);
        else {
          memory.setRow(node, row);
          nodeOfRow[row] = node;
        }
        continue;
      }
      if (index.nodeById.has(id)) throw corruptGraph(component, `the id "${id}" belongs to two live nodes`);
      index.nodeById.set(id, node);
      if (header.vectors === 'deleted') {
        const vector = vectorOf!(id);
        if (vector === undefined) gone.push(node);
        else {
          index.assertVector(vector, `vector of "${id}"`);
          memory.writeVector(node, vector);
        }
      }
    }
    index.freeSlots = Array.from(sections.order.subarray(live));
    // Nodes whose vectors are gone are deleted once every other vector is in place for the repairs, and all
    // are flagged first, so no repair reads a vector that is not there.
    for (const node of gone) memory.setFlag(node, FREE);
    // The links above layer 0 to all of them are dropped in one pass at the end, not one pass over every node
    // each (the repairs never read or add a free node, so the order does not change a list).
    const doomed = new Uint8Array(memory.nodes);
    for (const node of gone) {
      index.unlink(node, false);
      doomed[node] = 1;
    }
    // A version-2 file's free slots are its tombstones, still linked: unlinked now, as deletes now are.
    if (sections.unlinkFree) {
      for (const node of index.freeSlots) {
        memory.kernel.hnsw_unlink(node, memory.levels[node]);
        doomed[node] = 1;
      }
    }
    memory.removeUpperLinksOf(doomed);
    if (index.entryPoint >= 0 && memory.flagOf(index.entryPoint) === FREE) index.chooseEntryPoint();
    return index;
  }

  // --- Internal helpers ---

  /**
   * Take a free slot or the next node (there is room) for `id` and link it into the graph: the vector at
   * `row` of the host (staged when `row` is past the host's rows), or, without a host, `vector`, stored at
   * the node's own row.
   */
  private insert(id: string, row: number, vector?: ArrayLike<number>): void {
    const memory = this.memory;
    const level = this.drawLevel();
    const node = this.freeSlots.length > 0 ? this.freeSlots.pop()! : memory.nodes++;
    // A slot keeps the upper lists it had; a taller node gets new ones from the pool (`makeRoom` left room).
    const host = this.host;
    if (host === undefined) {
      memory.writeVector(node, vector!);
      memory.setNode(node, node, LIVE);
    } else {
      const stored = row < host.index.size;
      if (stored) this.nodeOfRowArray(row + 1)[row] = node;
      memory.setNode(node, row, stored ? LIVE : STAGED);
    }
    memory.clearNode(node, level);
    this.nodeIds[node] = id;
    if (host === undefined) this.nodeById.set(id, node);
    else if (memory.flagOf(node) === STAGED) host.staged.set(id, node);
    if (this.entryPoint < 0) {
      this.entryPoint = node;
      this.maxLevel = level;
      return;
    }
    memory.kernel.hnsw_link(node, level, this.entryPoint, this.maxLevel, this.options.efConstruction);
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
    const memory = this.memory;
    const host = this.host;
    const flag = memory.flagOf(node);
    if (host === undefined) this.nodeById.delete(this.nodeIds[node]);
    else if (flag === STAGED) host.staged.delete(this.nodeIds[node]);
    else if (flag === LIVE) {
      const row = memory.rowOf(node);
      if (host.nodeOfRow[row] === node) host.nodeOfRow[row] = -1;
    }
    memory.setFlag(node, FREE);
    const level = memory.levels[node];
    memory.kernel.hnsw_unlink(node, level);
    // Upper layers must not keep a link to the slot: the node that reuses it may not reach that level. They
    // hold about one node in m, so every list above layer 0 is looked through.
    if (upperLinks && level > 0) memory.removeUpperLinks(node, level);
    this.freeSlots.push(node);
    if (node === this.entryPoint) this.chooseEntryPoint();
  }

  /** The first live node of the highest level, or none. */
  private chooseEntryPoint(): void {
    const memory = this.memory;
    this.entryPoint = -1;
    this.maxLevel = -1;
    for (let node = 0; node < memory.nodes; node++) {
      if (memory.flagOf(node) !== FREE && memory.levels[node] > this.maxLevel) {
        this.entryPoint = node;
        this.maxLevel = memory.levels[node];
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
    for (let node = 0; node < this.memory.nodes; node++) if (this.memory.flagOf(node) !== FREE) yield this.nodeIds[node];
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

  /** A level drawn with P(level ≥ l) = m^-l, from a seeded generator so builds are reproducible. */
  private drawLevel(): number {
    // xorshift32: small, fast and good enough to spread levels.
    let state = this.randomState;
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    this.randomState = state >>> 0;
    const uniform = (this.randomState + 1) / 2 ** 32;
    return Math.min(HNSW_MAX_LEVEL, Math.floor(-Math.log(uniform) / Math.log(this.options.m)));
  }

  private assertVector(vector: ArrayLike<number>, label: string): void {
    if (vector === null || typeof vector !== 'object' || vector.length !== this.dimensions) {
      throw new AxonError('DIMENSION_MISMATCH', `The ${label} must have ${this.dimensions} values, got ${vector?.length ?? typeof vector}.`, {
        component: this.component,
        fix: `Pass vectors of the graph's ${this.dimensions} dimensions, from the embeddings model it was built with.`,
        details: { expected: this.dimensions, actual: vector?.length },
      });
    }
    for (let index = 0; index < vector.length; index++) {
      if (!Number.isFinite(vector[index])) {
        throw new AxonError('INVALID_VECTOR', `${label}[${index}] is ${String(vector[index])}; every component must be a finite number.`, {
          component: this.component,
          fix: 'Check what made the vector: NaN and Infinity cannot be searched.',
        });
      }
    }
  }
}
