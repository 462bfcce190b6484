import { describe } from 'vitest';
import { LocalAIRerankModel } from '../../providers/localai/localai-rerank.ts';
import { describeRerankerConformance } from '../../testing/reranker.ts';

// Runs against a real LocalAI server only when LOCALAI_HOST is set (e.g. http://localhost:8080); reported as
// skipped otherwise. LOCALAI_RERANK_MODEL names the rerank model configured there (default cross-encoder).
describe.skipIf(!process.env.LOCALAI_HOST)('live: LocalAI', () => {
  describe('LocalAIRerankModel', () => {
    describeRerankerConformance(
      () => new LocalAIRerankModel({ host: process.env.LOCALAI_HOST, model: process.env.LOCALAI_RERANK_MODEL ?? 'cross-encoder', maxDocumentsPerCall: 20 }),
    );
  });
});
