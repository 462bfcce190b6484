import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GeminiEmbeddings } from '../../../providers/gemini/gemini-embeddings.ts';
import type { Usage } from '../../../src/contracts/usage.ts';
import { embedAll } from '../../../src/runtime/embed.ts';
import { describeEmbeddingsConformance } from '../../../testing/embeddings.ts';
import { describeTransportBehaviour } from '../../conformance/transport.ts';
import { rejectionOf, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import { startGeminiServer } from '../../servers/gemini-server.ts';
import { fakeEmbedding, type LoopbackServer } from '../../servers/loopback-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  server = await startGeminiServer({ dimensions: 8 });
});
afterAll(() => server.close());

const baseURL = () => `${server.url}/v1beta`;

describe('GeminiEmbeddings against a loopback Gemini API', () => {
  describeEmbeddingsConformance(() => new GeminiEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'embed-test', maxBatchSize: 5 }));

  describeTransportBehaviour({
    server: () => server,
    path: '/v1beta/models/embed-test:batchEmbedContents',
    create: (transport) => new GeminiEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'embed-test', ...transport }),
    call: (provider, signal) => (provider as GeminiEmbeddings).embed(['hello world'], { inputType: 'document', signal }),
    keyHeader: { name: 'x-goog-api-key', value: TEST_KEY },
  });

  it('sends one request per text with taskType RETRIEVAL_DOCUMENT or RETRIEVAL_QUERY and outputDimensionality', async () => {
    server.reset();
    const provider = new GeminiEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), dimensions: 16 });
    await provider.embed(['a stored passage', 'another'], { inputType: 'document' });
    await provider.embed(['a question'], { inputType: 'query' });
    expect(server.requests.map((request) => request.path)).toEqual([
      '/v1beta/models/gemini-embedding-001:batchEmbedContents',
      '/v1beta/models/gemini-embedding-001:batchEmbedContents',
    ]);
    const request = (text: string, taskType: string) => ({
      model: 'models/gemini-embedding-001',
      content: { parts: [{ text }] },
      taskType,
      outputDimensionality: 16,
    });
    expect(server.requests.map((recorded) => recorded.body)).toEqual([
      { requests: [request('a stored passage', 'RETRIEVAL_DOCUMENT'), request('another', 'RETRIEVAL_DOCUMENT')] },
      { requests: [request('a question', 'RETRIEVAL_QUERY')] },
    ]);
    expect(provider.dimensions).toBe(16);
  });

  it('returns embeddings[].values in input order and reports usage unknown (the endpoint has none)', async () => {
    const provider = new GeminiEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'embed-test' });
    const usages: Usage[] = [];
    expect(await provider.embed(['north', 'south'], { inputType: 'document', onUsage: (usage) => usages.push(usage) })).toEqual([
      fakeEmbedding('north', 8),
      fakeEmbedding('south', 8),
    ]);
    expect(usages).toEqual(['unknown']);
  });

  it('never sends more than the API batch limit of 100 texts', async () => {
    server.reset();
    const provider = new GeminiEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'embed-test' });
    expect(provider.maxBatchSize).toBe(100);
    await embedAll(
      provider,
      Array.from({ length: 230 }, (_, index) => `passage ${index}`),
      { inputType: 'document' },
    );
    expect(server.requests.map((request) => (request.body as { requests: unknown[] }).requests.length).sort((left, right) => right - left)).toEqual([
      100, 100, 30,
    ]);
    expect(() => new GeminiEmbeddings({ apiKey: TEST_KEY, maxBatchSize: 101 })).toThrow(/maxBatchSize/);
  });

  it.each([
    ['too few vectors', { embeddings: [{ values: [1, 0] }] }, 'asked for 2 embeddings, received 1'],
    ['no embeddings', {}, 'embeddings is missing'],
    ['a null component', { embeddings: [{ values: [1, 0] }, { values: [0, null] }] }, 'embedding 1[1] is null'],
  ])('refuses a reply with %s', async (_label, body, problem) => {
    server.failNext({ kind: 'respond', body });
    const error = await rejectionOf(
      new GeminiEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'embed-test' }).embed(['a', 'b'], { inputType: 'document' }),
    );
    expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID', status: 200 });
    expect(error.message).toContain(problem);
  });
});
