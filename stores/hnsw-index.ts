import { z } from 'zod';
import { parseOptions } from '../src/runtime/options.ts';
import { AxonError } from '../src/errors.ts';
import { decodeHnsw, encodeHnsw } from './hnsw-index-format.ts';
import { assertTopK } from './vector-index.ts';

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
    /** Rows allocated up front; the arrays double when full. @default 1024 */
    initialCapacity: z.number().int().min(1).default(1024),
  })
  .strict();

export type HnswIndexOptions = z.input<typeof hnswIndexOptionsSchema>;

/** Ids and dot-product scores, best first. */
export interface HnswHits {
  readonly ids: string[];
  readonly scores: Float64Array;
}

/**
 * Approximate nearest neighbours by dot product (the cosine for unit vectors) with a hierarchical navigable
 * small-world graph (Malkov and Yashunin, 2016), in plain TypeScript over typed arrays: for collections
 * past about a million vectors, where an exact scan (see `SimdVectorSpace`) takes too long per query.
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
  private readonly options: z.output<typeof hnswIndexOptionsSchema>;
  private readonly maxLayerZero: number;
  private capacity: number;
  private nodes = 0;
  private vectors: Float32Array;
  private levels: Uint8Array;
  private deleted: Uint8Array;
  /** Per node: a count, then up to 2m neighbours. */
  private layerZero: Int32Array;
  /** Per node: for each level 1..level, a count and up to m neighbours; undefined on level 0 only. */
  private upperLayers: (Int32Array | undefined)[] = [];
  private ids: string[] = [];
  private readonly nodeById = new Map<string, number>();
  private deletedCount = 0;
  private entryPoint = -1;
  private maxLevel = -1;
  private randomState: number;
  /** Visit marks: a node is visited in the current search when its mark equals `visitEpoch`. */
  private visitMarks: Uint32Array;
  private visitEpoch = 0;

  constructor(options: HnswIndexOptions) {
    const parsed = parseOptions(hnswIndexOptionsSchema, options, typeof options?.component === 'string' ? options.component : 'hnsw-index');
    this.options = parsed;
    this.component = parsed.component;
    this.dimensions = parsed.dimensions;
    this.maxLayerZero = 2 * parsed.m;
    this.randomState = parsed.seed >>> 0 || 1;
    this.capacity = parsed.initialCapacity;
    this.vectors = new Float32Array(this.capacity * this.dimensions);
    this.levels = new Uint8Array(this.capacity);
    this.deleted = new Uint8Array(this.capacity);
    this.layerZero = new Int32Array(this.capacity * (this.maxLayerZero + 1));
    this.visitMarks = new Uint32Array(this.capacity);
  }

  /** Live (not deleted) vectors. */
  get size(): number {
    return this.nodes - this.deletedCount;
  }

  /** Deleted nodes still in the graph (searches walk through them); a rebuild drops them. */
  get tombstones(): number {
    return this.deletedCount;
  }

  /** Bytes held by the graph and its copy of the vectors (typed arrays; ids not counted). */
  get memoryBytes(): number {
    let bytes = this.vectors.byteLength + this.levels.byteLength + this.deleted.byteLength + this.layerZero.byteLength + this.visitMarks.byteLength;
    for (const layers of this.upperLayers) bytes += layers?.byteLength ?? 0;
    return bytes;
  }

  has(id: string): boolean {
    return this.nodeById.has(id);
  }

  /**
   * Insert a vector under `id`, replacing any vector the id had.
   * @throws AxonError `DIMENSION_MISMATCH`, `INVALID_VECTOR` (non-finite values)
   */
  add(id: string, vector: ArrayLike<number>): void {
    if (typeof id !== 'string') throw new AxonError('INVALID_ARGUMENT', 'HNSW ids must be strings.', { component: this.component });
    this.assertVector(vector, 'vector');
    if (this.nodeById.has(id)) this.delete(id);
    if (this.nodes === this.capacity) this.grow(2 * this.capacity);
    const node = this.nodes++;
    this.vectors.set(vector, node * this.dimensions);
    this.ids[node] = id;
    this.nodeById.set(id, node);
    this.link(node, this.drawLevel());
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
    const ef = Math.max(topK, options.ef ?? this.options.ef);
    if (!Number.isSafeInteger(ef)) throw new AxonError('INVALID_ARGUMENT', `ef must be a positive integer, got ${String(options.ef)}.`, { component: this.component });
    if (this.size === 0) return { ids: [], scores: new Float64Array(0) };
    const target = Float32Array.from(query);
    let entry = this.entryPoint;
    for (let level = this.maxLevel; level > 0; level--) entry = this.greedyClosest(target, entry, level);
    const found = this.searchLayer(target, entry, ef, 0, true);
    const count = Math.min(topK, found.nodes.length);
    return { ids: found.nodes.slice(0, count).map((node) => this.ids[node]), scores: Float64Array.from(found.scores.slice(0, count)) };
  }

  /** The whole index as bytes (graph, vectors, ids, options): see hnsw-index-format.ts. */
  serialize(): Uint8Array {
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
    const { dimensions, m, efConstruction, ef, seed } = this.options;
    return encodeHnsw(
      { dimensions, m, efConstruction, ef, seed, randomState: this.randomState, nodes: this.nodes, entryPoint: this.entryPoint, maxLevel: this.maxLevel, ids: this.ids.slice(0, this.nodes) },
      {
        levels: this.levels.subarray(0, this.nodes),
        deleted: this.deleted.subarray(0, this.nodes),
        vectors: this.vectors.subarray(0, this.nodes * this.dimensions),
        layerZero: this.layerZero.subarray(0, this.nodes * (this.maxLayerZero + 1)),
        upperLayers,
      },
    );
  }

  /**
   * Rebuild an index from `serialize`'s bytes. `options` may change what does not shape the graph
   * (component, ef, rebuildRatio).
   * @throws AxonError `STORE_CORRUPT` when the bytes are not a valid index
   */
  static deserialize(bytes: Uint8Array, options: Pick<HnswIndexOptions, 'component' | 'ef' | 'rebuildRatio'> = {}): HnswIndex {
    const component = options.component ?? 'hnsw-index';
    const { header, sections } = decodeHnsw(bytes, component);
    const index = new HnswIndex({ dimensions: header.dimensions, m: header.m, efConstruction: header.efConstruction, ef: options.ef ?? header.ef, seed: header.seed, rebuildRatio: options.rebuildRatio, component, initialCapacity: Math.max(1, header.nodes) });
    index.assertGraph(header.nodes, header.entryPoint, header.maxLevel, sections.levels, sections.layerZero, sections.upperLayers);
    index.nodes = header.nodes;
    index.vectors.set(sections.vectors);
    index.levels.set(sections.levels);
    index.deleted.set(sections.deleted);
    index.layerZero.set(sections.layerZero);
    let offset = 0;
    for (let node = 0; node < header.nodes; node++) {
      const slots = sections.levels[node] * (header.m + 1);
      if (slots > 0) index.upperLayers[node] = sections.upperLayers.slice(offset, offset + slots);
      offset += slots;
      index.ids[node] = header.ids[node];
      if (sections.deleted[node]) index.deletedCount++;
      else index.nodeById.set(header.ids[node], node);
    }
    index.entryPoint = header.entryPoint;
    index.maxLevel = header.maxLevel;
    index.randomState = header.randomState >>> 0 || 1;
    return index;
  }

  // --- Internal helpers ---

  /** Connect a new node on every level up to `level` (the insertion algorithm of the paper). */
  private link(node: number, level: number): void {
    this.levels[node] = level;
    if (level > 0) this.upperLayers[node] = new Int32Array(level * (this.options.m + 1));
    if (this.entryPoint < 0) {
      this.entryPoint = node;
      this.maxLevel = level;
      return;
    }
    const target = this.vectors.subarray(node * this.dimensions, (node + 1) * this.dimensions);
    let entry = this.entryPoint;
    for (let current = this.maxLevel; current > level; current--) entry = this.greedyClosest(target, entry, current);
    for (let current = Math.min(level, this.maxLevel); current >= 0; current--) {
      const found = this.searchLayer(target, entry, this.options.efConstruction, current, false);
      const chosen = this.selectNeighbours(node, found.nodes, found.scores, this.options.m);
      this.writeNeighbours(node, current, chosen);
      for (const neighbour of chosen) this.connect(neighbour, node, current);
      entry = found.nodes[0];
    }
    if (level > this.maxLevel) {
      this.entryPoint = node;
      this.maxLevel = level;
    }
  }

  /** Add `node` to the neighbours of `owner`, pruning with the heuristic when the list is full. */
  private connect(owner: number, node: number, level: number): void {
    const { list, offset, limit } = this.neighbourList(owner, level);
    const count = list[offset];
    if (count < limit) {
      list[offset + 1 + count] = node;
      list[offset] = count + 1;
      return;
    }
    const pool = [{ node, score: this.similarity(owner, node) }];
    for (let slot = 0; slot < count; slot++) pool.push({ node: list[offset + 1 + slot], score: this.similarity(owner, list[offset + 1 + slot]) });
    pool.sort((left, right) => right.score - left.score);
    this.writeNeighbours(owner, level, this.selectNeighbours(owner, pool.map((entry) => entry.node), pool.map((entry) => entry.score), limit));
  }

  /**
   * The paper's heuristic: walk candidates from the most similar to `base`, keeping one only if it is more
   * similar to `base` than to every neighbour kept so far, so the links spread in different directions
   * instead of bunching in one cluster. `candidates` are sorted by `scores`, their similarity to `base`, best first.
   */
  private selectNeighbours(base: number, candidates: number[], scores: number[], limit: number): number[] {
    const kept: number[] = [];
    for (let position = 0; position < candidates.length; position++) {
      const candidate = candidates[position];
      if (candidate === base) continue;
      const toBase = scores[position];
      let diverse = true;
      for (const neighbour of kept) {
        if (this.similarity(candidate, neighbour) > toBase) {
          diverse = false;
          break;
        }
      }
      if (diverse) kept.push(candidate);
      if (kept.length === limit) break;
    }
    return kept;
  }

  private writeNeighbours(node: number, level: number, neighbours: number[]): void {
    const { list, offset } = this.neighbourList(node, level);
    list[offset] = neighbours.length;
    for (let slot = 0; slot < neighbours.length; slot++) list[offset + 1 + slot] = neighbours[slot];
  }

  private neighbourList(node: number, level: number): { list: Int32Array; offset: number; limit: number } {
    if (level === 0) return { list: this.layerZero, offset: node * (this.maxLayerZero + 1), limit: this.maxLayerZero };
    return { list: this.upperLayers[node]!, offset: (level - 1) * (this.options.m + 1), limit: this.options.m };
  }

  /** Walk to the neighbour most similar to `target` until none is better (the descent through upper layers). */
  private greedyClosest(target: Float32Array, start: number, level: number): number {
    let best = start;
    let bestScore = this.score(target, start);
    for (let improved = true; improved; ) {
      improved = false;
      const { list, offset } = this.neighbourList(best, level);
      const count = list[offset];
      for (let slot = 0; slot < count; slot++) {
        const neighbour = list[offset + 1 + slot];
        const score = this.score(target, neighbour);
        if (score > bestScore) {
          bestScore = score;
          best = neighbour;
          improved = true;
        }
      }
    }
    return best;
  }

  /**
   * Best-first search of one layer from `start`, keeping the `ef` most similar nodes. With `liveOnly`,
   * deleted nodes are walked through but not returned. Returns nodes and scores, best first.
   */
  private searchLayer(target: Float32Array, start: number, ef: number, level: number, liveOnly: boolean): { nodes: number[]; scores: number[] } {
    const epoch = this.nextVisitEpoch();
    // Two heaps in plain arrays: candidates to expand (best on top) and results (worst on top).
    const candidates = new ScoredHeap(true);
    const results = new ScoredHeap(false);
    const startScore = this.score(target, start);
    this.visitMarks[start] = epoch;
    candidates.push(start, startScore);
    if (!liveOnly || !this.deleted[start]) results.push(start, startScore);
    while (candidates.size > 0) {
      const currentScore = candidates.topScore();
      if (results.size >= ef && currentScore < results.topScore()) break;
      const current = candidates.pop();
      const { list, offset } = this.neighbourList(current, level);
      const count = list[offset];
      for (let slot = 0; slot < count; slot++) {
        const neighbour = list[offset + 1 + slot];
        if (this.visitMarks[neighbour] === epoch) continue;
        this.visitMarks[neighbour] = epoch;
        const score = this.score(target, neighbour);
        if (results.size < ef || score > results.topScore()) {
          candidates.push(neighbour, score);
          if (!liveOnly || !this.deleted[neighbour]) {
            results.push(neighbour, score);
            if (results.size > ef) results.pop();
          }
        }
      }
    }
    return results.drainBestFirst();
  }

  /** Build the graph again from the live nodes, in their insertion order, without the tombstones. */
  private rebuild(): void {
    const live: number[] = [];
    for (let node = 0; node < this.nodes; node++) if (!this.deleted[node]) live.push(node);
    const vectors = this.vectors;
    const ids = this.ids;
    const capacity = Math.max(this.options.initialCapacity, live.length * 2);
    this.capacity = capacity;
    this.vectors = new Float32Array(capacity * this.dimensions);
    this.levels = new Uint8Array(capacity);
    this.deleted = new Uint8Array(capacity);
    this.layerZero = new Int32Array(capacity * (this.maxLayerZero + 1));
    this.visitMarks = new Uint32Array(capacity);
    this.upperLayers = [];
    this.ids = [];
    this.nodeById.clear();
    this.nodes = 0;
    this.deletedCount = 0;
    this.entryPoint = -1;
    this.maxLevel = -1;
    for (const old of live) this.add(ids[old], vectors.subarray(old * this.dimensions, (old + 1) * this.dimensions));
  }

  private grow(capacity: number): void {
    const grown = <T extends Float32Array | Uint8Array | Int32Array | Uint32Array>(array: T, width: number, make: (length: number) => T): T => {
      const next = make(capacity * width);
      next.set(array);
      return next;
    };
    this.vectors = grown(this.vectors, this.dimensions, (length) => new Float32Array(length));
    this.levels = grown(this.levels, 1, (length) => new Uint8Array(length));
    this.deleted = grown(this.deleted, 1, (length) => new Uint8Array(length));
    this.layerZero = grown(this.layerZero, this.maxLayerZero + 1, (length) => new Int32Array(length));
    this.visitMarks = grown(this.visitMarks, 1, (length) => new Uint32Array(length));
    this.capacity = capacity;
  }

  private nextVisitEpoch(): number {
    if (this.visitEpoch === 0xffffffff) {
      this.visitMarks.fill(0);
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

  private similarity(left: number, right: number): number {
    return dot(this.vectors, left * this.dimensions, this.vectors, right * this.dimensions, this.dimensions);
  }

  private score(target: Float32Array, node: number): number {
    return dot(target, 0, this.vectors, node * this.dimensions, this.dimensions);
  }

  private assertVector(vector: ArrayLike<number>, label: string): void {
    if (vector === null || typeof vector !== 'object' || vector.length !== this.dimensions) {
      throw new AxonError('DIMENSION_MISMATCH', `The ${label} must have ${this.dimensions} values, got ${vector?.length ?? typeof vector}.`, { component: this.component });
    }
    for (let index = 0; index < vector.length; index++) {
      if (!Number.isFinite(vector[index])) {
        throw new AxonError('INVALID_VECTOR', `${label}[${index}] is ${String(vector[index])}; every component must be a finite number.`, { component: this.component });
      }
    }
  }

  /** Refuse a decoded graph whose links point outside it, so a damaged file cannot crash a search. */
  private assertGraph(nodes: number, entryPoint: number, maxLevel: number, levels: Uint8Array, layerZero: Int32Array, upperLayers: Int32Array): void {
    const corrupt = (problem: string) => new AxonError('STORE_CORRUPT', `The HNSW index data is inconsistent: ${problem}.`, { component: this.component, fix: 'Rebuild the index from the stored vectors.' });
    if (entryPoint >= nodes || (nodes > 0 && (entryPoint < 0 || levels[entryPoint] !== maxLevel))) throw corrupt('its entry point is not its highest node');
    const checkList = (list: Int32Array, offset: number, limit: number, where: string) => {
      const count = list[offset];
      if (count < 0 || count > limit) throw corrupt(`${where} has ${count} neighbours (at most ${limit})`);
      for (let slot = 1; slot <= count; slot++) if (list[offset + slot] < 0 || list[offset + slot] >= nodes) throw corrupt(`${where} links to a node that does not exist`);
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

/**
 * A binary heap of (node, score) in two parallel arrays: a max-heap by score when `bestOnTop`, else a
 * min-heap (the worst kept result on top, ready to be dropped).
 */
class ScoredHeap {
  private readonly nodes: number[] = [];
  private readonly scores: number[] = [];
  constructor(private readonly bestOnTop: boolean) {}

  get size(): number {
    return this.nodes.length;
  }

  topScore(): number {
    return this.scores[0];
  }

  push(node: number, score: number): void {
    let position = this.nodes.length;
    this.nodes.push(node);
    this.scores.push(score);
    while (position > 0) {
      const parent = (position - 1) >> 1;
      if (!this.above(score, this.scores[parent])) break;
      this.nodes[position] = this.nodes[parent];
      this.scores[position] = this.scores[parent];
      position = parent;
    }
    this.nodes[position] = node;
    this.scores[position] = score;
  }

  /** Remove the top and return its node. */
  pop(): number {
    const top = this.nodes[0];
    const lastNode = this.nodes.pop()!;
    const lastScore = this.scores.pop()!;
    const size = this.nodes.length;
    if (size === 0) return top;
    let position = 0;
    for (;;) {
      let child = 2 * position + 1;
      if (child >= size) break;
      if (child + 1 < size && this.above(this.scores[child + 1], this.scores[child])) child++;
      if (!this.above(this.scores[child], lastScore)) break;
      this.nodes[position] = this.nodes[child];
      this.scores[position] = this.scores[child];
      position = child;
    }
    this.nodes[position] = lastNode;
    this.scores[position] = lastScore;
    return top;
  }

  /** Empty the heap into arrays sorted best first. */
  drainBestFirst(): { nodes: number[]; scores: number[] } {
    const order = this.nodes.map((_, position) => position).sort((left, right) => this.scores[right] - this.scores[left] || this.nodes[left] - this.nodes[right]);
    return { nodes: order.map((position) => this.nodes[position]), scores: order.map((position) => this.scores[position]) };
  }

  private above(left: number, right: number): boolean {
    return this.bestOnTop ? left > right : left < right;
  }
}

function dot(left: Float32Array, leftBase: number, right: Float32Array, rightBase: number, length: number): number {
  const unrolled = length - (length % 4);
  let sum0 = 0;
  let sum1 = 0;
  let sum2 = 0;
  let sum3 = 0;
  let offset = 0;
  for (; offset < unrolled; offset += 4) {
    sum0 += left[leftBase + offset] * right[rightBase + offset];
    sum1 += left[leftBase + offset + 1] * right[rightBase + offset + 1];
    sum2 += left[leftBase + offset + 2] * right[rightBase + offset + 2];
    sum3 += left[leftBase + offset + 3] * right[rightBase + offset + 3];
  }
  for (; offset < length; offset++) sum0 += left[leftBase + offset] * right[rightBase + offset];
  return sum0 + sum1 + (sum2 + sum3);
}
