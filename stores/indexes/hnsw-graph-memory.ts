/**
 * Where an `HnswIndex` keeps its graph (see hnsw-index.ts): the WebAssembly memory and how it is planned,
 * grown and moved, the per-node entries and lists inside it, and the bulk edits of those lists (dropping links,
 * renumbering, copying to and from a file's sections). The graph decides which node goes where; this file
 * knows only slots, lists and bytes.
 *
 * A graph has a memory of its own (its vectors included), or, over a `VectorIndex`, a region in the memory of
 * that index's `SimdVectorSpace`, sized and moved by the space (`SpaceTenant`).
 */
import { AxonError } from '../../src/errors.ts';
import type { HnswSections } from './hnsw-index-format.ts';
import type { SimdVectorSpace, SpaceTenant } from './simd/simd-index.ts';
import {
  formatBytes,
  type GraphLayout,
  graphRegionBytes,
  HNSW_MAX_LEVEL,
  layerZeroSlots,
  nodeWord,
  pagedBytes,
  planGraph,
  planLayout,
  planWithinLimit,
  tallestNodeSlots,
  upperListSlots,
  upperSlotsFor,
  WASM_PAGE_BYTES,
} from './simd/space-layout.ts';
import { createMemory, instantiateKernel, type SearchKernel, type WasmMemory } from './simd/wasm-runtime.ts';

/** The settings that size a graph's memory. */
export interface GraphMemorySettings {
  readonly component: string;
  readonly dimensions: number;
  readonly m: number;
  readonly memoryLimitBytes: number;
}

/** Over a `VectorIndex`: the space whose memory holds the graph's region, and the upper-pool slots the graph asks for. */
interface HostRegion {
  readonly space: SimdVectorSpace;
  upperWanted: number;
}

/** Node flags, in bits 30-31 of a node's entry (see `GraphLayout.nodes`). */
export const LIVE = 0;
/** Staged over a host: walked through by searches but never returned, until the index stores its row. */
export const STAGED = 1;
/** Unlinked: a free slot. */
export const FREE = 2;

/**
 * The memory of one HNSW graph. Its fields are the graph's working state, read and written by `HnswIndex`
 * directly on its hot paths; what changes the memory's shape (growth, moves, renumbering) happens here.
 */
export class HnswGraphMemory implements SpaceTenant {
  readonly component: string;
  readonly dimensions: number;
  readonly m: number;
  /** Slots of one upper list, and of a layer-0 list. */
  readonly listSlots: number;
  readonly layerZeroSlots: number;
  layout!: GraphLayout;
  kernel!: SearchKernel;
  /** Views of the whole memory. */
  floats!: Float32Array;
  ints!: Int32Array;
  bytes!: Uint8Array;
  /** Nodes in use or free: slots 0..nodes-1. */
  nodes = 0;
  levels!: Uint8Array;
  /** Upper lists allocated to each node in the pool (at least its level: a reused slot keeps its lists). */
  allocatedLevels!: Uint8Array;
  /** Upper-layer pool slots handed out: each allocation is L lists of m + 1 slots, from the end. */
  upperUsed = 0;
  private wasm!: WasmMemory;
  private readonly memoryLimitBytes: number;
  private readonly host: HostRegion | undefined;

  /**
   * A memory of its own for `capacity` nodes and `upperCapacity` upper slots (or as many nodes from `minimum`
   * up as fit the limit); with `space`, a region in that space's memory, sized with its rows.
   * @throws AxonError `CAPACITY_EXCEEDED`
   */
  constructor(settings: GraphMemorySettings, placement: { space?: SimdVectorSpace; capacity: number; upperCapacity: number; minimum: number }) {
    this.component = settings.component;
    this.dimensions = settings.dimensions;
    this.m = settings.m;
    this.listSlots = upperListSlots(1, settings.m);
    this.layerZeroSlots = layerZeroSlots(settings.m);
    this.memoryLimitBytes = settings.memoryLimitBytes;
    const { space, capacity, upperCapacity, minimum } = placement;
    if (space !== undefined) {
      this.host = { space, upperWanted: upperCapacity };
      // The graph's region is sized by the space's rows from now on: one plan for both, no spare memory
      // on one side that the other could not grow into.
      space.attach(this, settings.memoryLimitBytes, minimum);
      return;
    }
    this.reallocate(capacity, Math.max(upperCapacity, upperSlotsFor(capacity, this.m)), undefined, minimum);
    this.levels = new Uint8Array(this.layout.capacity);
    this.allocatedLevels = new Uint8Array(this.layout.capacity);
  }

