import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MistralChat } from '../../../providers/mistral/mistral-chat.ts';
import { MistralEmbeddings } from '../../../providers/mistral/mistral-embeddings.ts';
import type { Usage } from '../../../src/contracts/usage.ts';
import { describeChatConformance } from '../../../testing/chat.ts';
import { describeEmbeddingsConformance } from '../../../testing/embeddings.ts';
import { describeStreamFaults } from '../../conformance/stream-faults.ts';
import { describeTransportBehaviour } from '../../conformance/transport.ts';
import { expectNoSecret, rejectionOf, streamText, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';
import { startMistralServer } from '../../servers/mistral-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  // mistral-embed vectors have 1024 dimensions; the fake model answers with as many.
  server = await startMistralServer({ dimensions: 1024 });
});
afterAll(() => server.close());

const baseURL = () => `${server.url}/v1`;
const question = [{ role: 'user' as const, content: 'Where is the Eiffel tower?' }];
const chunk = (delta: Record<string, unknown>, finish: string | null) =>
  JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });

describe('MistralChat against a loopback Mistral API', () => {
  describeChatConformance(() => new MistralChat({ apiKey: TEST_KEY, baseURL: baseURL() }));

  describeTransportBehaviour({
    server: () => server,
    path: '/v1/chat/completions',
    create: (transport) => new MistralChat({ apiKey: TEST_KEY, baseURL: baseURL(), ...transport }),
    call: (provider, signal) => (provider as MistralChat).complete(question, { signal }),
  });

  describeStreamFaults({
    server: () => server,
    create: () => new MistralChat({ apiKey: TEST_KEY, baseURL: baseURL(), maxRetries: 0 }),
    reply: 'Echo: Where is the Eiffel tower?',
    cut: { kind: 'events', events: [{ data: chunk({ content: 'The Eiffel' }, null) }, { data: chunk({ content: ' tower is' }, null) }], end: 'close' },
    limited: {
      kind: 'events',
      events: [{ data: chunk({ content: 'The Eiffel tower is' }, null) }, { data: chunk({}, 'model_length') }, { data: '[DONE]' }],
      end: 'close',
    },
  });

  it('sends OpenAI-shaped bodies with max_tokens and no stream_options, which Mistral refuses', async () => {
    server.reset();
    const chat = new MistralChat({ apiKey: TEST_KEY, baseURL: baseURL(), temperature: 0.3 });
    await chat.complete(question, { maxTokens: 40 });
    await streamText(chat.stream(question));
    expect(server.requests.map((request) => request.body)).toEqual([
      { model: 'mistral-small-latest', messages: question, temperature: 0.3, max_tokens: 40, stream: false },
      { model: 'mistral-small-latest', messages: question, temperature: 0.3, stream: true },
    ]);
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${TEST_KEY}`);
  });

  it('reports usage from the reply and from the last chunk, which carries it unasked', async () => {
    const chat = new MistralChat({ apiKey: TEST_KEY, baseURL: baseURL() });
    const usages: Usage[] = [];
    await chat.complete(question, { onUsage: (usage) => usages.push(usage) });
    await streamText(chat.stream(question, { onUsage: (usage) => usages.push(usage) }));
    expect(usages).toEqual([
      { inputTokens: 5, outputTokens: 6 },
      { inputTokens: 5, outputTokens: 6 },
    ]);
  });

  it('reads a 422 validation body into the message', async () => {
    server.failNext({
      kind: 'respond',
      status: 422,
      body: { detail: [{ type: 'less_than_equal', loc: ['body', 'temperature'], msg: 'Input should be less than or equal to 1.5' }] },
    });
    const error = await rejectionOf(new MistralChat({ apiKey: TEST_KEY, baseURL: baseURL() }).complete(question));
    expect(error.message).toContain('body.temperature: Input should be less than or equal to 1.5');
    expect(error).toMatchObject({ status: 422 });
  });

  it('needs a key and says how to give one', () => {
    vi.stubEnv('MISTRAL_API_KEY', '');
    try {
      expect(() => new MistralChat()).toThrow('[axon] [mistral-chat] Missing API key. Pass apiKey or set MISTRAL_API_KEY.');
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe('MistralEmbeddings against a loopback Mistral API', () => {
  describeEmbeddingsConformance(() => new MistralEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'embed-test', maxBatchSize: 5 }));

  describeTransportBehaviour({
    server: () => server,
    path: '/v1/embeddings',
    create: (transport) => new MistralEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), ...transport }),
    call: (provider, signal) => (provider as MistralEmbeddings).embed(['hello world'], { inputType: 'document', signal }),
  });

  it('sends {model, input} and reports usage.prompt_tokens', async () => {
    server.reset();
    const usages: Usage[] = [];
    const provider = new MistralEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL() });
    await provider.embed(['two words', 'three more words'], { inputType: 'query', onUsage: (usage) => usages.push(usage) });
    expect(server.requests[0].body).toEqual({ model: 'mistral-embed', input: ['two words', 'three more words'] });
    expect(usages).toEqual([{ inputTokens: 5 }]);
    expect(provider.dimensions).toBe(1024);
  });

  it('caps the batch at the 256 inputs Mistral accepts, and says so when a server refuses a batch', async () => {
    expect(() => new MistralEmbeddings({ apiKey: TEST_KEY, maxBatchSize: 257 })).toThrow(/maxBatchSize/);
    server.failNext({
      kind: 'respond',
      status: 400,
      body: { object: 'error', message: 'Too many inputs in request, split into more batches.', type: 'invalid_request_error' },
    });
    const error = await rejectionOf(new MistralEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL() }).embed(['a'], { inputType: 'document' }));
    expect(error).toMatchObject({ status: 400, fix: 'Lower maxBatchSize, or shorten the texts.' });
  });

  it('never shows the key a server echoes in a "too many inputs" refusal, whatever the shape of its body', async () => {
    const embedder = new MistralEmbeddings({ apiKey: TEST_KEY, baseURL: baseURL(), maxRetries: 0 });
    const bodies: Array<(key: string) => unknown> = [
      (key) => ({ object: 'error', message: `Too many inputs for key ${key}.`, type: 'invalid_request_error' }),
      (key) => ({ error: `Too many inputs for key ${key}.` }),
      (key) => `Too many inputs for key ${key}.`,
    ];
    for (const body of bodies) {
      server.failNext({ kind: 'echo-key', status: 400, body });
      const error = await rejectionOf(embedder.embed(['a'], { inputType: 'document' }));
      expect(error).toMatchObject({ code: 'PROVIDER_REQUEST_TOO_LARGE', message: expect.stringContaining('Too many inputs for key') });
      expectNoSecret(error);
    }
  });
});
