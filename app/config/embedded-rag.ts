import { FileStore } from '../../stores/file-store/file-store.ts';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import type { EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { VectorStore } from '../../src/contracts/vector-store.ts';
import { RAG } from '../../src/rag.ts';
import { defaultEmbeddingCacheDirectory, withEmbeddingCache } from './embedding-cache.ts';

export { LOCAL_EMBEDDINGS_HYBRID_WEIGHTS, retrievalDefaultsFor } from '../../src/pipeline/retrieval-defaults.ts';

export interface EmbeddedRagOptions {
  /** Where the file store keeps its data. @default '.axon' */
  directory?: string;
  /** Documents fetched per search query. @default 50 */
  topK?: number;
  /**
   * Where document vectors are cached between runs (a folder, shared by every store that uses it), or `false` for
   * no cache. Query vectors are kept in memory either way (the last 1000). See `CachedEmbeddings`.
   * @default '.axon-cache/embeddings' in the folder that holds `directory`
   */
  embeddingCache?: string | false;
}

/**
 * The embedded default: the offline hashing embedder and the file store, no account, no network, no server.
 * It searches in `hybrid` mode (BM25 and vectors, BM25-led: see `LOCAL_EMBEDDINGS_HYBRID_WEIGHTS`).
 * Document vectors are cached beside the store (`embeddingCache`), so a new store there embeds only new text.
 * Subclass it to keep those and choose your own processors or chat model.
 */
export class EmbeddedRAG extends RAG {
  constructor(private readonly settings: EmbeddedRagOptions = {}) {
    super();
  }

  protected embeddings(): EmbeddingsProvider {
    const directory = this.settings.directory ?? '.axon';
    const cache = this.settings.embeddingCache ?? defaultEmbeddingCacheDirectory(directory);
    return withEmbeddingCache(new LocalHashEmbeddings(), cache === false ? false : { directory: cache }, process.cwd());
  }

  protected vectorStore(): VectorStore {
    return new FileStore({ directory: this.settings.directory ?? '.axon', topK: this.settings.topK ?? 50 });
  }
}
