import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VoyageRerankModel } from '../../../providers/voyage/voyage-rerank.ts';
import type { Usage } from '../../../src/contracts/usage.ts';
import { describeRerankerConformance } from '../../../testing/reranker.ts';
import { describeTransportBehaviour } from '../../conformance/transport.ts';
import { rejectionOf, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';
import { startVoyageServer } from '../../servers/voyage-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  server = await startVoyageServer();
});
afterAll(() => server.close());

const baseURL = () => `${server.url}/v1`;

describe('VoyageRerankModel against a loopback Voyage API', () => {
  describeRerankerConformance(() => new VoyageRerankModel({ apiKey: TEST_KEY, baseURL: baseURL(), maxDocumentsPerCall: 20 }));

  describeTransportBehaviour({
    server: () => server,
    path: '/v1/rerank',
    create: (transport) => new VoyageRerankModel({ apiKey: TEST_KEY, baseURL: baseURL(), ...transport }),
    call: (provider, signal) => (provider as VoyageRerankModel).rerank('capital', ['Paris is the capital.'], { topN: 1, signal }),
  });

  it('sends query, documents, model, top_k and return_documents false; reports usage.total_tokens', async () => {
    server.reset();
    const usages: Usage[] = [];
    const results = await new VoyageRerankModel({ apiKey: TEST_KEY, baseURL: baseURL() }).rerank('capital city', ['Bananas.', 'The capital city is Paris.'], {
      topN: 5,
      onUsage: (usage) => usages.push(usage),
    });
    expect(results[0].index).toBe(1);
    expect(server.requests[0].body).toEqual({
      query: 'capital city',
      documents: ['Bananas.', 'The capital city is Paris.'],
      model: 'rerank-2.5',
      top_k: 2,
      return_documents: false,
      truncation: true,
    });
    // Words: the query (2) once per document, plus the documents (1 and 5).
    expect(usages).toEqual([{ inputTokens: 10 }]);
  });

  it('refuses a reply whose data names a document that was not sent', async () => {
    server.failNext({ kind: 'respond', body: { data: [{ index: 7, relevance_score: 0.9 }] } });
    const error = await rejectionOf(new VoyageRerankModel({ apiKey: TEST_KEY, baseURL: baseURL() }).rerank('q', ['a', 'b'], { topN: 1 }));
    expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID' });
    expect(error.message).toContain('data[0].index is 7');
  });
});
