import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { VoyageEmbeddings } from '../../../providers/voyage/voyage-embeddings.ts';
import type { Usage } from '../../../src/contracts/usage.ts';
import { embedAll } from '../../../src/runtime/embed.ts';
import { describeEmbeddingsConformance } from '../../../testing/embeddings.ts';
import { describeTransportBehaviour } from '../../conformance/transport.ts';
import { rejectionOf, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';
import { startVoyageServer } from '../../servers/voyage-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  server = await startVoyageServer({ dimensions: 8 });
});
afterAll(() => server.close());

const baseURL = () => `${server.url}/v1`;

describe('VoyageEmbeddings against a loopback Voyage API', () => {
  describeEmbeddingsConformance(() => new VoyageEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'voyage-test', maxBatchSize: 5 }));

  describeTransportBehaviour({
    server: () => server,
    path: '/v1/embeddings',
    create: (transport) => new VoyageEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'voyage-test', ...transport }),
    call: (provider, signal) => (provider as VoyageEmbeddings).embed(['hello world'], { inputType: 'document', signal }),
  });

  it('embeds documents with input_type document and queries with input_type query', async () => {
    server.reset();
    const provider = new VoyageEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), dimensions: 256 });
    await provider.embed(['a stored passage'], { inputType: 'document' });
    await provider.embed(['a question'], { inputType: 'query' });
    expect(server.requests.map((request) => request.body)).toEqual([
      { input: ['a stored passage'], model: 'voyage-3.5', input_type: 'document', truncation: true, output_dimension: 256 },
      { input: ['a question'], model: 'voyage-3.5', input_type: 'query', truncation: true, output_dimension: 256 },
    ]);
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    expect(provider.dimensions).toBe(256);
  });

  it('reports usage.total_tokens as input tokens', async () => {
    const usages: Usage[] = [];
    await new VoyageEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'voyage-test' }).embed(['two words', 'and three more'], {
      inputType: 'document',
      onUsage: (usage) => usages.push(usage),
    });
    expect(usages).toEqual([{ inputTokens: 5 }]);
  });

  it('sends at most maxBatchSize texts per request (Voyage allows 1,000)', async () => {
    server.reset();
    const provider = new VoyageEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'voyage-test' });
    expect(provider.maxBatchSize).toBe(128);
    await embedAll(
      provider,
      Array.from({ length: 300 }, (_, index) => `passage ${index}`),
      { inputType: 'document' },
    );
    expect(server.requests.map((request) => (request.body as { input: string[] }).input.length).sort((left, right) => right - left)).toEqual([128, 128, 44]);
    expect(() => new VoyageEmbeddings({ apiKey: TEST_KEY, maxBatchSize: 1001 })).toThrow(/maxBatchSize/);
  });

  it('says a 400 over the request limits is one, with the fix', async () => {
    server.failNext({
      kind: 'respond',
      status: 400,
      body: { detail: 'Request to model voyage-3.5 failed. The max allowed tokens per submitted batch is 320000.' },
    });
    const error = await rejectionOf(new VoyageEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL() }).embed(['a'], { inputType: 'document' }));
    expect(error).toMatchObject({ status: 400, fix: expect.stringContaining('Lower maxBatchSize') });
    expect(error.message).toContain('over the service');
  });

  it('needs a key and says how to give one', () => {
    vi.stubEnv('VOYAGE_API_KEY', '');
    try {
      expect(() => new VoyageEmbeddings()).toThrow('[axon] [voyage-embeddings] Missing API key. Pass apiKey or set VOYAGE_API_KEY.');
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
