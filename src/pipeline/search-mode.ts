/**
 * How candidates are found: `vector` (embeddings, cosine), `keyword` (BM25 over the store's keyword index; no
 * embedding at all), or `hybrid` (both for every query, fused by reciprocal rank fusion, k = 60).
 */
export type SearchMode = 'vector' | 'keyword' | 'hybrid';

export const SEARCH_MODES: readonly SearchMode[] = ['vector', 'keyword', 'hybrid'];

/** Per-retriever weights of hybrid fusion: each list's RRF contributions are multiplied by its weight. */
export interface HybridWeights {
  /** @default 1 */
  vector?: number;
  /** @default 1 */
  keyword?: number;
}
