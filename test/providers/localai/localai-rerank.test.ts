import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LocalAIRerankModel } from '../../../providers/localai/localai-rerank.ts';
import { describeRerankerConformance } from '../../../testing/reranker.ts';
import { describeTransportBehaviour } from '../../conformance/transport.ts';
import { rejectionOf, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import { startLocalAIServer } from '../../servers/localai-server.ts';
import { LoopbackServer } from '../../servers/loopback-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  server = await startLocalAIServer();
});
afterAll(() => server.close());

const create = () => new LocalAIRerankModel({ host: server.url, maxDocumentsPerCall: 10 });

describe('LocalAIRerankModel against a loopback LocalAI server', () => {
  describeRerankerConformance(create);

  describeTransportBehaviour({
    server: () => server,
    path: '/v1/rerank',
    create: (transport) => new LocalAIRerankModel({ host: server.url, apiKey: TEST_KEY, ...transport }),
    call: (provider, signal) => (provider as LocalAIRerankModel).rerank('capital', ['Paris is the capital.'], { topN: 1, signal }),
  });

  it('posts the Jina-compatible body to {host}/v1/rerank with the default model cross-encoder, without a key', async () => {
    server.reset();
    vi.stubEnv('LOCALAI_API_KEY', '');
    try {
      const results = await new LocalAIRerankModel({ host: `${server.url}/` }).rerank('red apples', ['green pears', 'red apples and red cherries', 'apples'], {
        topN: 3,
      });
      expect(server.requests[0].path).toBe('/v1/rerank');
      expect(server.requests[0].headers.authorization).toBeUndefined();
      expect(server.requests[0].body).toEqual({
        model: 'cross-encoder',
        query: 'red apples',
        documents: ['green pears', 'red apples and red cherries', 'apples'],
        top_n: 3,
        return_documents: false,
      });
      expect(results).toEqual([
        { index: 1, relevanceScore: 1 },
        { index: 2, relevanceScore: 0.5 },
        { index: 0, relevanceScore: 0 },
      ]);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('defaults the host to LOCALAI_HOST, then http://localhost:8080', () => {
    vi.stubEnv('LOCALAI_HOST', 'http://gpu-box:9090');
    try {
      expect(new LocalAIRerankModel().host).toBe('http://gpu-box:9090');
    } finally {
      vi.unstubAllEnvs();
    }
    vi.stubEnv('LOCALAI_HOST', '');
    try {
      expect(new LocalAIRerankModel().host).toBe('http://localhost:8080');
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('reports a server that is not running as a network error naming the host', async () => {
    const closed = await LoopbackServer.start({ routes: {}, errorBody: () => ({}) });
    const host = closed.url;
    await closed.close();
    const error = await rejectionOf(new LocalAIRerankModel({ host, maxRetries: 0 }).rerank('q', ['a'], { topN: 1 }));
    expect(error).toMatchObject({ code: 'PROVIDER_UNREACHABLE' });
    expect(error.message).toContain(`[axon] [localai-rerank] Could not reach the service at ${host}/v1/rerank (ECONNREFUSED).`);
  });

  it('refuses a reply with a non-finite score', async () => {
    server.failNext({ kind: 'respond', body: { results: [{ index: 0, relevance_score: null, document: { text: 'a' } }] } });
    const error = await rejectionOf(create().rerank('q', ['a'], { topN: 1 }));
    expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID', status: 200 });
    expect(error.message).toContain('results[0].relevance_score is missing');
  });
});
