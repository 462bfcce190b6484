import type { Document } from '../document.ts';
import { AxonError } from '../errors.ts';
import type { Filter } from '../filter/types.ts';
import type { VectorStoreCapabilities } from './vector-store.ts';

export interface KeywordSearchOptions {
  /** How many documents to return. @default the store's topK (50 unless configured) */
  topK?: number;
  /** Metadata filter (SPEC §4), applied inside the search, so every returned document matches. */
  filter?: Filter;
  signal?: AbortSignal;
}

/**
 * A store that also keeps a BM25 keyword index over the same documents, kept in step with `add` and
 * `deleteBySource`. Hybrid and keyword search modes need it; vector search does not. A store declares it with
 * `capabilities: { keywordSearch: true }` (see `VectorStoreCapabilities`); the pipeline reads that declaration.
 *
 * Scores returned by `keywordSearch` are BM25 scores (unbounded, ≥ 0, comparable only within one query),
 * not cosine similarities: a threshold meant for cosine does not apply to them.
 */
export interface KeywordSearchable {
  /** The declaration the pipeline reads: `keywordSearch` is true while the index is on. */
  readonly capabilities: VectorStoreCapabilities;
  /**
   * The `topK` documents that best match the words of `query` by BM25, best first, each with `score` (BM25)
   * and `embedding` set. Only documents containing at least one query term are returned, so the list may
   * be shorter than `topK`, or empty.
   *
   * @throws AxonError `CAPABILITY_MISSING` when the keyword index is turned off; `INVALID_TOP_K`; FilterError.
   */
  keywordSearch(query: string, options?: KeywordSearchOptions): Promise<Document[]>;
}

/**
 * True when `store` declares keyword search (`capabilities.keywordSearch`). A store that declares it without
 * implementing `keywordSearch` breaks its contract: this throws `INTERNAL` naming it rather than guess.
 */
export function supportsKeywordSearch<T extends object>(store: T): store is T & KeywordSearchable {
  if (store === null || typeof store !== 'object') return false;
  const { capabilities, keywordSearch } = store as Partial<KeywordSearchable> & { name?: unknown };
  if (capabilities?.keywordSearch !== true) return false;
  if (typeof keywordSearch !== 'function') {
    const name = typeof (store as { name?: unknown }).name === 'string' ? (store as { name: string }).name : 'vector-store';
    throw new AxonError('INTERNAL', 'The store declares capabilities.keywordSearch but has no keywordSearch() method.', {
      component: name,
      fix: 'Implement keywordSearch(query, options) (KeywordSearchable), or declare keywordSearch: false.',
      details: { invariant: 'declared-keyword-search-is-implemented' },
    });
  }
  return true;
}
