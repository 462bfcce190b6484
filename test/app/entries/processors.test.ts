import { describe, expect, it } from 'vitest';
import * as processorsEntry from '../../../app/entries/processors.ts';
import * as processorsFamily from '../../../processors/index.ts';
import { TEST_KEY } from '../../helpers/provider-test-helpers.ts';

describe('the axon-rag/processors entry', () => {
  it('publishes every processor of the family and the three service rerankers, under their names of before', () => {
    for (const name of Object.keys(processorsFamily)) expect(processorsEntry).toHaveProperty(name);
    for (const name of [
      'JinaReranker',
      'CohereReranker',
      'LocalAIReranker',
      'jinaRerankerOptionsSchema',
      'cohereRerankerOptionsSchema',
      'localAIRerankerOptionsSchema',
    ]) {
      expect(processorsEntry).toHaveProperty(name);
      // The family itself knows no provider: the service rerankers are composed above it.
      expect(processorsFamily).not.toHaveProperty(name);
    }
  });

  it('each service reranker is the reranker post-processor with its provider’s relevance model', () => {
    const { CohereReranker, JinaReranker, LocalAIReranker, RerankerPostProcessor } = processorsEntry;
    const rerankers = [new CohereReranker({ apiKey: TEST_KEY }), new JinaReranker({ apiKey: TEST_KEY }), new LocalAIReranker({ host: 'http://127.0.0.1:9' })];
    expect(rerankers.map((reranker) => [reranker instanceof RerankerPostProcessor, reranker.name, reranker.reranker.name])).toEqual([
      [true, 'cohere-reranker', 'cohere-rerank'],
      [true, 'jina-reranker', 'jina-rerank'],
      [true, 'localai-reranker', 'localai-rerank'],
    ]);
  });
});
