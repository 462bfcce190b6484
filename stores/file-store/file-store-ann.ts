/**
 * The approximate nearest-neighbour index of `FileStore`: an `HnswIndex` over the stored unit vectors, saved
 * as `ann-index-<generation>.hnsw` under `components.ann` in the manifest, kept in step with writes and
 * caught up on load like the keyword index (see file-store-snapshot.ts).
 *
 * It proposes candidates only: a search takes the graph's `ef` best nodes and scores them exactly (the
 * arithmetic of the exact scan), so the scores are exact and only which documents are considered is
 * approximate. The graph keeps no vectors: it reads the store's, in the same WebAssembly memory.
 */
import { z } from 'zod';
import type { Document, Vector } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import type { DerivedIndexKind } from './file-store-snapshot.ts';
import { HnswIndex, hnswIndexOptionsSchema } from '../indexes/hnsw-index.ts';
import type { VectorIndex, VectorPrecision } from '../indexes/vector-index.ts';

/** The graph's settings and when to use it (the object form of the `ann` option). */
export const annSettingsSchema = hnswIndexOptionsSchema.pick({ m: true, efConstruction: true, ef: true, memoryLimitBytes: true }).extend({
  /**
   * Unfiltered searches use the graph once the store holds this many documents; below it an exact scan
   * is about as fast (100k × 384 dimensions scan in ~6 ms). The graph is kept from the first document
   * either way, so it is ready when the store grows past the threshold. @default 100000
   */
  minDocuments: z.number().int().min(0).default(100_000),
});

/** `false` (exact search only), `true` (the default settings) or the settings. */
export const annOptionSchema = z.union([z.boolean(), annSettingsSchema]).default(false);

export type AnnOption = z.input<typeof annOptionSchema>;

/** The ANN settings of a store. */
export type AnnSettings = Readonly<z.output<typeof annSettingsSchema>>;

/** The settings an `ann` option means, or `undefined` when the store keeps no graph. */
export function annSettings(option: z.output<typeof annOptionSchema>): AnnSettings | undefined {
  if (option === false) return undefined;
  return option === true ? annSettingsSchema.parse({}) : option;
}

/**
 * The store's graph: an `HnswIndex` over the store's `VectorIndex` (`HnswIndex.over`), reading the vectors
 * in place, so the store holds one copy of them. It is created by the first vector added, since an empty
 * store does not know its dimensions yet, over the `VectorIndex` it was first handed (`bind`).
 */
export class AnnGraph {
  graph: HnswIndex | undefined;
  private vectors: VectorIndex | undefined;
  constructor(private readonly make: (vectors: VectorIndex, dimensions: number) => HnswIndex) {}

  get size(): number {
    return this.graph?.size ?? 0;
  }

  /** The vectors the graph reads: set once, before anything is added. */
  bind(vectors: VectorIndex): void {
    if (this.vectors !== undefined && this.vectors !== vectors) {
      throw new AxonError('INTERNAL', 'The ANN graph was handed the vectors of another load of the store.', {
        component: 'file-store',
        details: { invariant: 'ann-graph-over-its-own-vectors' },
      });
    }
    this.vectors = vectors;
  }

  /** Link a vector the store is about to store under `id` (a committed write, before the vector index has it). */
  add(id: string, vector: Float32Array): void {
    this.makeRoomFor(1);
    (this.graph ??= this.make(this.boundVectors(), vector.length)).add(id, vector);
  }

  /** Make room for `count` more vectors at once, when a load links many. */
  reserve(count: number): void {
    const vectors = this.boundVectors();
    if (count === 0 || (this.graph === undefined && vectors.dimensions === undefined)) return;
    const graph = (this.graph ??= this.make(vectors, vectors.dimensions!));
    // As many as fit: a store past the limit is refused at its next write, not here.
    try {
      graph.reserve(graph.size + count);
    } catch (error) {
      if (!AxonError.isInstance(error) || error.code !== 'CAPACITY_EXCEEDED') throw error;
    }
  }

  /** Link the document the vector index holds at `row`. */
  addRow(id: string, row: number): void {
    const vectors = this.boundVectors();
    this.makeRoomFor(1);
    (this.graph ??= this.make(vectors, vectors.dimensions!)).addRow(id, row);
  }

  /**
   * Make room for `count` more vectors.
   * @throws AxonError `CAPACITY_EXCEEDED` when even that does not make room (nothing changed then)
   */
  makeRoomFor(count: number): void {
    const graph = this.graph;
    if (graph === undefined || count === 0) return;
    try {
      graph.assertRoomFor(count);
    } catch (error) {
      if (graph.tombstones === 0) throw error;
      graph.compact();
      graph.assertRoomFor(count);
    }
  }

  delete(ids: Iterable<string>): void {
    if (this.graph) for (const id of ids) this.graph.delete(id);
  }

