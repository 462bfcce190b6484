import { FileStore } from '../../stores/file-store/file-store.ts';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import type { EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { VectorStore } from '../../src/contracts/vector-store.ts';
import { RAG } from '../../src/rag.ts';

export { LOCAL_EMBEDDINGS_HYBRID_WEIGHTS, retrievalDefaultsFor } from '../../src/pipeline/retrieval-defaults.ts';

export interface EmbeddedRagOptions {
  /** Where the file store keeps its data. @default '.axon' */
  directory?: string;
  /** Documents fetched per search query. @default 50 */
  topK?: number;
}

/**
 * The embedded default: the offline hashing embedder and the file store, no account, no network, no server.
 * It searches in `hybrid` mode (BM25 and vectors, BM25-led: see `LOCAL_EMBEDDINGS_HYBRID_WEIGHTS`).
 * Subclass it to keep those and choose your own processors or chat model.
 */
export class EmbeddedRAG extends RAG {
  constructor(private readonly settings: EmbeddedRagOptions = {}) {
    super();
  }

  protected embeddings(): EmbeddingsProvider {
    return new LocalHashEmbeddings();
  }

  protected vectorStore(): VectorStore {
    return new FileStore({ directory: this.settings.directory ?? '.axon', topK: this.settings.topK ?? 50 });
  }
}
