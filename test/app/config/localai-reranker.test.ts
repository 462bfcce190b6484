import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalAIReranker, localAIRerankerOptionsSchema } from '../../../app/config/service-rerankers.ts';
import type { Document } from '../../../src/document.ts';
import { recordingContext } from '../../helpers/provider-test-helpers.ts';
import { startLocalAIServer } from '../../servers/localai-server.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  server = await startLocalAIServer();
});
afterAll(() => server.close());

const documents: Document[] = ['green pears', 'red apples and red cherries', 'apples', 'bananas'].map((content, position) => ({
  id: `chunk-${position}`,
  content,
  sourceType: 'file',
  sourceName: 'fruit.md',
  score: 0.7,
  metadata: {},
}));

describe('LocalAIReranker', () => {
  it('is named localai-reranker and posts to {host}/v1/rerank with the model cross-encoder', async () => {
    server.reset();
    const reranker = new LocalAIReranker({ host: server.url, topN: 2 });
    expect(reranker.name).toBe('localai-reranker');
    const context = recordingContext();
    const output = await reranker.process('red apples', documents, context);
    expect(server.requests[0].path).toBe('/v1/rerank');
    expect(server.requests[0].body).toEqual({
      model: 'cross-encoder',
      query: 'red apples',
      documents: documents.map((document) => document.content),
      top_n: 2,
      return_documents: false,
    });
    expect(output.map((document) => [document.id, document.score])).toEqual([
      ['chunk-1', 1],
      ['chunk-2', 0.5],
    ]);
    expect(context.drops).toEqual([
      { id: 'chunk-0', reason: 'below top 2 after reranking' },
      { id: 'chunk-3', reason: 'below top 2 after reranking' },
    ]);
  });

  it('exports its schema with the documented defaults', () => {
    expect(localAIRerankerOptionsSchema.parse({})).toMatchObject({ model: 'cross-encoder', topN: 3, onError: 'fail', maxDocumentsPerCall: 256 });
  });
});
