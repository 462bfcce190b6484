import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GeminiChat } from '../../../providers/gemini/gemini-chat.ts';
import type { Usage } from '../../../src/contracts/usage.ts';
import { describeChatConformance } from '../../../testing/chat.ts';
import { describeStreamFaults } from '../../conformance/stream-faults.ts';
import { describeTransportBehaviour } from '../../conformance/transport.ts';
import { recordingRetryPolicy, rejectionOf, streamText, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import { geminiErrorBody, startGeminiServer } from '../../servers/gemini-server.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  server = await startGeminiServer();
});
afterAll(() => server.close());

const baseURL = () => `${server.url}/v1beta`;
const question = [{ role: 'user' as const, content: 'Where is the Eiffel tower?' }];
const chunk = (text: string, finishReason?: string) =>
  JSON.stringify({ candidates: [{ content: { parts: [{ text }], role: 'model' }, ...(finishReason ? { finishReason } : {}) }] });

describe('GeminiChat against a loopback Gemini API', () => {
  describeChatConformance(() => new GeminiChat({ apiKey: TEST_KEY, baseURL: baseURL() }));

  describeTransportBehaviour({
    server: () => server,
    path: '/v1beta/models/gemini-2.5-flash:generateContent',
    create: (transport) => new GeminiChat({ apiKey: TEST_KEY, baseURL: baseURL(), ...transport }),
    call: (provider, signal) => (provider as GeminiChat).complete(question, { signal }),
    keyHeader: { name: 'x-goog-api-key', value: TEST_KEY },
  });

  describeStreamFaults({
    server: () => server,
    create: () => new GeminiChat({ apiKey: TEST_KEY, baseURL: baseURL(), maxRetries: 0 }),
    reply: 'Echo: Where is the Eiffel tower?',
    cut: { kind: 'events', events: [{ data: chunk('The Eiffel') }, { data: chunk(' tower is') }], end: 'close' },
    limited: { kind: 'events', events: [{ data: chunk('The Eiffel tower is') }, { data: chunk('', 'MAX_TOKENS') }], end: 'close' },
  });

  it('sends contents with the roles user and model, systemInstruction and generationConfig, to the documented paths', async () => {
    server.reset();
    const chat = new GeminiChat({ apiKey: TEST_KEY, baseURL: baseURL(), temperature: 0.2 });
    const conversation = [
      { role: 'system' as const, content: 'Be brief.' },
      { role: 'user' as const, content: 'Hello.' },
      { role: 'assistant' as const, content: 'Hi.' },
      ...question,
    ];
    expect(await chat.complete(conversation, { maxTokens: 50 })).toBe('Echo: Where is the Eiffel tower?');
    await streamText(chat.stream(question));
    const [completed, streamed] = server.requests;
    expect(completed.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(completed.body).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Hello.' }] },
        { role: 'model', parts: [{ text: 'Hi.' }] },
        { role: 'user', parts: [{ text: 'Where is the Eiffel tower?' }] },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { temperature: 0.2, maxOutputTokens: 50 },
    });
    expect(streamed.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    expect(streamed.query).toEqual({ alt: 'sse' });
    expect(completed.headers['x-goog-api-key']).toBe(TEST_KEY);
    expect(completed.headers.authorization).toBeUndefined();
    expect(completed.query).toEqual({});
  });

  it('reports usageMetadata: promptTokenCount in, candidates and thoughts out, from the reply and the last chunk', async () => {
    const chat = new GeminiChat({ apiKey: TEST_KEY, baseURL: baseURL() });
    const usages: Usage[] = [];
    await chat.complete(question, { onUsage: (usage) => usages.push(usage) });
    await streamText(chat.stream(question, { onUsage: (usage) => usages.push(usage) }));
    server.failNext({
      kind: 'respond',
      body: {
        candidates: [{ content: { parts: [{ text: 'hi' }] }, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 2, thoughtsTokenCount: 40 },
      },
    });
    await chat.complete(question, { onUsage: (usage) => usages.push(usage) });
    expect(usages).toEqual([
      { inputTokens: 5, outputTokens: 6 },
      { inputTokens: 5, outputTokens: 6 },
      { inputTokens: 9, outputTokens: 42 },
    ]);
  });

  it('leaves thought summaries out of the text', async () => {
    server.failNext({
      kind: 'respond',
      body: { candidates: [{ content: { parts: [{ text: 'Let me think.', thought: true }, { text: 'Paris.' }] }, finishReason: 'STOP' }] },
    });
    expect(await new GeminiChat({ apiKey: TEST_KEY, baseURL: baseURL() }).complete(question)).toBe('Paris.');
  });

  it('a blocked prompt or reply is an error that says why, never an empty answer', async () => {
    const chat = new GeminiChat({ apiKey: TEST_KEY, baseURL: baseURL() });
    server.failNext({ kind: 'respond', body: { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5 } } });
    expect((await rejectionOf(chat.complete(question))).message).toContain('blocked the prompt (SAFETY)');
    server.failNext({ kind: 'respond', body: { candidates: [{ finishReason: 'RECITATION' }] } });
    expect((await rejectionOf(chat.complete(question))).message).toContain('blocked the reply (RECITATION)');
    server.failNext({ kind: 'respond', body: { candidates: [{ content: { role: 'model' }, finishReason: 'MAX_TOKENS' }] } });
    expect(await rejectionOf(chat.complete(question))).toMatchObject({ fix: expect.stringContaining('Raise maxTokens') });
    server.failNext({ kind: 'respond', body: {} });
    expect(await rejectionOf(chat.complete(question))).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID' });
  });

  it('waits the RetryInfo retryDelay of a 429 RESOURCE_EXHAUSTED body, which stands for Retry-After', async () => {
    server.reset();
    const retryInfo = { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' };
    server.failNext({ kind: 'respond', status: 429, body: geminiErrorBody(429, 'You exceeded your current quota.', [retryInfo]) });
    const { policy, sleeps } = recordingRetryPolicy();
    await new GeminiChat({ apiKey: TEST_KEY, baseURL: baseURL(), retryPolicy: policy }).complete(question);
    expect(sleeps).toEqual([7000]);
  });

  it('reads a 400 API_KEY_INVALID as a rejected key, the key redacted', async () => {
    const errorInfo = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' };
    server.failNext({ kind: 'respond', status: 400, body: geminiErrorBody(400, `API key not valid: ${TEST_KEY}`, [errorInfo]) });
    const error = await rejectionOf(new GeminiChat({ apiKey: TEST_KEY, baseURL: baseURL() }).complete(question));
    expect(error).toMatchObject({ status: 400, fix: expect.stringContaining('GEMINI_API_KEY') });
    expect(error.message).toContain('rejected the API key');
    expect(error.message).not.toContain(TEST_KEY);
  });

  it('retries a stream whose first chunk is a 503 UNAVAILABLE error, and not one whose error follows text', async () => {
    server.reset();
    const unavailable = JSON.stringify(geminiErrorBody(503, 'The model is overloaded. Please try again later.'));
    server.failNext({ kind: 'events', events: [{ data: unavailable }], end: 'close' });
    const { policy, sleeps } = recordingRetryPolicy();
    const chat = new GeminiChat({ apiKey: TEST_KEY, baseURL: baseURL(), retryPolicy: policy });
    expect(await streamText(chat.stream(question))).toBe('Echo: Where is the Eiffel tower?');
    expect(sleeps).toEqual([250]);
    server.failNext({ kind: 'events', events: [{ data: chunk('The Eiffel') }, { data: unavailable }], end: 'close' });
    const error = await rejectionOf(streamText(chat.stream(question)));
    expect(error.message).toContain('overloaded. Please try again later. (UNAVAILABLE)');
    expect(sleeps).toEqual([250]);
  });

  it('needs a key and says how to give one', () => {
    vi.stubEnv('GEMINI_API_KEY', '');
    try {
      expect(() => new GeminiChat()).toThrow('[axon] [gemini-chat] Missing API key. Pass apiKey or set GEMINI_API_KEY.');
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
