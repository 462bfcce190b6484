import { describe } from 'vitest';
import { CohereChat } from '../../providers/cohere/cohere-chat.ts';
import { CohereEmbeddings } from '../../providers/cohere/cohere-embeddings.ts';
import { CohereRerankModel } from '../../providers/cohere/cohere-rerank.ts';
import { describeChatConformance } from '../../testing/chat.ts';
import { describeEmbeddingsConformance } from '../../testing/embeddings.ts';
import { describeRerankerConformance } from '../../testing/reranker.ts';

// Runs against the real Cohere API only when COHERE_API_KEY is set; reported as skipped otherwise.
describe.skipIf(!process.env.COHERE_API_KEY)('live: Cohere', () => {
  describe('CohereEmbeddings', () => {
    describeEmbeddingsConformance(() => new CohereEmbeddings({ maxBatchSize: 8 }), { live: true });
  });
  describe('CohereRerankModel', () => {
    describeRerankerConformance(() => new CohereRerankModel({ maxDocumentsPerCall: 20 }));
  });
  describe('CohereChat', () => {
    describeChatConformance(() => new CohereChat({ temperature: 0 }), { live: true });
  });
});
