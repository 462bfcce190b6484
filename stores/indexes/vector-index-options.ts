/** The options of `VectorIndex` (vector-index.ts). */
import { z } from 'zod';

/** How a vector search scans: exactly in float32, or over int8 codes with an exact re-score. */
export const vectorPrecisionSchema = z.enum(['exact', 'int8']).default('exact');

export type VectorPrecision = z.output<typeof vectorPrecisionSchema>;

export const vectorIndexOptionsSchema = z
  .object({
    /** Name used in errors, usually the store's. @default 'vector-index' */
    component: z.string().min(1).default('vector-index'),
    /** Rows allocated before the first insert grows the buffer (it doubles when full). @default 1024 */
    initialCapacity: z.number().int().min(1).default(1024),
    /**
     * How many filters keep their matching rows between searches (until the next write), so a filter used
     * again, as multi-query retrieval does, skips evaluating every document. 0 turns it off. @default 16
     */
    filterCacheSize: z.number().int().min(0).default(16),
    /**
     * `exact`: every row is scored in float32 by the SIMD kernel and the top candidates re-scored in float64.
     * `int8`: rows are also kept as int8 codes; a search scans the codes (about 3× faster, a quarter of the
     * memory traffic) and re-scores the best candidates exactly, so scores stay exact and only the candidate
     * set is approximate (recall@50 measured at 1.000 on random and SciFact vectors). @default 'exact'
     */
    precision: vectorPrecisionSchema,
    /**
     * Plan room in the vectors' memory for an HNSW graph over them (`HnswIndex.over`) with this `m`, so the
     * graph attaches without the vectors being copied into a larger memory (what `FileStore` with `ann`
     * asks for). Until a graph attaches, the room costs address space, not memory.
     */
    reserveGraph: z
      .object({ m: z.number().int().min(2).max(128) })
      .strict()
      .optional(),
  })
  .strict();

export type VectorIndexOptions = z.input<typeof vectorIndexOptionsSchema>;
