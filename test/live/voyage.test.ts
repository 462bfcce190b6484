import { describe } from 'vitest';
import { VoyageEmbeddings } from '../../providers/voyage/voyage-embeddings.ts';
import { VoyageRerankModel } from '../../providers/voyage/voyage-rerank.ts';
import { describeEmbeddingsConformance } from '../../testing/embeddings.ts';
import { describeRerankerConformance } from '../../testing/reranker.ts';

// Runs against the real Voyage API only when VOYAGE_API_KEY is set; reported as skipped otherwise.
describe.skipIf(!process.env.VOYAGE_API_KEY)('live: Voyage', () => {
  describe('VoyageEmbeddings', () => {
    describeEmbeddingsConformance(() => new VoyageEmbeddings({ maxBatchSize: 8 }), { live: true });
  });
  describe('VoyageRerankModel', () => {
    describeRerankerConformance(() => new VoyageRerankModel({ maxDocumentsPerCall: 20 }));
  });
});