  private boundVectors(): VectorIndex {
    if (this.vectors === undefined) {
      throw new AxonError('INTERNAL', 'The ANN graph was used before it was given the vectors it reads.', {
        component: 'file-store',
        details: { invariant: 'ann-graph-bound' },
      });
    }
    return this.vectors;
  }
}

/** The HNSW graph as a derived index of a store with these settings (and `precision`, which sizes the memory the graph shares with the vectors). */
export function annIndexKind(settings: AnnSettings, component: string, precision: VectorPrecision = 'exact'): DerivedIndexKind<AnnGraph> {
  const options = (dimensions: number) => ({
    dimensions,
    m: settings.m,
    efConstruction: settings.efConstruction,
    ef: settings.ef,
    memoryLimitBytes: settings.memoryLimitBytes,
    component,
  });
  const make = (vectors: VectorIndex, dimensions: number) => HnswIndex.over(vectors, options(dimensions));
  return {
    key: 'ann',
    label: 'ANN index',
    file: 'ann-index.hnsw',
    // Linking a vector into the graph costs 1–3 ms, writing a node to the snapshot (~300 bytes) about a
    // microsecond: the share that minimises writes plus the worst catch-up is about the square root of that
    // ratio, ~2%. Snapshots then total ~50× the final graph over an ingest, a few percent of its build time.
    staleShare: 0.02,
    saveAfterCatchUp: true,
    create: () => new AnnGraph(make),
    deserialize: (bytes, vectors) => {
      const loaded = new AnnGraph(make);
      loaded.bind(vectors);
      // The snapshot holds the graph without the vectors, which the graph reads from the loaded store's. A
      // node whose document was deleted since is deleted; one replaced since reads the new vector, and the
      // catch-up links it again.
      const graph = HnswIndex.deserialize(bytes, { component, ef: settings.ef, memoryLimitBytes: settings.memoryLimitBytes, over: vectors });
      // A graph of deleted nodes only is dropped: the next vector starts a new one.
      if (graph.size > 0) loaded.graph = graph;
      return loaded;
    },
    serialize: (index) => (index.graph ?? new HnswIndex(options(1))).serialize({ vectors: 'deleted' }),
    matchesSettings: (index) => index.graph === undefined || (index.graph.m === settings.m && index.graph.efConstruction === settings.efConstruction),
    addRows: (index, vectors, rows) => {
      index.bind(vectors);
      index.reserve(rows.length);
      for (const row of rows) index.addRow(vectors.idAt(row), row);
    },
    // Checked for every write, whether or not this process has loaded the graph: the store after the write
    // must fit one memory with its graph, or no later load could link it.
    prepare: (live, dimensions) => {
      const limit = HnswIndex.maxNodes(dimensions, { ...settings, sharedWith: { int8: precision === 'int8' } });
      if (live > limit) {
        throw new AxonError(
          'CAPACITY_EXCEEDED',
          `The store would hold ${live.toLocaleString('en')} documents, but its vectors and ANN graph of ${dimensions} dimensions (m ${settings.m}) hold at most ${limit.toLocaleString('en')} in ${(settings.memoryLimitBytes / 2 ** 20).toFixed(0)} MiB of WebAssembly memory (one 32-bit memory addresses at most 4 GiB). Nothing was stored.`,
          {
            component,
            fix: 'Split the collection across several stores, lower m, turn ann off for this store, or move it to a server store such as Qdrant.',
            details: { documents: live, limit, dimensions, m: settings.m },
          },
        );
      }
    },
    apply: (index, change) => {
      index.delete(change.removed ?? []);
      const added = change.added;
      if (added === undefined) return;
      index.reserve(added.documents.length);
      added.documents.forEach((document, position) =>
        index.add(document.id, added.vectors.subarray(position * added.dimensions, (position + 1) * added.dimensions)),
      );
    },
    count: (index) => index.size,
    ids: (index) => index.graph?.ids() ?? [],
    remove: (index, ids) => index.delete(ids),
  };
}

/**
 * The `topK` best documents among the graph's `ef` candidates (at least `topK`), scored exactly: what
 * `vectors.search` over the candidates' rows returns, from one kernel call over the graph and the vectors
 * it shares with `vectors`. The graph must hold exactly the documents of `vectors`.
 */
export function searchWithAnn(ann: AnnGraph, vectors: VectorIndex, vector: Vector, topK: number, ef: number): Document[] {
  const graph = ann.graph;
  if (graph === undefined) return vectors.search(vector, { topK });
  const hits = graph.searchRows((query) => vectors.unitQueryInto(vector, query), topK, Math.max(topK, ef));
  // A walk that reached fewer nodes than it should (a part of the graph cut off by deletions, or a tiny m)
  // would return a short list: scan instead, so a search never returns fewer than the store can give.
  if (hits.rows.length < Math.min(topK, vectors.size)) return vectors.search(vector, { topK });
  return vectors.documentsAt(hits);
}
