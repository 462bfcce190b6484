import type { Document } from '../document.ts';
import type { Filter } from '../filter/types.ts';

export interface KeywordSearchOptions {
  /** How many documents to return. @default the store's topK (50 unless configured) */
  topK?: number;
  /** Metadata filter (SPEC §4), applied inside the search, so every returned document matches. */
  filter?: Filter;
  signal?: AbortSignal;
}

/**
 * A store that also keeps a BM25 keyword index over the same documents, kept in step with `add` and
 * `deleteBySource`. Hybrid and keyword search modes need it; vector search does not.
 *
 * Scores returned by `keywordSearch` are BM25 scores (unbounded, ≥ 0, comparable only within one query),
 * not cosine similarities: a threshold meant for cosine does not apply to them.
 */
export interface KeywordSearchable {
  /** False when the store was built without its keyword index (`keywordIndex: false`). */
  readonly keywordIndexEnabled: boolean;
  /**
   * The `topK` documents that best match the words of `query` by BM25, best first, each with `score` (BM25)
   * and `embedding` set. Only documents containing at least one query term are returned, so the list may
   * be shorter than `topK`, or empty.
   *
   * @throws AxonError `CAPABILITY_MISSING` when the keyword index is turned off; `INVALID_TOP_K`; FilterError.
   */
  keywordSearch(query: string, options?: KeywordSearchOptions): Promise<Document[]>;
}

/** True when `store` can serve keyword search now: it implements `keywordSearch` and its index is on. */
export function supportsKeywordSearch<T extends object>(store: T): store is T & KeywordSearchable {
  const candidate = store as Partial<KeywordSearchable> | null;
  return candidate !== null && typeof candidate === 'object' && typeof candidate.keywordSearch === 'function' && candidate.keywordIndexEnabled === true;
}
