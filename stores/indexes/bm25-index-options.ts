/** The options of `Bm25Index` (bm25-index.ts), the documents it takes and what a search takes and returns. */
import { z } from 'zod';
import type { JsonValue } from '../../src/document.ts';
import type { Filter, FilterPredicate } from '../../src/filter/index.ts';
import { textTokenizerOptionsSchema } from './text-tokenizer.ts';

export const bm25IndexOptionsSchema = z
  .object({
    /** Term-frequency saturation: how quickly repeated occurrences stop adding score. Lucene's default. @default 0.9 */
    k1: z.number().finite().min(0).default(0.9),
    /** Length normalisation, from 0 (none) to 1 (full). Lucene's default. @default 0.4 */
    b: z.number().finite().min(0).max(1).default(0.4),
    /** Results of `search` when the call does not say. @default 50 */
    topK: z.number().int().min(1).default(50),
    /** How documents and queries are split into terms (see `TextTokenizer`). @default English: stopwords and Porter stemming */
    tokenizer: textTokenizerOptionsSchema.prefault({}),
  })
  .strict();

export type Bm25IndexOptions = z.input<typeof bm25IndexOptionsSchema>;

/** What the index needs of a document: its text, and the fields filters can see. `Document` fits. */
export interface Bm25DocumentInput {
  id: string;
  content: string;
  sourceType?: string;
  sourceName?: string;
  metadata?: Record<string, JsonValue>;
}

/** One search result: the document's id and its BM25 score. */
export interface Bm25Hit {
  id: string;
  score: number;
}

export interface Bm25SearchOptions {
  /** How many hits to return. @default the index's topK (50) */
  topK?: number;
  /** Metadata filter (SPEC §4), applied before ranking, so every returned hit matches. */
  filter?: Filter;
  /** A compiled filter (`compileFilter(parseFilter(f))`), evaluated like `filter`; both may be given. */
  predicate?: FilterPredicate;
}
