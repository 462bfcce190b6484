/**
 * What `MemoryStore` and `FileStore` share to keep a BM25 keyword index beside their vectors: the option
 * that turns it on and tunes it, and the mapping from index hits back to stored documents.
 */
import { z } from 'zod';
import type { KeywordSearchOptions } from '../../src/contracts/keyword-search.ts';
import type { Document } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import { Bm25Index, bm25IndexOptionsSchema, type Bm25DocumentInput } from './bm25-index.ts';
import { assertTopK } from './arguments.ts';
import type { VectorIndex } from './vector-index.ts';

/**
 * `true` (Lucene's BM25 defaults, English analysis), `false` (no keyword index: vector search only), or the
 * index's own options (`k1`, `b`, `tokenizer`).
 */
export const keywordIndexOptionSchema = z.union([z.boolean(), bm25IndexOptionsSchema]).default(true);

export type KeywordIndexOption = z.input<typeof keywordIndexOptionSchema>;

/** A new, empty keyword index for the option, or `undefined` when it is turned off. */
export function createKeywordIndex(option: z.output<typeof keywordIndexOptionSchema>): Bm25Index | undefined {
  if (option === false) return undefined;
  return new Bm25Index(option === true ? {} : option);
}

/** What the keyword index keeps of a stored document. */
export function keywordInput(document: Document): Bm25DocumentInput {
  return { id: document.id, content: document.content, sourceType: document.sourceType, sourceName: document.sourceName, metadata: document.metadata };
}

/**
 * Run a keyword search and return the stored documents (copies, with their embeddings) scored by BM25.
 * A hit the vector index does not hold any more is skipped; it cannot happen while both are kept in step.
 */
export function searchKeywordIndex(
  keyword: Bm25Index | undefined,
  vectors: VectorIndex,
  query: string,
  options: KeywordSearchOptions & { topK: number },
  component: string,
): Document[] {
  if (keyword === undefined) throw keywordIndexDisabled(component);
  if (typeof query !== 'string') {
    throw new AxonError('INVALID_QUESTION', `keywordSearch() takes the query as a string, got ${typeof query}.`, {
      component,
      fix: "Pass the query text as a string: keywordSearch('refund policy', { topK: 5 }).",
      details: { argument: 'query' },
    });
  }
  assertTopK(options.topK, component);
  const results: Document[] = [];
  for (const hit of keyword.search(query, { topK: options.topK, filter: options.filter })) {
    const document = vectors.get(hit.id);
    if (document === undefined) continue;
    document.score = hit.score;
    results.push(document);
  }
  return results;
}

/** The error for keyword search on a store built with `keywordIndex: false`. */
export function keywordIndexDisabled(component: string): AxonError {
  return new AxonError('CAPABILITY_MISSING', 'This store was built without its keyword index, so it cannot run keyword or hybrid search.', {
    component,
    fix: 'Build the store with keywordIndex: true (the default), or use searchMode "vector".',
    details: { capability: 'keyword-search' },
  });
}
