import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AzureOpenAIChat } from '../../../providers/azure/azure-openai-chat.ts';
import { AzureOpenAIEmbeddings } from '../../../providers/azure/azure-openai-embeddings.ts';
import type { Usage } from '../../../src/contracts/usage.ts';
import { describeChatConformance } from '../../../testing/chat.ts';
import { describeEmbeddingsConformance } from '../../../testing/embeddings.ts';
import { describeStreamFaults } from '../../conformance/stream-faults.ts';
import { describeTransportBehaviour } from '../../conformance/transport.ts';
import { expectNoSecret, rejectionOf, streamText, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import { startAzureOpenAIServer } from '../../servers/azure-openai-server.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  server = await startAzureOpenAIServer();
});
afterAll(() => server.close());

const question = [{ role: 'user' as const, content: 'Where is the Eiffel tower?' }];
const chat = (extra: Record<string, unknown> = {}) => new AzureOpenAIChat({ endpoint: server.url, deployment: 'chat-deployment', apiKey: TEST_KEY, ...extra });
const chunk = (delta: Record<string, unknown>, finish: string | null) =>
  JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
const chatPath = '/openai/deployments/chat-deployment/chat/completions';

describe('AzureOpenAIChat against a loopback Azure OpenAI resource', () => {
  describeChatConformance(() => chat());

  describeTransportBehaviour({
    server: () => server,
    path: chatPath,
    create: (transport) => chat(transport),
    call: (provider, signal) => (provider as AzureOpenAIChat).complete(question, { signal }),
    keyHeader: { name: 'api-key', value: TEST_KEY },
  });

  describeStreamFaults({
    server: () => server,
    create: () => chat({ maxRetries: 0 }),
    reply: 'Echo: Where is the Eiffel tower?',
    cut: { kind: 'events', events: [{ data: chunk({ content: 'The Eiffel' }, null) }, { data: chunk({ content: ' tower is' }, null) }], end: 'close' },
    limited: {
      kind: 'events',
      events: [{ data: chunk({ content: 'The Eiffel tower is' }, null) }, { data: chunk({}, 'length') }, { data: '[DONE]' }],
      end: 'close',
    },
  });

  it('puts the deployment in the path, api-version in the query, the key in api-key, and no model in the body', async () => {
    server.reset();
    await chat({ temperature: 0.1 }).complete(question, { maxTokens: 30 });
    await streamText(chat({ limitField: 'max_completion_tokens', apiVersion: '2025-04-01-preview' }).stream(question, { maxTokens: 30 }));
    const [completed, streamed] = server.requests;
    expect(completed.path).toBe(chatPath);
    expect(completed.query).toEqual({ 'api-version': '2024-10-21' });
    expect(completed.headers['api-key']).toBe(TEST_KEY);
    expect(completed.headers.authorization).toBeUndefined();
    expect(completed.body).toEqual({ messages: question, temperature: 0.1, max_tokens: 30 });
    expect(streamed.query).toEqual({ 'api-version': '2025-04-01-preview' });
    expect(streamed.body).toEqual({ messages: question, max_completion_tokens: 30, stream: true, stream_options: { include_usage: true } });
  });

  it('reads past the empty first chunk of prompt filter results, and reports the usage chunk', async () => {
    const usages: Usage[] = [];
    expect(await streamText(chat().stream(question, { onUsage: (usage) => usages.push(usage) }))).toBe('Echo: Where is the Eiffel tower?');
    await chat().complete(question, { onUsage: (usage) => usages.push(usage) });
    await streamText(chat({ streamUsage: false }).stream(question, { onUsage: (usage) => usages.push(usage) }));
    expect(usages).toEqual([{ inputTokens: 5, outputTokens: 6 }, { inputTokens: 5, outputTokens: 6 }, 'unknown']);
  });

  it('says what a content_filter refusal and an unknown deployment are', async () => {
    server.failNext({
      kind: 'respond',
      status: 400,
      body: { error: { code: 'content_filter', message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy." } },
    });
    const filtered = await rejectionOf(chat().complete(question));
    expect(filtered.message).toContain("refused by the resource's content filter");
    const missing = await rejectionOf(chat({ deployment: 'nope' }).complete(question));
    expect(missing).toMatchObject({ status: 404, fix: expect.stringContaining('deployment name') });
  });

  it('never shows the key a server echoes in a content_filter or deployment refusal', async () => {
    for (const code of ['content_filter', 'DeploymentNotFound']) {
      // The message beside the error object rather than in it: read from the body as a whole.
      server.failNext({
        kind: 'echo-key',
        status: code === 'content_filter' ? 400 : 404,
        body: (key) => ({ error: { code }, message: `Refused for ${key}.` }),
      });
      const error = await rejectionOf(chat({ maxRetries: 0 }).complete(question));
      expect(error.message).toContain('Refused for');
      expectNoSecret(error);
    }
  });

  it('needs an endpoint and a key, and says where to put them', () => {
    vi.stubEnv('AZURE_OPENAI_ENDPOINT', '');
    vi.stubEnv('AZURE_OPENAI_API_KEY', '');
    try {
      expect(() => new AzureOpenAIChat({ deployment: 'd', apiKey: TEST_KEY })).toThrow(/endpoint: is required.*AZURE_OPENAI_ENDPOINT/);
      expect(() => new AzureOpenAIChat({ deployment: 'd', endpoint: 'https://r.openai.azure.com' })).toThrow('Pass apiKey or set AZURE_OPENAI_API_KEY.');
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe('AzureOpenAIEmbeddings against a loopback Azure OpenAI resource', () => {
  const embeddings = (extra: Record<string, unknown> = {}) =>
    new AzureOpenAIEmbeddings({ endpoint: server.url, deployment: 'embeddings-deployment', apiKey: TEST_KEY, maxBatchSize: 5, ...extra });

  describeEmbeddingsConformance(() => embeddings());

  describeTransportBehaviour({
    server: () => server,
    path: '/openai/deployments/embeddings-deployment/embeddings',
    create: (transport) => embeddings(transport),
    call: (provider, signal) => (provider as AzureOpenAIEmbeddings).embed(['hello world'], { inputType: 'document', signal }),
    keyHeader: { name: 'api-key', value: TEST_KEY },
  });

  it('sends input, encoding_format and dimensions, and reports usage.prompt_tokens', async () => {
    server.reset();
    const usages: Usage[] = [];
    const provider = embeddings({ dimensions: 16 });
    const vectors = await provider.embed(['two words'], { inputType: 'document', onUsage: (usage) => usages.push(usage) });
    expect(vectors[0]).toHaveLength(16);
    expect(server.requests[0].body).toEqual({ input: ['two words'], encoding_format: 'float', dimensions: 16 });
    expect(server.requests[0].query).toEqual({ 'api-version': '2024-10-21' });
    expect(usages).toEqual([{ inputTokens: 2 }]);
  });
});
