import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAIChat } from '../../../providers/openai/openai-chat.ts';
import { describeChatConformance } from '../../../testing/chat.ts';
import { describeTransportBehaviour } from '../../conformance/transport.ts';
import { recordingRetryPolicy, rejectionOf, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';
import { startOpenAIServer } from '../../servers/openai-server.ts';

let server: LoopbackServer;
let slowStreamServer: LoopbackServer;
beforeAll(async () => {
  server = await startOpenAIServer();
  slowStreamServer = await startOpenAIServer({ streamDelayMs: 400 });
});
afterAll(async () => {
  await server.close();
  await slowStreamServer.close();
});

const baseURL = () => `${server.url}/v1`;
const question = [{ role: 'user' as const, content: 'Where is the Eiffel tower?' }];

describe('OpenAIChat against a loopback OpenAI server', () => {
  describeChatConformance(() => new OpenAIChat({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'gpt-4o-mini' }));

  describeTransportBehaviour({
    server: () => server,
    path: '/v1/chat/completions',
    create: (transport) => new OpenAIChat({ apiKey: TEST_KEY, baseURL: baseURL(), ...transport }),
    call: (provider, signal) => (provider as OpenAIChat).complete(question, { signal }),
  });

  it('sends the conversation, temperature and max_tokens exactly', async () => {
    server.reset();
    const chat = new OpenAIChat({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'llama3.1', temperature: 0.2 });
    const text = await chat.complete([{ role: 'system', content: 'Be brief.' }, ...question], { maxTokens: 50 });
    expect(text).toBe('Echo: Where is the Eiffel tower?');
    expect(server.requests[0].body).toEqual({
      model: 'llama3.1',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Where is the Eiffel tower?' },
      ],
      temperature: 0.2,
      max_tokens: 50,
    });
  });

  it('streams with stream: true and yields the deltas in order', async () => {
    server.reset();
    const chat = new OpenAIChat({ apiKey: TEST_KEY, baseURL: baseURL(), model: 'llama3.1' });
    const deltas: string[] = [];
    for await (const delta of chat.stream(question)) deltas.push(delta);
    expect(deltas).toEqual(['Echo: W', 'here is', ' the Ei', 'ffel to', 'wer?']);
    expect((server.requests[0].body as { stream: boolean }).stream).toBe(true);
  });

  it('sends the key, organization and project on complete and stream alike, and no Authorization without a key', async () => {
    server.reset();
    const chat = new OpenAIChat({ apiKey: TEST_KEY, baseURL: baseURL(), organization: 'org-1', project: 'proj-1' });
    await chat.complete(question);
    for await (const _delta of chat.stream(question));
    for await (const _delta of new OpenAIChat({ baseURL: baseURL() }).stream(question));
    const [completed, streamed, keyless] = server.requests.map((request) => request.headers);
    for (const headers of [completed, streamed]) {
      expect(headers).toMatchObject({ authorization: `Bearer ${TEST_KEY}`, 'openai-organization': 'org-1', 'openai-project': 'proj-1' });
    }
    expect(streamed).toMatchObject({ 'content-type': 'application/json', accept: 'text/event-stream' });
    expect(keyless.authorization).toBeUndefined();
    expect(keyless['openai-organization']).toBeUndefined();
    expect(server.requests.map((request) => request.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions', '/v1/chat/completions']);
  });

  it('completes and streams through one transport: the same headers but the accepted type, and the same error for the same failure', async () => {
    server.reset();
    const chat = new OpenAIChat({ apiKey: TEST_KEY, baseURL: baseURL(), organization: 'org-1' });
    await chat.complete(question);
    for await (const _delta of chat.stream(question));
    const [completed, streamed] = server.requests.map(({ headers }) => {
      const { accept: _accept, 'content-length': _length, ...rest } = headers as Record<string, unknown>;
      // Only the SDK's per-request headers (its retry count, the time limit it was given) may differ in value.
      return Object.keys(rest).sort();
    });
    expect(streamed).toEqual(completed);
    expect(completed).toContain('user-agent');

    server.failNext({ kind: 'unauthorized' });
    const completeError = await rejectionOf(new OpenAIChat({ apiKey: TEST_KEY, baseURL: baseURL(), maxRetries: 0 }).complete(question));
    server.failNext({ kind: 'unauthorized' });
    const streamError = await rejectionOf(
      (async () => {
        for await (const _delta of new OpenAIChat({ apiKey: TEST_KEY, baseURL: baseURL(), maxRetries: 0 }).stream(question));
      })(),
    );
    for (const error of [completeError, streamError]) expect(error).toMatchObject({ code: 'PROVIDER_AUTH_FAILED', status: 401, provider: 'openai-chat' });
    expect((streamError as Error).message).toBe((completeError as Error).message);
  });

  it('streams through the fetch option, to the official endpoint with max_completion_tokens', async () => {
    const requests: Array<{ url: string; body: unknown }> = [];
    const fakeFetch: typeof fetch = async (input, init) => {
      requests.push({ url: String(input), body: JSON.parse(String(init?.body)) });
      const chunk = (delta: object, finish: string | null) =>
        JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
      const body = `data: ${chunk({ role: 'assistant', content: 'hi' }, null)}\n\ndata: ${chunk({}, 'stop')}\n\ndata: [DONE]\n\n`;
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    };
    const deltas: string[] = [];
    for await (const delta of new OpenAIChat({ apiKey: TEST_KEY, fetch: fakeFetch }).stream(question, { maxTokens: 7 })) deltas.push(delta);
    expect(deltas).toEqual(['hi']);
    expect(requests[0].url).toBe('https://api.openai.com/v1/chat/completions');
    expect(requests[0].body).toMatchObject({ model: 'gpt-4o-mini', max_completion_tokens: 7, stream: true });
  });

  it('retries a stream that fails before its first chunk', async () => {
    server.reset();
    server.failNext({ kind: 'server-error', status: 502 });
    const { policy, sleeps } = recordingRetryPolicy();
    const chat = new OpenAIChat({ apiKey: TEST_KEY, baseURL: baseURL(), retryPolicy: policy });
    let text = '';
    for await (const delta of chat.stream(question)) text += delta;
    expect(text).toBe('Echo: Where is the Eiffel tower?');
    expect(sleeps).toEqual([250]);
    expect(server.requests).toHaveLength(2);
  });

  it('times out a stream whose next chunk takes longer than timeoutMs', async () => {
    const chat = new OpenAIChat({ baseURL: `${slowStreamServer.url}/v1`, timeoutMs: 150, maxRetries: 0 });
    const deltas: string[] = [];
    const error = await rejectionOf(
      (async () => {
        for await (const delta of chat.stream(question)) deltas.push(delta);
      })(),
    );
    expect(error).toMatchObject({ code: 'PROVIDER_TIMEOUT' });
    expect(deltas.length).toBeLessThan(5);
  });

  it('cancels a stream in progress with ABORTED', async () => {
    const chat = new OpenAIChat({ baseURL: `${slowStreamServer.url}/v1` });
    const controller = new AbortController();
    const deltas: string[] = [];
    const error = await rejectionOf(
      (async () => {
        for await (const delta of chat.stream(question, { signal: controller.signal })) {
          deltas.push(delta);
          controller.abort();
        }
      })(),
    );
    expect(error).toMatchObject({ code: 'ABORTED' });
    expect(deltas).toHaveLength(1);
  });

  it('refuses a completion without message content', async () => {
    server.reset();
    server.failNext({ kind: 'respond', body: { id: 'x', object: 'chat.completion', choices: [] } });
    const error = await rejectionOf(new OpenAIChat({ baseURL: baseURL() }).complete(question));
    expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID', status: 200 });
    expect(error.message).toContain('choices[0].message.content is missing');
  });

  it('uses max_completion_tokens on api.openai.com', async () => {
    const requests: Array<{ url: string; body: unknown }> = [];
    const fakeFetch: typeof fetch = async (input, init) => {
      requests.push({ url: String(input), body: JSON.parse(String(init?.body)) });
      return new Response(
        JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }),
        { headers: { 'content-type': 'application/json' } },
      );
    };
    const chat = new OpenAIChat({ apiKey: TEST_KEY, fetch: fakeFetch });
    expect(await chat.complete(question, { maxTokens: 7 })).toBe('hi');
    expect(requests[0].url).toBe('https://api.openai.com/v1/chat/completions');
    expect(requests[0].body).toMatchObject({ model: 'gpt-4o-mini', max_completion_tokens: 7 });
  });
});
