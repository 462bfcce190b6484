import { supportsKeywordSearch } from '../contracts/keyword-search.ts';
import type { VectorStore } from '../contracts/vector-store.ts';
import { AxonError } from '../errors.ts';

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

/**
 * The search mode a run uses, checked: one of `SEARCH_MODES`, and a keyword mode only on a store with a keyword index.
 *
 * @throws AxonError `INVALID_OPTION` for another value; `CAPABILITY_MISSING` for keyword search on a store without BM25.
 */
export function resolveSearchMode(mode: unknown, store: VectorStore, component = 'rag'): SearchMode {
  if (!SEARCH_MODES.includes(mode as SearchMode)) {
    throw new AxonError('INVALID_OPTION', `searchMode must be one of ${SEARCH_MODES.map((name) => `"${name}"`).join(', ')}, got ${JSON.stringify(mode)}.`, {
      component,
      fix: 'Use "vector" (embeddings), "keyword" (BM25) or "hybrid" (both, fused).',
      details: { option: 'searchMode' },
    });
  }
  if (mode !== 'vector' && !supportsKeywordSearch(store)) {
    throw new AxonError('CAPABILITY_MISSING', `searchMode "${mode}" needs a keyword (BM25) index, and this store has none.`, {
      component: store.name,
      fix: 'Use FileStore or MemoryStore (with keywordIndex left on), or searchMode "vector".',
      details: { capability: 'keyword-search' },
    });
  }
  return mode as SearchMode;
}

/**
 * Hybrid fusion's weights with their defaults (1 each), checked: finite, ≥ 0, not both 0.
 *
 * @throws AxonError `INVALID_OPTION` naming the weight.
 */
export function resolveHybridWeights(weights: HybridWeights, component = 'rag'): Required<HybridWeights> {
  const resolved = { vector: weights.vector ?? 1, keyword: weights.keyword ?? 1 };
  for (const [name, weight] of Object.entries(resolved)) {
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) {
      throw new AxonError('INVALID_OPTION', `hybridWeights.${name} must be a finite number ≥ 0, got ${String(weight)}.`, {
        component,
        fix: 'Use weights such as { vector: 1, keyword: 1 }.',
        details: { option: `hybridWeights.${name}` },
      });
    }
  }
  if (resolved.vector === 0 && resolved.keyword === 0) {
    throw new AxonError('INVALID_OPTION', 'hybridWeights are both 0, so fusion could not rank anything.', {
      component,
      fix: 'Give at least one retriever a positive weight.',
      details: { option: 'hybridWeights' },
    });
  }
  return resolved;
}
