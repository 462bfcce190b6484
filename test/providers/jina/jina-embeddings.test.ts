import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { JinaEmbeddings } from '../../../providers/jina/jina-embeddings.ts';
import { describeEmbeddingsConformance } from '../../../testing/embeddings.ts';
import { describeTransportBehaviour } from '../../conformance/transport.ts';
import { rejectionOf, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import { startJinaServer } from '../../servers/jina-server.ts';
import { fakeEmbedding, type LoopbackServer } from '../../servers/loopback-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  server = await startJinaServer({ dimensions: 8 });
});
afterAll(() => server.close());

const baseURL = () => `${server.url}/v1`;

describe('JinaEmbeddings against a loopback Jina server', () => {
  describeEmbeddingsConformance(() => new JinaEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'jina-test', maxBatchSize: 5 }));

  describeTransportBehaviour({
    server: () => server,
    path: '/v1/embeddings',
    create: (transport) => new JinaEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'jina-test', ...transport }),
    call: (provider, signal) => (provider as JinaEmbeddings).embed(['hello world'], { inputType: 'document', signal }),
  });

  it('sends retrieval.passage for documents and retrieval.query for queries, with dimensions', async () => {
    server.reset();
    const provider = new JinaEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), dimensions: 4 });
    const [document] = await provider.embed(['a stored passage'], { inputType: 'document' });
    await provider.embed(['a question'], { inputType: 'query' });
    expect(server.requests.map((request) => request.body)).toEqual([
      { model: 'jina-embeddings-v3', input: ['a stored passage'], embedding_type: 'float', task: 'retrieval.passage', dimensions: 4 },
      { model: 'jina-embeddings-v3', input: ['a question'], embedding_type: 'float', task: 'retrieval.query', dimensions: 4 },
    ]);
    expect(document).toEqual(fakeEmbedding('a stored passage', 4));
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${TEST_KEY}`);
  });

  it('leaves task out for models without task adapters', async () => {
    server.reset();
    await new JinaEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'jina-embeddings-v2-small-en', queryTask: null, documentTask: null }).embed(['x'], {
      inputType: 'query',
    });
    expect(server.requests[0].body).toEqual({ model: 'jina-embeddings-v2-small-en', input: ['x'], embedding_type: 'float' });
  });

  it("shows Jina's own explanation of a rejected request", async () => {
    server.failNext({ kind: 'respond', status: 422, body: { detail: 'Model jina-nope not found' } });
    const error = await rejectionOf(new JinaEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL() }).embed(['x'], { inputType: 'query' }));
    expect(error.message).toBe(
      '[axon] [jina-embeddings] The service rejected the request: Model jina-nope not found (HTTP 422) Check the model name and the options sent.',
    );
  });

  it('refuses a reply whose indices do not cover the input', async () => {
    server.failNext({
      kind: 'respond',
      body: {
        data: [
          { index: 1, embedding: [1] },
          { index: 1, embedding: [1] },
        ],
      },
    });
    const error = await rejectionOf(new JinaEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'x' }).embed(['a', 'b'], { inputType: 'query' }));
    expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID', status: 200 });
    expect(error.message).toContain('data[1].index 1 appears more than once');
  });

  it('needs a key and says how to give one', () => {
    vi.stubEnv('JINA_API_KEY', '');
    try {
      expect(() => new JinaEmbeddings()).toThrow('[axon] [jina-embeddings] Missing API key. Pass apiKey or set JINA_API_KEY.');
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
