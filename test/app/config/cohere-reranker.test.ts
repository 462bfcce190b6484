import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CohereReranker, cohereRerankerOptionsSchema } from '../../../app/config/service-rerankers.ts';
import type { Document } from '../../../src/document.ts';
import { expectNoSecret, recordingContext, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import { startCohereServer } from '../../servers/cohere-server.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  server = await startCohereServer();
});
afterAll(() => server.close());

const documents: Document[] = [
  'Bananas are a yellow fruit.',
  'Paris is the capital of France.',
  'France borders Spain.',
  'The capital of Spain is Madrid.',
  'Capital gains are taxed.',
].map((content, position) => ({ id: `chunk-${position}`, content, sourceType: 'file', sourceName: 'facts.md', score: 0.8, metadata: {} }));

describe('CohereReranker', () => {
  it('is named cohere-reranker and reranks through Cohere v2 rerank with topN 3 by default', async () => {
    server.reset();
    const reranker = new CohereReranker({ apiKey: TEST_KEY, baseURL: server.url });
    expect(reranker.name).toBe('cohere-reranker');
    expect(reranker.reranker.name).toBe('cohere-rerank');
    const context = recordingContext();
    const output = await reranker.process('What is the capital of France?', documents, context);
    expect(server.requests[0].body).toEqual({
      model: 'rerank-v3.5',
      query: 'What is the capital of France?',
      documents: documents.map((document) => document.content),
      top_n: 3,
    });
    expect(output.map((document) => [document.id, document.score])).toEqual([
      ['chunk-1', 5 / 6],
      ['chunk-3', 4 / 6],
      ['chunk-2', 1 / 6],
    ]);
    expect(context.drops.map((drop) => drop.id)).toEqual(['chunk-0', 'chunk-4']);
  });

  it('batches by maxDocumentsPerCall', async () => {
    server.reset();
    const output = await new CohereReranker({ apiKey: TEST_KEY, baseURL: server.url, maxDocumentsPerCall: 2, topN: 2 }).process(
      'What is the capital of France?',
      documents,
      recordingContext(),
    );
    expect(server.requests.map((request) => (request.body as { documents: string[] }).documents.length).sort()).toEqual([1, 2, 2]);
    expect(output.map((document) => document.id)).toEqual(['chunk-1', 'chunk-3']);
  });

  it('keeps the incoming order with a warning when Cohere fails and onError is keep-order', async () => {
    server.reset();
    server.failNext({ kind: 'server-error' });
    const context = recordingContext();
    const output = await new CohereReranker({ apiKey: TEST_KEY, baseURL: server.url, onError: 'keep-order', maxRetries: 0, topN: 2 }).process(
      'q',
      documents,
      context,
    );
    expect(output.map((document) => document.id)).toEqual(['chunk-0', 'chunk-1']);
    expect(context.warnings[0]).toMatch(/^cohere-rerank failed, so the incoming order was kept \(top 2\): \[axon\] \[cohere-rerank\] The service failed/);
  });

  it('fails at construction without a key, naming itself and the variable', () => {
    vi.stubEnv('COHERE_API_KEY', '');
    try {
      expect(() => new CohereReranker()).toThrow('[axon] [cohere-reranker] Missing API key. Pass apiKey or set COHERE_API_KEY.');
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('never shows its key', () => {
    const reranker = new CohereReranker({ apiKey: TEST_KEY, topN: 5 });
    expectNoSecret(reranker);
    expect(JSON.parse(JSON.stringify(reranker))).toEqual({
      name: 'cohere-reranker',
      reranker: { name: 'cohere-rerank', genAiProvider: 'cohere', model: 'rerank-v3.5', maxDocumentsPerCall: 1000 },
      topN: 5,
      onError: 'fail',
      maxParallelCalls: 2,
    });
  });

  it('exports a schema that accepts a config-file shape', () => {
    expect(cohereRerankerOptionsSchema.parse({ topN: 5, apiKey: { env: 'COHERE_API_KEY' } })).toMatchObject({ topN: 5, model: 'rerank-v3.5', onError: 'fail' });
    expect(cohereRerankerOptionsSchema.safeParse({ topN: 5, unknownOption: true }).success).toBe(false);
  });
});
