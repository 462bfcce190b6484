// The pipeline of bench/serve-throughput.ts, built once in the main thread and once in each worker of serve's pool
// (the built package): the offline hashing embedder at the store's dimensions, the store in the folder given,
// hybrid search, the extractive answer (no chat model).
import { LocalHashEmbeddings } from '../dist/providers/index.js';
import { RAG } from '../dist/src/index.js';
import { FileStore } from '../dist/stores/index.js';

class ThroughputRAG extends RAG {
  constructor(settings) {
    super();
    this.settings = settings;
  }
  embeddings() {
    return new LocalHashEmbeddings({ dimensions: this.settings.dimensions });
  }
  vectorStore() {
    return new FileStore({ directory: this.settings.directory, ann: false, topK: 50 });
  }
  searchMode() {
    return 'hybrid';
  }
}

export default function createThroughputPipeline(settings) {
  return new ThroughputRAG(settings);
}
