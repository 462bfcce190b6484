import { parseOptions } from '../../src/runtime/options.ts';
import { z } from 'zod';
import type { KeywordSearchable, KeywordSearchOptions } from '../../src/contracts/keyword-search.ts';
import type { StoreOperationOptions, VectorSearchOptions, VectorStore, VectorStoreCapabilities } from '../../src/contracts/vector-store.ts';
import type { Document, Vector } from '../../src/document.ts';
import { throwIfAborted } from '../../src/errors.ts';
import type { Bm25Index } from '../indexes/bm25-index.ts';
import { createKeywordIndex, keywordIndexOptionSchema, keywordInput, searchKeywordIndex } from '../indexes/keyword-index-support.ts';
import { assertEf, assertIdList, assertSourceArguments } from '../indexes/arguments.ts';
import { vectorPrecisionSchema, VectorIndex } from '../indexes/vector-index.ts';

export const memoryStoreOptionsSchema = z
  .object({
    /** Number of results of `search` when the query does not say. @default 50 */
    topK: z.number().int().min(1).default(50),
    /**
     * Keep a BM25 keyword index beside the vectors, for keyword and hybrid search: `true`, `false`, or the
     * index's options (`{ k1, b, tokenizer }`, see `Bm25Index`). `add` then also tokenizes every document.
     * @default true
     */
    keywordIndex: keywordIndexOptionSchema,
    /** `exact` (float32 scan) or `int8` (int8 scan with an exact re-score of the best candidates; see `VectorIndex`). @default 'exact' */
    precision: vectorPrecisionSchema,
  })
  .strict();

export type MemoryStoreOptions = z.input<typeof memoryStoreOptionsSchema>;

const NAME = 'memory-store';

/**
 * A vector store that lives in process memory and is gone when the process exits: for tests, demos and
 * short-lived pipelines. Exact cosine search over one contiguous `Float32Array` (see `VectorIndex`).
 *
 * @example
 * const store = new MemoryStore({ topK: 20 });
 * await store.add([{ id: 'a', content: 'Hello', sourceType: 'manual', sourceName: '', score: 0, metadata: {}, embedding: [1, 0] }]);
 * const [best] = await store.search([1, 0.1]);
 */
export class MemoryStore implements VectorStore, KeywordSearchable {
  readonly name = NAME;
  readonly topK: number;
  /** False when the store was built without its keyword index (`keywordIndex: false`). */
  readonly keywordIndexEnabled: boolean;
  /** `keywordSearch` follows `keywordIndexEnabled`. */
  readonly capabilities: VectorStoreCapabilities;
  private readonly index: VectorIndex;
  private readonly keyword: Bm25Index | undefined;

  constructor(options: MemoryStoreOptions = {}) {
    const parsed = parseOptions(memoryStoreOptionsSchema, options, NAME);
    this.topK = parsed.topK;
    this.index = new VectorIndex({ component: NAME, precision: parsed.precision });
    this.keyword = createKeywordIndex(parsed.keywordIndex);
    this.keywordIndexEnabled = this.keyword !== undefined;
    this.capabilities = Object.freeze({ keywordSearch: this.keywordIndexEnabled });
  }

  /**
   * Insert or replace documents by id. Everything is validated before anything is written.
   * @throws AxonError `MISSING_EMBEDDINGS`, `DUPLICATE_ID`, `INVALID_VECTOR`, `DIMENSION_MISMATCH`, `INVALID_DOCUMENT`
   */
  async add(documents: Document[], options: StoreOperationOptions = {}): Promise<void> {
    throwIfAborted(options.signal, NAME);
    // Validate first, so a bad batch changes neither index.
    const batch = this.index.prepare(documents);
    this.keyword?.add(batch.documents.map(keywordInput));
    this.index.insert(batch);
  }

  /**
   * The most similar documents by cosine, best first. The search is exact; `ef` is checked like every store's, then ignored.
   * @throws AxonError `INVALID_TOP_K`, `INVALID_OPTION` (ef), `INVALID_VECTOR`, `DIMENSION_MISMATCH`; FilterError for a bad filter
   */
  async search(vector: Vector, options: VectorSearchOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    assertEf(options.ef, NAME);
    return this.index.search(vector, { topK: options.topK ?? this.topK, filter: options.filter });
  }

  /**
   * The documents that best match the words of `query` by BM25, best first, with BM25 scores and embeddings.
   * @throws AxonError `CAPABILITY_MISSING` when built with `keywordIndex: false`, `INVALID_TOP_K`; FilterError
   */
  async keywordSearch(query: string, options: KeywordSearchOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    return searchKeywordIndex(this.keyword, this.index, query, { ...options, topK: options.topK ?? this.topK }, NAME);
  }

  async deleteBySource(sourceType: string, sourceName?: string, options: StoreOperationOptions = {}): Promise<number> {
    throwIfAborted(options.signal, NAME);
    assertSourceArguments(sourceType, sourceName, NAME);
    const ids = this.index.idsOfSource(sourceType, sourceName);
    this.keyword?.remove(ids);
    return this.index.delete(ids);
  }

  async getByIds(ids: string[], options: StoreOperationOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    assertIdList(ids, NAME);
    const found: Document[] = [];
    for (const id of ids) {
      const document = this.index.get(id);
      if (document) found.push(document);
    }
    return found;
  }

  async getBySource(sourceType: string, sourceName?: string, options: StoreOperationOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    assertSourceArguments(sourceType, sourceName, NAME);
    return this.index.documentsOfSource(sourceType, sourceName);
  }

  async count(options: StoreOperationOptions = {}): Promise<number> {
    throwIfAborted(options.signal, NAME);
    return this.index.size;
  }
}
