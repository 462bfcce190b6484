import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CohereRerankModel } from '../../../providers/cohere/cohere-rerank.ts';
import { describeRerankerConformance } from '../../../testing/reranker.ts';
import { describeTransportBehaviour } from '../../conformance/transport.ts';
import { rejectionOf, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import { startCohereServer } from '../../servers/cohere-server.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  server = await startCohereServer();
});
afterAll(() => server.close());

const create = () => new CohereRerankModel({ apiKey: TEST_KEY, baseURL: server.url, maxDocumentsPerCall: 10 });

describe('CohereRerankModel against a loopback Cohere server', () => {
  describeRerankerConformance(create);

  describeTransportBehaviour({
    server: () => server,
    path: '/v2/rerank',
    create: (transport) => new CohereRerankModel({ apiKey: TEST_KEY, baseURL: server.url, ...transport }),
    call: (provider, signal) => (provider as CohereRerankModel).rerank('capital', ['Paris is the capital.'], { topN: 1, signal }),
  });

  it('sends model, query, documents and top_n exactly, and maps relevance scores by index', async () => {
    server.reset();
    const results = await create().rerank('red apples', ['green pears', 'red apples and red cherries', 'apples'], { topN: 2 });
    expect(server.requests[0].body).toEqual({
      model: 'rerank-v3.5',
      query: 'red apples',
      documents: ['green pears', 'red apples and red cherries', 'apples'],
      top_n: 2,
    });
    expect(results).toEqual([
      { index: 1, relevanceScore: 1 },
      { index: 2, relevanceScore: 0.5 },
    ]);
  });

  it('clamps top_n to the number of documents and sends max_tokens_per_doc when set', async () => {
    server.reset();
    await new CohereRerankModel({ apiKey: TEST_KEY, baseURL: server.url, maxTokensPerDocument: 512, model: 'rerank-english-v3.0' }).rerank('q', ['a', 'b'], {
      topN: 10,
    });
    expect(server.requests[0].body).toEqual({ model: 'rerank-english-v3.0', query: 'q', documents: ['a', 'b'], top_n: 2, max_tokens_per_doc: 512 });
  });

  it('sorts results best first even when the service does not', async () => {
    server.failNext({
      kind: 'respond',
      body: {
        results: [
          { index: 0, relevance_score: 0.1 },
          { index: 1, relevance_score: 0.9 },
        ],
      },
    });
    expect(await create().rerank('q', ['a', 'b'], { topN: 2 })).toEqual([
      { index: 1, relevanceScore: 0.9 },
      { index: 0, relevanceScore: 0.1 },
    ]);
  });

  it.each([
    ['an index out of range', [{ index: 3, relevance_score: 0.5 }], 'results[0].index is 3, outside 0..1 (2 documents were sent)'],
    [
      'a duplicate index',
      [
        { index: 1, relevance_score: 0.5 },
        { index: 1, relevance_score: 0.4 },
      ],
      'results[1].index 1 appears more than once',
    ],
    ['a missing score', [{ index: 0 }], 'results[0].relevance_score is missing'],
    ['a non-finite score', [{ index: 0, relevance_score: 'NaN' }], 'results[0].relevance_score is the string "NaN"'],
    ['a fractional index', [{ index: 0.5, relevance_score: 0.5 }], 'results[0].index is 0.5, expected an integer'],
    ['no results list', undefined, 'results is missing, expected an array'],
  ])('refuses a reply with %s: PROVIDER_RESPONSE_INVALID naming the provider and status', async (_label, results, problem) => {
    server.failNext({ kind: 'respond', body: { id: 'x', results } });
    const error = await rejectionOf(create().rerank('q', ['a', 'b'], { topN: 2 }));
    expect(error).toMatchObject({ name: 'ProviderError', code: 'PROVIDER_RESPONSE_INVALID', status: 200 });
    expect(error.message).toContain('[axon] [cohere-rerank] Invalid response from the service: ');
    expect(error.message).toContain(problem);
    expect(error.message).toContain('(HTTP 200)');
  });
});
