import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CohereEmbeddings } from '../../../providers/cohere/cohere-embeddings.ts';
import { embedAll } from '../../../src/runtime/embed.ts';
import { describeEmbeddingsConformance } from '../../../testing/embeddings.ts';
import { describeTransportBehaviour } from '../../conformance/transport.ts';
import { rejectionOf, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import { startCohereServer } from '../../servers/cohere-server.ts';
import { fakeEmbedding, type LoopbackServer } from '../../servers/loopback-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  server = await startCohereServer({ dimensions: 8 });
});
afterAll(() => server.close());

describe('CohereEmbeddings against a loopback Cohere server', () => {
  describeEmbeddingsConformance(() => new CohereEmbeddings({ apiKey: TEST_KEY, baseURL: server.url, model: 'embed-test', maxBatchSize: 5 }));

  describeTransportBehaviour({
    server: () => server,
    path: '/v2/embed',
    create: (transport) => new CohereEmbeddings({ apiKey: TEST_KEY, baseURL: server.url, model: 'embed-test', ...transport }),
    call: (provider, signal) => (provider as CohereEmbeddings).embed(['hello world'], { inputType: 'document', signal }),
  });

  it('embeds documents with search_document and queries with search_query', async () => {
    server.reset();
    const provider = new CohereEmbeddings({ apiKey: TEST_KEY, baseURL: server.url, model: 'embed-v4.0', dimensions: 256 });
    await provider.embed(['a stored passage'], { inputType: 'document' });
    await provider.embed(['a question'], { inputType: 'query' });
    expect(server.requests.map((request) => request.body)).toEqual([
      { model: 'embed-v4.0', texts: ['a stored passage'], input_type: 'search_document', embedding_types: ['float'], output_dimension: 256 },
      { model: 'embed-v4.0', texts: ['a question'], input_type: 'search_query', embedding_types: ['float'], output_dimension: 256 },
    ]);
    expect(provider.dimensions).toBe(256);
  });

  it('returns embeddings.float in input order', async () => {
    const provider = new CohereEmbeddings({ apiKey: TEST_KEY, baseURL: server.url, model: 'embed-test' });
    expect(await provider.embed(['north', 'south'], { inputType: 'document' })).toEqual([fakeEmbedding('north', 8), fakeEmbedding('south', 8)]);
  });

  it('never sends more than 96 texts per request', async () => {
    server.reset();
    const provider = new CohereEmbeddings({ apiKey: TEST_KEY, baseURL: server.url, model: 'embed-test' });
    expect(provider.maxBatchSize).toBe(96);
    const texts = Array.from({ length: 200 }, (_, index) => `passage ${index}`);
    await embedAll(provider, texts, { inputType: 'document' });
    expect(server.requests.map((request) => (request.body as { texts: string[] }).texts.length).sort((left, right) => right - left)).toEqual([96, 96, 8]);
    expect(() => new CohereEmbeddings({ apiKey: TEST_KEY, maxBatchSize: 97 })).toThrow(/maxBatchSize/);
  });

  it.each([
    ['too few vectors', { embeddings: { float: [[1, 0]] } }, 'asked for 2 embeddings, received 1'],
    ['no float embeddings', { embeddings: {} }, 'embeddings.float is missing, expected an array'],
    [
      'a NaN component',
      {
        embeddings: {
          float: [
            [1, 0],
            [0, null],
          ],
        },
      },
      'embedding 1[1] is null',
    ],
  ])('refuses a reply with %s', async (_label, body, problem) => {
    server.reset();
    server.failNext({ kind: 'respond', body });
    const error = await rejectionOf(
      new CohereEmbeddings({ apiKey: TEST_KEY, baseURL: server.url, model: 'embed-test' }).embed(['a', 'b'], { inputType: 'document' }),
    );
    expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID', status: 200 });
    expect(error.message).toContain('[axon] [cohere-embeddings] Invalid response from the service: ');
    expect(error.message).toContain(problem);
  });

  it('needs a key and says how to give one', () => {
    vi.stubEnv('COHERE_API_KEY', '');
    try {
      expect(() => new CohereEmbeddings()).toThrow('[axon] [cohere-embeddings] Missing API key. Pass apiKey or set COHERE_API_KEY.');
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
