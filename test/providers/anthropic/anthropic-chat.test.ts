import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AnthropicChat } from '../../../providers/anthropic/anthropic-chat.ts';
import type { Usage } from '../../../src/contracts/usage.ts';
import { describeChatConformance } from '../../../testing/chat.ts';
import { describeStreamFaults } from '../../conformance/stream-faults.ts';
import { describeTransportBehaviour } from '../../conformance/transport.ts';
import { recordingRetryPolicy, rejectionOf, streamText, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import { anthropicEvent, startAnthropicServer } from '../../servers/anthropic-server.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  server = await startAnthropicServer();
});
afterAll(() => server.close());

const question = [{ role: 'user' as const, content: 'Where is the Eiffel tower?' }];
const textDelta = (text: string) => anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text } });
const overloadedEvent = anthropicEvent('error', { error: { type: 'overloaded_error', message: 'Overloaded' } });

describe('AnthropicChat against a loopback Messages API', () => {
  describeChatConformance(() => new AnthropicChat({ apiKey: TEST_KEY, baseURL: server.url }));

  describeTransportBehaviour({
    server: () => server,
    path: '/v1/messages',
    create: (transport) => new AnthropicChat({ apiKey: TEST_KEY, baseURL: server.url, ...transport }),
    call: (provider, signal) => (provider as AnthropicChat).complete(question, { signal }),
    keyHeader: { name: 'x-api-key', value: TEST_KEY },
  });

  describeStreamFaults({
    server: () => server,
    create: () => new AnthropicChat({ apiKey: TEST_KEY, baseURL: server.url, maxRetries: 0 }),
    reply: 'Echo: Where is the Eiffel tower?',
    cut: {
      kind: 'events',
      events: [anthropicEvent('message_start', { message: { usage: { input_tokens: 3 } } }), textDelta('The Eiffel tower is')],
      end: 'close',
    },
    limited: {
      kind: 'events',
      events: [
        textDelta('The Eiffel tower is'),
        anthropicEvent('message_delta', { delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 4 } }),
        anthropicEvent('message_stop'),
      ],
      end: 'close',
    },
  });

  it('sends system apart from messages, max_tokens always, and the key and version headers', async () => {
    server.reset();
    const chat = new AnthropicChat({ apiKey: TEST_KEY, baseURL: server.url, temperature: 0.3 });
    const conversation = [{ role: 'system' as const, content: 'Be brief.' }, { role: 'system' as const, content: 'Cite sources.' }, ...question];
    expect(await chat.complete(conversation)).toBe('Echo: Where is the Eiffel tower?');
    await streamText(chat.stream(conversation, { maxTokens: 64, temperature: 0 }));
    const [completed, streamed] = server.requests;
    expect(completed.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      system: 'Be brief.\n\nCite sources.',
      messages: [{ role: 'user', content: 'Where is the Eiffel tower?' }],
      temperature: 0.3,
      stream: false,
    });
    expect(streamed.body).toMatchObject({ max_tokens: 64, temperature: 0, stream: true });
    expect(completed.headers).toMatchObject({ 'x-api-key': TEST_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' });
    expect(completed.headers.authorization).toBeUndefined();
    expect(streamed.headers.accept).toBe('text/event-stream');
  });

  it('reports usage.input_tokens and output_tokens, from the message and from the stream', async () => {
    const chat = new AnthropicChat({ apiKey: TEST_KEY, baseURL: server.url });
    const usages: Usage[] = [];
    await chat.complete(question, { onUsage: (usage) => usages.push(usage) });
    await streamText(chat.stream(question, { onUsage: (usage) => usages.push(usage) }));
    // The loopback server counts words: 5 in the question, 6 in "Echo: Where is the Eiffel tower?".
    expect(usages).toEqual([
      { inputTokens: 5, outputTokens: 6 },
      { inputTokens: 5, outputTokens: 6 },
    ]);
  });

  it('adds cache reads and writes to the input tokens', async () => {
    server.failNext({
      kind: 'respond',
      body: {
        content: [{ type: 'text', text: 'hi' }],
        usage: { input_tokens: 4, cache_creation_input_tokens: 10, cache_read_input_tokens: 100, output_tokens: 2 },
      },
    });
    const usages: Usage[] = [];
    await new AnthropicChat({ apiKey: TEST_KEY, baseURL: server.url }).complete(question, { onUsage: (usage) => usages.push(usage) });
    expect(usages).toEqual([{ inputTokens: 114, outputTokens: 2 }]);
  });

  it('says unknown when a reply has no usage, and refuses a usage count that is not a count', async () => {
    const chat = new AnthropicChat({ apiKey: TEST_KEY, baseURL: server.url });
    server.failNext({ kind: 'respond', body: { content: [{ type: 'text', text: 'hi' }] } });
    const usages: Usage[] = [];
    await chat.complete(question, { onUsage: (usage) => usages.push(usage) });
    expect(usages).toEqual(['unknown']);
    server.failNext({ kind: 'respond', body: { content: [{ type: 'text', text: 'hi' }], usage: { input_tokens: 'many', output_tokens: 2 } } });
    const error = await rejectionOf(chat.complete(question, { onUsage: () => undefined }));
    expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID' });
    expect(error.message).toContain('usage.input_tokens is "many"');
  });

  it('retries HTTP 529 overloaded_error with backoff, and says the service is overloaded when it persists', async () => {
    server.reset();
    server.failNext({ kind: 'server-error', status: 529 });
    const { policy, sleeps } = recordingRetryPolicy();
    expect(await new AnthropicChat({ apiKey: TEST_KEY, baseURL: server.url, retryPolicy: policy }).complete(question)).toMatch(/^Echo/);
    expect(sleeps).toEqual([250]);
    server.failNext({ kind: 'server-error', status: 529 }, 2);
    const error = await rejectionOf(
      new AnthropicChat({ apiKey: TEST_KEY, baseURL: server.url, maxRetries: 1, retry: { initialDelayMs: 1 } }).complete(question),
    );
    expect(error).toMatchObject({ name: 'ProviderError', status: 529, retryable: true });
    expect(error.message).toContain('overloaded');
  });

  it('retries a stream whose first event is an overloaded_error, and not one that fails after its text began', async () => {
    server.reset();
    server.failNext({ kind: 'events', events: [anthropicEvent('message_start', { message: { usage: { input_tokens: 5 } } }), overloadedEvent], end: 'close' });
    const { policy, sleeps } = recordingRetryPolicy();
    const chat = new AnthropicChat({ apiKey: TEST_KEY, baseURL: server.url, retryPolicy: policy });
    expect(await streamText(chat.stream(question))).toBe('Echo: Where is the Eiffel tower?');
    expect(sleeps).toEqual([250]);
    expect(server.requests).toHaveLength(2);

    server.reset();
    server.failNext({ kind: 'events', events: [textDelta('The Eiffel'), overloadedEvent], end: 'close' });
    const deltas: string[] = [];
    const error = await rejectionOf(
      (async () => {
        for await (const delta of chat.stream(question)) deltas.push(delta);
      })(),
    );
    expect(deltas).toEqual(['The Eiffel']);
    expect(error).toMatchObject({ name: 'ProviderError', code: 'PROVIDER_UNAVAILABLE' });
    expect(error.message).toContain('overloaded');
    expect(server.requests).toHaveLength(1);
  });

  it('fails at once on an error event that no retry can cure', async () => {
    server.reset();
    server.failNext({
      kind: 'events',
      events: [anthropicEvent('error', { error: { type: 'invalid_request_error', message: 'prompt is too long' } })],
      end: 'close',
    });
    const { policy, sleeps } = recordingRetryPolicy();
    const error = await rejectionOf(streamText(new AnthropicChat({ apiKey: TEST_KEY, baseURL: server.url, retryPolicy: policy }).stream(question)));
    expect(error.message).toContain('prompt is too long (invalid_request_error)');
    expect(sleeps).toEqual([]);
  });

  it('names the error type of a 400 and refuses a conversation of system messages only', async () => {
    server.failNext({ kind: 'respond', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: too large' } } });
    const chat = new AnthropicChat({ apiKey: TEST_KEY, baseURL: server.url });
    const error = await rejectionOf(chat.complete(question));
    expect(error.message).toContain('max_tokens: too large (invalid_request_error)');
    await expect(chat.complete([{ role: 'system', content: 'Be brief.' }])).rejects.toMatchObject({ code: 'INVALID_MESSAGES' });
  });

  it('refuses a reply without a content list', async () => {
    server.failNext({ kind: 'respond', body: { type: 'message', role: 'assistant' } });
    const error = await rejectionOf(new AnthropicChat({ apiKey: TEST_KEY, baseURL: server.url }).complete(question));
    expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID', status: 200 });
    expect(error.message).toContain('content is missing');
  });

  it('needs a key and says how to give one', () => {
    vi.stubEnv('ANTHROPIC_API_KEY', '');
    try {
      expect(() => new AnthropicChat()).toThrow('[axon] [anthropic-chat] Missing API key. Pass apiKey or set ANTHROPIC_API_KEY.');
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
