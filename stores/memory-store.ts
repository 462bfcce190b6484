import { z } from 'zod';
import type { StoreOperationOptions, VectorSearchOptions, VectorStore } from '../src/contracts/vector-store.ts';
import type { Document, Vector } from '../src/document.ts';
import { throwIfAborted } from '../src/errors.ts';
import { assertIdList, assertSourceArguments, configError, VectorIndex } from './vector-index.ts';

export const memoryStoreOptionsSchema = z
  .object({
    /** Number of results of `search` when the query does not say. @default 50 */
    topK: z.number().int().min(1).default(50),
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
export class MemoryStore implements VectorStore {
  readonly name = NAME;
  readonly topK: number;
  private readonly index = new VectorIndex({ component: NAME });

  constructor(options: MemoryStoreOptions = {}) {
    const parsed = memoryStoreOptionsSchema.safeParse(options);
    if (!parsed.success) throw configError(parsed.error.issues, NAME);
    this.topK = parsed.data.topK;
  }

  /**
   * Insert or replace documents by id. Everything is validated before anything is written.
   * @throws AxonError `MISSING_EMBEDDINGS`, `DUPLICATE_ID`, `INVALID_VECTOR`, `DIMENSION_MISMATCH`, `INVALID_DOCUMENT`
   */
  async add(documents: Document[], options: StoreOperationOptions = {}): Promise<void> {
    throwIfAborted(options.signal, NAME);
    this.index.add(documents);
  }

  /**
   * The most similar documents by cosine, best first.
   * @throws AxonError `INVALID_TOP_K`, `INVALID_VECTOR`, `DIMENSION_MISMATCH`; FilterError for a bad filter
   */
  async search(vector: Vector, options: VectorSearchOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    return this.index.search(vector, { topK: options.topK ?? this.topK, filter: options.filter });
  }

  async deleteBySource(sourceType: string, sourceName?: string, options: StoreOperationOptions = {}): Promise<number> {
    throwIfAborted(options.signal, NAME);
    assertSourceArguments(sourceType, sourceName, NAME);
    return this.index.delete(this.index.idsOfSource(sourceType, sourceName));
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
