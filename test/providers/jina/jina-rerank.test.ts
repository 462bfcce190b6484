import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JinaRerankModel } from '../../../providers/jina/jina-rerank.ts';
import { describeRerankerConformance } from '../../../testing/reranker.ts';
import { describeTransportBehaviour } from '../../conformance/transport.ts';
import { rejectionOf, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import { startJinaServer } from '../../servers/jina-server.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  server = await startJinaServer();
});
afterAll(() => server.close());

const baseURL = () => `${server.url}/v1`;
const create = () => new JinaRerankModel({ apiKey: TEST_KEY, baseURL: baseURL(), maxDocumentsPerCall: 10 });

describe('JinaRerankModel against a loopback Jina server', () => {
  describeRerankerConformance(create);

  describeTransportBehaviour({
    server: () => server,
    path: '/v1/rerank',
    create: (transport) => new JinaRerankModel({ apiKey: TEST_KEY, baseURL: baseURL(), ...transport }),
    call: (provider, signal) => (provider as JinaRerankModel).rerank('capital', ['Paris is the capital.'], { topN: 1, signal }),
  });

  it('posts {model, query, documents, top_n, return_documents: false} to {baseURL}/rerank', async () => {
    server.reset();
    const results = await create().rerank('red apples', ['green pears', 'red apples and red cherries', 'apples'], { topN: 2 });
    expect(server.requests[0].path).toBe('/v1/rerank');
    expect(server.requests[0].body).toEqual({
      model: 'jina-reranker-v2-base-multilingual',
      query: 'red apples',
      documents: ['green pears', 'red apples and red cherries', 'apples'],
      top_n: 2,
      return_documents: false,
    });
    expect(results).toEqual([
      { index: 1, relevanceScore: 1 },
      { index: 2, relevanceScore: 0.5 },
    ]);
  });

  it.each([
    ['an index out of range', [{ index: -1, relevance_score: 0.5 }], 'results[0].index is -1, outside 0..1'],
    [
      'a duplicate index',
      [
        { index: 0, relevance_score: 0.5 },
        { index: 0, relevance_score: 0.5 },
      ],
      'results[1].index 0 appears more than once',
    ],
    ['a missing score', [{ index: 0, score: 0.5 }], 'results[0].relevance_score is missing'],
    ['an item that is not an object', [7], 'results[0] is 7, expected an object'],
    ['results that are not a list', { 0: { index: 0 } }, 'results is an object, expected an array'],
  ])('refuses a reply with %s', async (_label, results, problem) => {
    server.failNext({ kind: 'respond', body: { model: 'm', results } });
    const error = await rejectionOf(create().rerank('q', ['a', 'b'], { topN: 2 }));
    expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID', status: 200 });
    expect(error.message).toContain('[axon] [jina-rerank] Invalid response from the service: ');
    expect(error.message).toContain(problem);
  });
});
