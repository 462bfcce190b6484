import type { EmbeddingsProvider } from '../contracts/embeddings.ts';
import { supportsKeywordSearch } from '../contracts/keyword-search.ts';
import type { VectorStore } from '../contracts/vector-store.ts';
import type { HybridWeights, SearchMode } from './search-mode.ts';

/**
 * Hybrid weights for the local hashing embedder. Its vectors are a lexical signal without IDF, weaker than
 * BM25 on every benchmark we ran (nDCG@10 on SciFact 0.448 against 0.697, on HotpotQA-500 0.602 against
 * 0.783), so equal weights pull hybrid below keyword search alone (0.567 on SciFact). With the vector weight
 * 1/(k + 2), k = 60, the most a document gains from the vector list (ranked first: w/(k + 1)) equals the gap
 * between BM25's first two ranks (1/(k + 1) − 1/(k + 2)): the vector list breaks BM25's near-ties and adds
 * documents BM25 cannot find (no shared term; typos and word forms the character n-grams still match), but
 * does not overturn BM25's order. See docs/search.md for the measurements.
 */
export const LOCAL_EMBEDDINGS_HYBRID_WEIGHTS: Readonly<Required<HybridWeights>> = Object.freeze({ vector: 1 / 62, keyword: 1 });

/**
 * The retrieval defaults that suit a pipeline's parts, or `undefined` for the generic ones (`hybrid` when the
 * store has a keyword index, else `vector`; equal weights). With the local hashing embedder, keyword search is far stronger than its vectors, so such a
 * pipeline defaults to `hybrid` with BM25-led weights when its store has a keyword index.
 */
export function retrievalDefaultsFor(parts: {
  embeddings: EmbeddingsProvider;
  store: VectorStore;
}): { searchMode: SearchMode; hybridWeights: Required<HybridWeights> } | undefined {
  if (parts.embeddings.capabilities?.lexical !== true) return undefined;
  return { searchMode: supportsKeywordSearch(parts.store) ? 'hybrid' : 'vector', hybridWeights: { ...LOCAL_EMBEDDINGS_HYBRID_WEIGHTS } };
}
