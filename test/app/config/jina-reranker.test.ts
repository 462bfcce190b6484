import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { JinaReranker, jinaRerankerOptionsSchema } from '../../../app/config/service-rerankers.ts';
import type { Document } from '../../../src/document.ts';
import { expectNoSecret, recordingContext, rejectionOf, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import { startJinaServer } from '../../servers/jina-server.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  server = await startJinaServer();
});
afterAll(() => server.close());

const documents: Document[] = ['green pears', 'red apples and red cherries', 'apples', 'red wine', 'bananas'].map((content, position) => ({
  id: `chunk-${position}`,
  content,
  sourceType: 'file',
  sourceName: 'fruit.md',
  score: 0.7,
  metadata: {},
}));

describe('JinaReranker', () => {
  it('is named jina-reranker and posts the documented body to {baseURL}/rerank', async () => {
    server.reset();
    const reranker = new JinaReranker({ apiKey: TEST_KEY, baseURL: `${server.url}/v1` });
    expect(reranker.name).toBe('jina-reranker');
    const output = await reranker.process('red apples', documents, recordingContext());
    expect(server.requests[0].path).toBe('/v1/rerank');
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    expect(server.requests[0].body).toEqual({
      model: 'jina-reranker-v2-base-multilingual',
      query: 'red apples',
      documents: documents.map((document) => document.content),
      top_n: 3,
      return_documents: false,
    });
    expect(output.map((document) => [document.id, document.score])).toEqual([
      ['chunk-1', 1],
      ['chunk-2', 0.5],
      ['chunk-3', 0.5],
    ]);
  });

  it('fails the run with a ProviderError naming jina-rerank and the status when the reply is wrong', async () => {
    server.failNext({ kind: 'respond', body: { results: [{ index: 9, relevance_score: 0.5 }] } });
    const error = await rejectionOf(new JinaReranker({ apiKey: TEST_KEY, baseURL: `${server.url}/v1` }).process('q', documents, recordingContext()));
    expect(error).toMatchObject({ name: 'ProviderError', code: 'PROVIDER_RESPONSE_INVALID', status: 200, provider: 'jina-rerank' });
  });

  it('fails at construction without a key, naming itself and the variable', () => {
    vi.stubEnv('JINA_API_KEY', '');
    try {
      expect(() => new JinaReranker()).toThrow('[axon] [jina-reranker] Missing API key. Pass apiKey or set JINA_API_KEY.');
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('never shows its key, and exports its schema', () => {
    expectNoSecret(new JinaReranker({ apiKey: TEST_KEY }));
    expect(jinaRerankerOptionsSchema.parse({})).toMatchObject({
      topN: 3,
      onError: 'fail',
      model: 'jina-reranker-v2-base-multilingual',
      baseURL: 'https://api.jina.ai/v1',
    });
  });
});
