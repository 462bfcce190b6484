import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OpenAIEmbeddings } from '../../../providers/openai/openai-embeddings.ts';
import { embedAll } from '../../../src/runtime/embed.ts';
import { describeEmbeddingsConformance } from '../../../testing/embeddings.ts';
import { describeTransportBehaviour } from '../../conformance/transport.ts';
import { expectNoSecret, rejectionOf, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import { type LoopbackServer, fakeEmbedding } from '../../servers/loopback-server.ts';
import { startOpenAIServer } from '../../servers/openai-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  server = await startOpenAIServer({ dimensions: 8 });
});
afterAll(() => server.close());

const baseURL = () => `${server.url}/v1`;

describe('OpenAIEmbeddings against a loopback OpenAI server', () => {
  describeEmbeddingsConformance(() => new OpenAIEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'text-embedding-3-small', maxBatchSize: 4 }));

  describeTransportBehaviour({
    server: () => server,
    path: '/v1/embeddings',
    create: (transport) => new OpenAIEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), ...transport }),
    call: (provider, signal) => (provider as OpenAIEmbeddings).embed(['hello world'], { inputType: 'document', signal }),
  });

  it('sends model, input and encoding_format exactly, with dimensions when asked', async () => {
    server.reset();
    const provider = new OpenAIEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'text-embedding-3-large', dimensions: 4 });
    const vectors = await provider.embed(['alpha beta', 'gamma'], { inputType: 'query' });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].path).toBe('/v1/embeddings');
    expect(server.requests[0].body).toEqual({ model: 'text-embedding-3-large', input: ['alpha beta', 'gamma'], encoding_format: 'float', dimensions: 4 });
    expect(vectors).toEqual([fakeEmbedding('alpha beta', 4), fakeEmbedding('gamma', 4)]);
    expect(provider.dimensions).toBe(4);
  });

  it('decodes base64 vectors into Float32Array', async () => {
    server.reset();
    const provider = new OpenAIEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), encodingFormat: 'base64' });
    const [vector] = await provider.embed(['alpha beta'], { inputType: 'document' });
    expect((server.requests[0].body as { encoding_format: string }).encoding_format).toBe('base64');
    expect(vector).toBeInstanceOf(Float32Array);
    expect(Array.from(vector)).toEqual(Array.from(new Float32Array(fakeEmbedding('alpha beta', 8))));
  });

  it('learns the dimensions of an unknown model from the first reply', async () => {
    const provider = new OpenAIEmbeddings({ baseURL: baseURL(), model: 'nomic-embed-text' });
    expect(provider.dimensions).toBeUndefined();
    await provider.embed(['x'], { inputType: 'document' });
    expect(provider.dimensions).toBe(8);
  });

  it('is batched by embedAll into maxBatchSize requests, in order, at most maxParallelCalls at once', async () => {
    server.reset();
    const provider = new OpenAIEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), maxBatchSize: 2, maxParallelCalls: 2 });
    const texts = ['one', 'two', 'three', 'four', 'five'];
    const vectors = await embedAll(provider, texts, { inputType: 'document' });
    const inputs = server.requests
      .map((request) => (request.body as { input: string[] }).input)
      .sort((left, right) => texts.indexOf(left[0]) - texts.indexOf(right[0]));
    expect(inputs).toEqual([['one', 'two'], ['three', 'four'], ['five']]);
    expect(vectors).toEqual(texts.map((text) => fakeEmbedding(text, 8)));
  });

  it('maps vectors by index, not by position', async () => {
    server.reset();
    server.failNext({
      kind: 'respond',
      body: {
        object: 'list',
        data: [
          { index: 1, embedding: [0, 1] },
          { index: 0, embedding: [1, 0] },
        ],
      },
    });
    const provider = new OpenAIEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL() });
    expect(await provider.embed(['first', 'second'], { inputType: 'document' })).toEqual([
      [1, 0],
      [0, 1],
    ]);
  });

  it.each([
    ['too few embeddings', { data: [{ index: 0, embedding: [1, 0] }] }, 'asked for 2 embeddings, received 1'],
    [
      'a duplicate index',
      {
        data: [
          { index: 0, embedding: [1, 0] },
          { index: 0, embedding: [0, 1] },
        ],
      },
      'data[1].index 0 appears more than once',
    ],
    [
      'an index out of range',
      {
        data: [
          { index: 0, embedding: [1, 0] },
          { index: 5, embedding: [0, 1] },
        ],
      },
      'data[1].index is 5, outside 0..1',
    ],
    [
      'a non-numeric component',
      {
        data: [
          { index: 0, embedding: [1, 0] },
          { index: 1, embedding: [0, 'x'] },
        ],
      },
      'embedding 1[1] is the string "x"',
    ],
    [
      'vectors of different lengths',
      {
        data: [
          { index: 0, embedding: [1, 0] },
          { index: 1, embedding: [0, 1, 0] },
        ],
      },
      'embedding 1 has 3 dimensions, expected 2',
    ],
    ['no data at all', { object: 'list' }, 'data is missing, expected an array'],
  ])('refuses a reply with %s: PROVIDER_RESPONSE_INVALID naming the provider and status', async (_label, body, problem) => {
    server.reset();
    server.failNext({ kind: 'respond', body });
    const provider = new OpenAIEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'custom-model' });
    const error = await rejectionOf(provider.embed(['first', 'second'], { inputType: 'document' }));
    expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID', status: 200 });
    expect(error.message).toContain('[axon] [openai-embeddings] Invalid response from the service: ');
    expect(error.message).toContain(problem);
  });

  it('sends no Authorization header to a keyless compatible server, even with OPENAI_API_KEY set', async () => {
    vi.stubEnv('OPENAI_API_KEY', 'sk-should-never-leave-for-another-host');
    try {
      server.reset();
      await new OpenAIEmbeddings({ baseURL: baseURL() }).embed(['x'], { inputType: 'document' });
      expect(server.requests[0].headers.authorization).toBeUndefined();
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('needs a key for api.openai.com and says how to give one', () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    try {
      expect(() => new OpenAIEmbeddings()).toThrow('[axon] [openai-embeddings] Missing API key. Pass apiKey or set OPENAI_API_KEY.');
      expect(new OpenAIEmbeddings({ apiKey: TEST_KEY }).dimensions).toBe(1536);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('reads the key from { env } and keeps it out of every rendering', () => {
    vi.stubEnv('AXON_TEST_OPENAI_KEY', TEST_KEY);
    try {
      const provider = new OpenAIEmbeddings({ apiKey: { env: 'AXON_TEST_OPENAI_KEY' } });
      expectNoSecret(provider);
      expect(JSON.parse(JSON.stringify(provider))).toEqual({
        name: 'openai-embeddings',
        genAiProvider: 'openai',
        model: 'text-embedding-3-small',
        baseURL: 'https://api.openai.com/v1',
        maxBatchSize: 256,
        maxParallelCalls: 4,
        identity: { provider: 'openai', model: 'text-embedding-3-small', dimensions: null, endpoint: 'https://api.openai.com/v1' },
      });
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('reports every invalid option at once, by path', () => {
    expect(() => new OpenAIEmbeddings({ apiKey: TEST_KEY, model: '', maxBatchSize: 0, baseURL: 'not a url' })).toThrow(
      /3 problems[\s\S]*model[\s\S]*maxBatchSize[\s\S]*baseURL/,
    );
  });
});
