/**
 * The approximate nearest-neighbour index of `FileStore`: an `HnswIndex` over the stored unit vectors, saved
 * as `ann-index-<generation>.hnsw` under `components.ann` in the manifest, kept in step with writes and
 * caught up on load like the keyword index (see file-store-snapshot.ts).
 *
 * It proposes candidates only: a search takes the graph's `ef` best nodes and scores them exactly, through
 * the same scan as an exact search, so the scores are exact and only which documents are considered is
 * approximate.
 */
import { z } from 'zod';
import type { Document, Vector } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import type { DerivedIndexKind } from './file-store-snapshot.ts';
import { HnswIndex, hnswIndexOptionsSchema } from '../indexes/hnsw-index.ts';
import type { VectorIndex } from '../indexes/vector-index.ts';

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
 * The store's graph. It is created by the first vector added, since an empty store does not know its
 * dimensions yet.
 */
export class AnnGraph {
  graph: HnswIndex | undefined;
  constructor(private readonly make: (dimensions: number) => HnswIndex) {}

  get size(): number {
    return this.graph?.size ?? 0;
  }

  add(id: string, vector: Float32Array): void {
    this.makeRoomFor(1);
    (this.graph ??= this.make(vector.length)).add(id, vector);
  }

  /**
   * Make room for `count` more vectors: when the memory is full of tombstones, rebuild without them.
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
}

/** The HNSW graph as a derived index of a store with these settings. */
export function annIndexKind(settings: AnnSettings, component: string): DerivedIndexKind<AnnGraph> {
  const make = (dimensions: number) =>
    new HnswIndex({
      dimensions,
      m: settings.m,
      efConstruction: settings.efConstruction,
      ef: settings.ef,
      memoryLimitBytes: settings.memoryLimitBytes,
      component,
    });
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
      // The snapshot holds the graph without the vectors the segments already hold. A node whose document
      // was deleted since comes back as a tombstone; one replaced since gets the new vector, and the
      // catch-up re-links it.
      const vectorOf = (id: string) => {
        const row = vectors.rowOf(id);
        return row === undefined ? undefined : vectors.vectorAt(row);
      };
      const graph = HnswIndex.deserialize(bytes, { component, ef: settings.ef, memoryLimitBytes: settings.memoryLimitBytes, vectorOf });
      // A graph of deleted nodes only is dropped: the next vector starts a new one.
      if (graph.size > 0) loaded.graph = graph;
      return loaded;
    },
    serialize: (index) => (index.graph ?? make(1)).serialize({ vectors: 'deleted' }),
    matchesSettings: (index) => index.graph === undefined || (index.graph.m === settings.m && index.graph.efConstruction === settings.efConstruction),
    addRows: (index, vectors, rows) => {
      for (const row of rows) index.add(vectors.storedDocumentAt(row).id, vectors.vectorAt(row));
    },
    // Checked for every write, whether or not this process has loaded the graph: the store after the write
    // must fit one graph, or no later load could link it.
    prepare: (live, dimensions) => {
      const limit = HnswIndex.maxNodes(dimensions, settings);
      if (live > limit) {
        throw new AxonError(
          'CAPACITY_EXCEEDED',
          `The store would hold ${live.toLocaleString('en')} documents, but its ANN graph of ${dimensions} dimensions (m ${settings.m}) holds at most ${limit.toLocaleString('en')} in ${(settings.memoryLimitBytes / 2 ** 20).toFixed(0)} MiB of WebAssembly memory (one 32-bit memory addresses at most 4 GiB). Nothing was stored.`,
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
 * The `topK` best documents among the graph's `ef` candidates (at least `topK`), scored exactly by `vectors`.
 * The graph must hold exactly the documents of `vectors`.
 */
export function searchWithAnn(ann: AnnGraph, vectors: VectorIndex, vector: Vector, topK: number, ef: number): Document[] {
  const graph = ann.graph;
  if (graph === undefined) return vectors.search(vector, { topK });
  const wanted = Math.max(topK, ef);
  const candidates = graph.search(vectors.unitQuery(vector), wanted, { ef: wanted });
  // A walk that reached fewer nodes than it should (a part of the graph cut off by deletions, or a tiny m)
  // would return a short list: scan instead, so a search never returns fewer than the store can give.
  if (candidates.ids.length < Math.min(topK, vectors.size)) return vectors.search(vector, { topK });
  const rows = new Int32Array(candidates.ids.length);
  let count = 0;
  for (const id of candidates.ids) {
    const row = vectors.rowOf(id);
    if (row !== undefined) rows[count++] = row;
  }
  return vectors.search(vector, { topK, rows: rows.subarray(0, count) });
}
