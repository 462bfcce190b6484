import { describe } from 'vitest';
import { JinaEmbeddings } from '../../providers/jina/jina-embeddings.ts';
import { JinaRerankModel } from '../../providers/jina/jina-rerank.ts';
import { describeEmbeddingsConformance } from '../../testing/embeddings.ts';
import { describeRerankerConformance } from '../../testing/reranker.ts';

// Runs against the real Jina API only when JINA_API_KEY is set; reported as skipped otherwise.
describe.skipIf(!process.env.JINA_API_KEY)('live: Jina', () => {
  describe('JinaEmbeddings', () => {
    describeEmbeddingsConformance(() => new JinaEmbeddings({ maxBatchSize: 8 }), { live: true });
  });
  describe('JinaRerankModel', () => {
    describeRerankerConformance(() => new JinaRerankModel({ maxDocumentsPerCall: 20 }));
  });
});
