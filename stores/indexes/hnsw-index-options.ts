/** The options of `HnswIndex` (hnsw-index.ts), what `deserialize` accepts, and what a search returns. */
import { z } from 'zod';
import { WASM_MEMORY_LIMIT_BYTES } from './simd/simd-index.ts';
import { WASM_PAGE_BYTES } from './simd/space-layout.ts';
import type { VectorIndex } from './vector-index.ts';

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
