import type { EmbeddingModelV4, RerankingModelV4 } from '@ai-sdk/provider-v4';
import { MockEmbeddingModelV3, MockRerankingModelV3 } from 'ai/test';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { AISdkEmbeddings } from '../../../providers/ai-sdk/ai-sdk-embeddings.ts';
import { AISdkReranker } from '../../../providers/ai-sdk/ai-sdk-reranker.ts';
import type { Usage } from '../../../src/contracts/usage.ts';
import { describeEmbeddingsConformance } from '../../../testing/embeddings.ts';
import { describeRerankerConformance } from '../../../testing/reranker.ts';
import { rejectionOf } from '../../helpers/provider-test-helpers.ts';
import { fakeEmbedding, fakeRerank, words } from '../../servers/loopback-server.ts';

function embeddingModel(options: { maxEmbeddingsPerCall?: number; usage?: boolean } = {}): MockEmbeddingModelV3 {
  return new MockEmbeddingModelV3({
    provider: 'scripted.embedding',
    maxEmbeddingsPerCall: options.maxEmbeddingsPerCall ?? 5,
    supportsParallelCalls: false,
    doEmbed: async ({ values, abortSignal }) => {
      abortSignal?.throwIfAborted();
      return {
        embeddings: values.map((value) => fakeEmbedding(value, 8)),
        ...(options.usage === false ? {} : { usage: { tokens: values.reduce((sum, value) => sum + words(value).length, 0) } }),
        warnings: [],
      };
    },
  });
}

function rerankingModel(): MockRerankingModelV3 {
  return new MockRerankingModelV3({
    provider: 'scripted.reranking',
    doRerank: async ({ documents, query, topN, abortSignal }) => {
      abortSignal?.throwIfAborted();
      const values = documents.values as string[];
      return { ranking: fakeRerank(query, values, topN).map(({ index, score }) => ({ index, relevanceScore: score })) };
    },
  });
}

describe('AISdkEmbeddings: an AI SDK embedding model as an EmbeddingsProvider', () => {
  describeEmbeddingsConformance(() => new AISdkEmbeddings(embeddingModel()));

  it('takes the batch size and parallelism from the model, and accepts V4 models by type', () => {
    const provider = new AISdkEmbeddings(embeddingModel({ maxEmbeddingsPerCall: 2048 }));
    expect(provider).toMatchObject({ name: 'ai-sdk-scripted-embedding', maxBatchSize: 2048, maxParallelCalls: 1 });
    expectTypeOf<EmbeddingModelV4>().toExtend<ConstructorParameters<typeof AISdkEmbeddings>[0]>();
  });

  it('reports usage.tokens, or unknown without it, and sends the providerOptions of the input type', async () => {
    const model = embeddingModel();
    const usages: Usage[] = [];
    const provider = new AISdkEmbeddings(model, { providerOptions: { query: { google: { taskType: 'RETRIEVAL_QUERY' } } } });
    await provider.embed(['two words'], { inputType: 'query', onUsage: (usage) => usages.push(usage) });
    await provider.embed(['two words'], { inputType: 'document', onUsage: (usage) => usages.push(usage) });
    await new AISdkEmbeddings(embeddingModel({ usage: false })).embed(['a'], { inputType: 'document', onUsage: (usage) => usages.push(usage) });
    expect(usages).toEqual([{ inputTokens: 2 }, { inputTokens: 2 }, 'unknown']);
    expect(model.doEmbedCalls.map((call) => call.providerOptions)).toEqual([{ google: { taskType: 'RETRIEVAL_QUERY' } }, undefined]);
  });

  it('refuses a model that returns the wrong number of vectors', async () => {
    const model = new MockEmbeddingModelV3({ doEmbed: async () => ({ embeddings: [[1, 0]], warnings: [] }) });
    const error = await rejectionOf(new AISdkEmbeddings(model, { maxBatchSize: 5 }).embed(['a', 'b'], { inputType: 'document' }));
    expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID' });
  });
});

describe('AISdkReranker: an AI SDK reranking model as a Reranker', () => {
  describeRerankerConformance(() => new AISdkReranker(rerankingModel(), { maxDocumentsPerCall: 20 }));

  it('sends the documents as text values with topN, reports unknown usage, and accepts V4 models by type', async () => {
    const model = rerankingModel();
    const usages: Usage[] = [];
    const calls: unknown[] = [];
    const doRerank = model.doRerank;
    model.doRerank = async (options) => {
      calls.push({ documents: options.documents, query: options.query, topN: options.topN });
      return doRerank(options);
    };
    await new AISdkReranker(model).rerank('capital', ['Bananas.', 'The capital.'], { topN: 1, onUsage: (usage) => usages.push(usage) });
    expect(calls).toEqual([{ documents: { type: 'text', values: ['Bananas.', 'The capital.'] }, query: 'capital', topN: 1 }]);
    expect(usages).toEqual(['unknown']);
    expectTypeOf<RerankingModelV4>().toExtend<ConstructorParameters<typeof AISdkReranker>[0]>();
  });

  it('refuses a ranking that names a document that was not sent', async () => {
    const model = new MockRerankingModelV3({ doRerank: async () => ({ ranking: [{ index: 5, relevanceScore: 1 }] }) });
    const error = await rejectionOf(new AISdkReranker(model).rerank('q', ['a'], { topN: 1 }));
    expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID' });
    expect(error.message).toContain('ranking[0].index is 5');
  });
});