  /** The memory's bytes (the host's, over a `VectorIndex`). */
  get buffer(): ArrayBuffer {
    return this.wasm.buffer;
  }

  /** Bytes held: the whole memory (over a host, the graph's region only), and two bytes a node outside it. */
  get bytesHeld(): number {
    const outside = this.levels.byteLength + this.allocatedLevels.byteLength;
    return (this.host ? this.layout.bytes : this.wasm.buffer.byteLength) + outside;
  }

  /** SpaceTenant (over a host): the bytes of the graph's region for `capacity` nodes, beside as many rows. */
  bytesFor(capacity: number): number {
    return graphRegionBytes(capacity, this.dimensions, this.m, this.host!.upperWanted);
  }

  /** SpaceTenant (over a host): the host replaced its memory; take the new region and copy the graph into it. */
  moved(old: ArrayBuffer): void {
    const previous = this.layout;
    const shared = this.host!.space.shared;
    if (shared.owner !== this) return;
    this.wasm = { buffer: shared.buffer };
    this.kernel = shared.kernel;
    this.setViews();
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

  /** Over a host: check that the graph still holds its region there (the host tells it of every move). */
  bind(): void {
    const host = this.host;
    // On every search: the owner alone, not the whole `shared` view.
    if (host === undefined || host.space.tenantOwner === this) return;
    throw new AxonError('INTERNAL', 'This HNSW graph no longer holds its region in the vectors it reads: another graph was made over the same index.', {
      component: this.component,
      fix: 'Keep one HnswIndex.over() per VectorIndex, and stop using one that was replaced.',
      details: { invariant: 'one-graph-per-vector-index' },
    });
  }

  // --- Node entries ---

  /** The row of a node's vector (see `GraphLayout.nodes`). */
  rowOf(node: number): number {
    return this.ints[this.layout.nodes / 4 + 2 * node] & 0x3fffffff;
  }

  /** A node's flag: `LIVE`, `STAGED` or `FREE`. */
  flagOf(node: number): number {
    return this.ints[this.layout.nodes / 4 + 2 * node] >>> 30;
  }

  setNode(node: number, row: number, flag: number): void {
    this.ints[this.layout.nodes / 4 + 2 * node] = nodeWord(row, flag);
  }

  setRow(node: number, row: number): void {
    this.setNode(node, row, this.flagOf(node));
  }

  setFlag(node: number, flag: number): void {
    this.setNode(node, this.rowOf(node), flag);
  }

  /**
   * Make `node` a node of `level` with empty lists: upper lists from the pool when it needs more than the slot
   * had (`makeRoom` left room for the tallest node).
   */
  clearNode(node: number, level: number): void {
    const ints = this.ints;
    const { layerZero, upperIndex, upperPool } = this.layout;
    if (level > this.allocatedLevels[node]) {
      ints[upperIndex / 4 + node] = this.upperUsed;
      this.upperUsed += upperListSlots(level, this.m);
      this.allocatedLevels[node] = level;
    }
    this.levels[node] = level;
    const list = layerZero / 4 + node * this.layerZeroSlots;
    ints.fill(0, list, list + this.layerZeroSlots);
    const upper = upperPool / 4 + ints[upperIndex / 4 + node];
    ints.fill(0, upper, upper + upperListSlots(level, this.m));
  }

  /** Without a host: store `vector` at the node's own row. */
  writeVector(node: number, vector: ArrayLike<number>): void {
    const { vectors, stride } = this.layout;
    this.floats.set(vector, (vectors + node * stride) / 4);
  }

  // --- Room ---

  /** Grow unless there is a slot (a free one, or past the nodes) and room in the upper pool for the tallest node. */
  makeRoom(freeSlots: number): void {
    const slotFree = freeSlots > 0 || this.nodes < this.layout.capacity;
    if (!slotFree || this.upperPoolShort()) this.grow(freeSlots);
  }

  /**
   * Make room for `nodes` live nodes in all (`live` now), so a bulk load allocates once (when the memory limit
   * allows).
   */
  reserve(nodes: number, live: number): void {
    if (nodes <= this.layout.capacity) return;
    if (this.host !== undefined) {
      this.host.space.reserve(nodes);
      return;
    }
    const upper = Math.max(this.upperUsed + tallestNodeSlots(this.m) + upperSlotsFor(nodes - live, this.m), upperSlotsFor(nodes, this.m));
    const previous = this.layout;
    this.reallocate(nodes, upper, (old) => this.moveRegions(old, previous), this.nodes);
    this.resizeLevels();
  }

  /** Throw `CAPACITY_EXCEEDED`, changing nothing, if `count` more adds to `live` nodes would pass the memory limit. */
  assertRoomFor(count: number, live: number): void {
    const needed = live + count;
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

  /**
   * The most nodes one graph with these settings holds within `memoryLimitBytes`; with `sharedWith`, for a
   * graph over a `VectorIndex`, the most documents its vectors (int8 codes too with `int8`) and the graph hold
   * together in one memory.
   */
  static maxNodes(dimensions: number, options: { m: number; memoryLimitBytes: number; sharedWith?: { int8: boolean } }): number {
    const { m, sharedWith } = options;
    const fits = (nodes: number) => {
      if (sharedWith === undefined) return pagedBytes(planGraph(nodes, dimensions, m).bytes) <= options.memoryLimitBytes;
      return pagedBytes(planLayout(nodes, dimensions, sharedWith.int8, graphRegionBytes(nodes, dimensions, m)).bytes) <= options.memoryLimitBytes;
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

  // --- List edits ---

  /** Remove `node` from every list on levels 1..level. */
  removeUpperLinks(node: number, level: number): void {
    const { upperIndex, upperPool } = this.layout;
    const ints = this.ints;
    const listSlots = this.listSlots;
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
  removeUpperLinksOf(doomed: Uint8Array): void {
    if (!doomed.includes(1)) return;
    const { upperIndex, upperPool } = this.layout;
    const ints = this.ints;
    const listSlots = this.listSlots;
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

  /**
   * Renumber the nodes as `renumbered` says (-1: dropped; the others keep their order, `live` of them): their
   * lists without links to dropped nodes, levels, entries and, without a host, vectors (which sit at the row of
   * their node). The pool is packed again.
   */
  renumber(renumbered: Int32Array, live: number): void {
    const { layerZero, upperIndex, upperPool, vectors, stride } = this.layout;
    const ints = this.ints;
    /** Copy a list (count at `from` in `source`) to `to`, renumbered, without links to dropped nodes. */
    const moveList = (source: Int32Array, from: number, to: number) => {
      const count = source[from];
      let kept = 0;
      for (let slot = 1; slot <= count; slot++) {
        const target = renumbered[source[from + slot]];
        if (target >= 0) ints[to + 1 + kept++] = target;
      }
      ints[to] = kept;
    };
    const listSlots = this.listSlots;
    const oldUpper = ints.slice(upperPool / 4, upperPool / 4 + this.upperUsed);
    let upperUsed = 0;
    for (let node = 0; node < this.nodes; node++) {
      const target = renumbered[node];
      if (target < 0) continue;
      // Nodes only move down, so each is copied before its new place is written over.
      moveList(ints, layerZero / 4 + node * this.layerZeroSlots, layerZero / 4 + target * this.layerZeroSlots);
      const level = this.levels[node];
      const start = ints[upperIndex / 4 + node];
      ints[upperIndex / 4 + target] = upperUsed;
      for (let list = 0; list < level; list++) moveList(oldUpper, start + list * listSlots, upperPool / 4 + upperUsed + list * listSlots);
      upperUsed += upperListSlots(level, this.m);
      this.levels[target] = level;
      this.allocatedLevels[target] = level;
      if (this.host === undefined) {
        // This graph's own vectors sit at the row of their node: they move with it.
        this.bytes.copyWithin(vectors + target * stride, vectors + node * stride, vectors + (node + 1) * stride);
        this.setNode(target, target, this.flagOf(node));
      } else this.setNode(target, this.rowOf(node), this.flagOf(node));
    }
    this.nodes = live;
    this.upperUsed = upperUsed;
  }

  // --- File sections ---

  /** The upper lists of every node, in node order, as the file keeps them. */
  upperLayers(): Int32Array {
    const { upperIndex, upperPool } = this.layout;
    const nodes = this.nodes;
    let upperSlots = 0;
    for (let node = 0; node < nodes; node++) upperSlots += upperListSlots(this.levels[node], this.m);
    const upperLayers = new Int32Array(upperSlots);
    let offset = 0;
    for (let node = 0; node < nodes; node++) {
      const slots = upperListSlots(this.levels[node], this.m);
      if (slots === 0) continue;
      const start = upperPool / 4 + this.ints[upperIndex / 4 + node];
      upperLayers.set(this.ints.subarray(start, start + slots), offset);
      offset += slots;
    }
    return upperLayers;
  }

  /** Every node's layer-0 list, a view of the memory. */
  layerZeroLists(): Int32Array {
    const { layerZero } = this.layout;
    return this.ints.subarray(layerZero / 4, layerZero / 4 + this.nodes * this.layerZeroSlots);
  }

  /** The vectors of the nodes not `deleted`, in node order, read at each node's row. */
  liveVectors(deleted: Uint8Array, live: number): Float32Array {
    const { vectors: vectorBase, stride } = this.layout;
    const vectors = new Float32Array(live * this.dimensions);
    let row = 0;
    for (let node = 0; node < this.nodes; node++) {
      if (deleted[node]) continue;
      const start = (vectorBase + this.rowOf(node) * stride) / 4;
      vectors.set(this.floats.subarray(start, start + this.dimensions), row++ * this.dimensions);
    }
    return vectors;
  }

  /**
   * Take a decoded graph's nodes into this empty memory (room made for them): levels, lists and entries (each
   * node at its own row, deleted ones free). Without a host and with `sections.vectors` holding every live
   * node's vector, those too.
   */
  load(sections: HnswSections, nodes: number, withVectors: boolean): void {
    const { layerZero, upperIndex, upperPool } = this.layout;
    const ints = this.ints;
    this.nodes = nodes;
    this.levels.set(sections.levels);
    this.allocatedLevels.set(sections.levels);
    // The bulk of the graph, copied as blocks.
    ints.set(sections.layerZero, layerZero / 4);
    ints.set(sections.upperLayers, upperPool / 4);
    let offset = 0;
    for (let node = 0; node < nodes; node++) {
      ints[upperIndex / 4 + node] = offset;
      this.setNode(node, node, sections.deleted[node] === 1 ? FREE : LIVE);
      offset += upperListSlots(sections.levels[node], this.m);
    }
    this.upperUsed = offset;
    if (this.host !== undefined || !withVectors) return;
    const dimensions = this.dimensions;
    let savedRow = 0;
    for (let node = 0; node < nodes; node++) {
      if (sections.deleted[node]) continue;
      this.writeVector(node, sections.vectors.subarray(savedRow * dimensions, (savedRow + 1) * dimensions));
      savedRow++;
    }
  }

  // --- Internal helpers ---

  /** Whether the upper pool may lack room for the lists of a node of the highest level. */
  private upperPoolShort(): boolean {
    return this.upperUsed + upperListSlots(HNSW_MAX_LEVEL, this.m) > this.layout.upperCapacity;
  }

  /** Move into room for twice the nodes (or as many as the limit allows) and a larger upper pool. */
  private grow(freeSlots: number): void {
    const previous = this.layout;
    const host = this.host;
    if (host !== undefined) {
      // Over a host the nodes grow with its rows; the pool, rarely, on its own.
      if (freeSlots === 0 && this.nodes >= previous.capacity) host.space.grow(this.nodes + 1);
      if (this.upperPoolShort()) {
        const needed = this.upperUsed + tallestNodeSlots(this.m);
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
    const full = freeSlots === 0 && this.nodes === previous.capacity;
    const capacity = full ? 2 * previous.capacity : previous.capacity;
    // The pool as planned for the capacity, and at least room for the tallest node. When the pool filled
    // before the nodes did (rare: it is planned at twice the expected need), twice what it holds if that fits.
    const needed = this.upperUsed + tallestNodeSlots(this.m);
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
    copy(previous.layerZero, next.layerZero, this.nodes * this.layerZeroSlots * 4);
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

  /**
   * A memory of its own for `wanted` nodes (or as many from `minimum` up as fit the limit) and `wantedUpper`
   * upper slots; `move` then copies what the old memory held.
   * @throws AxonError `CAPACITY_EXCEEDED`, changing nothing
   */
  private reallocate(wanted: number, wantedUpper: number, move: ((old: ArrayBuffer) => void) | undefined, minimum: number): void {
    const layout = this.planFor(minimum, wanted, wantedUpper);
    const old = this.wasm?.buffer;
    this.wasm = createMemory(pagedBytes(layout.bytes) / WASM_PAGE_BYTES);
    this.kernel = instantiateKernel(this.wasm);
    this.setViews();
    this.layout = layout;
    if (old !== undefined) move?.(old);
    this.configure();
  }

  private setViews(): void {
    this.floats = new Float32Array(this.wasm.buffer);
    this.ints = new Int32Array(this.wasm.buffer);
    this.bytes = new Uint8Array(this.wasm.buffer);
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
    const limit = this.memoryLimitBytes;
    const m = this.m;
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
}
