import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OllamaChat } from '../../../providers/ollama/ollama-chat.ts';
import { OllamaEmbeddings } from '../../../providers/ollama/ollama-embeddings.ts';
import type { Usage } from '../../../src/contracts/usage.ts';
import { describeChatConformance } from '../../../testing/chat.ts';
import { describeEmbeddingsConformance } from '../../../testing/embeddings.ts';
import { describeStreamFaults } from '../../conformance/stream-faults.ts';
import { describeTransportBehaviour } from '../../conformance/transport.ts';
import { expectNoSecret, rejectionOf, streamText, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';
import { ollamaLine, startOllamaServer } from '../../servers/ollama-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  // nomic-embed-text vectors have 768 dimensions; the fake model answers with as many.
  server = await startOllamaServer({ dimensions: 768 });
});
afterAll(() => server.close());

const question = [{ role: 'user' as const, content: 'Where is the Eiffel tower?' }];
const line = (content: string) => ollamaLine({ message: { role: 'assistant', content }, done: false });

describe('OllamaChat against a loopback Ollama server', () => {
  describeChatConformance(() => new OllamaChat({ host: server.url }));

  describeTransportBehaviour({
    server: () => server,
    path: '/api/chat',
    create: (transport) => new OllamaChat({ host: server.url, apiKey: TEST_KEY, ...transport }),
    call: (provider, signal) => (provider as OllamaChat).complete(question, { signal }),
  });

  describeStreamFaults({
    server: () => server,
    create: () => new OllamaChat({ host: server.url, maxRetries: 0 }),
    reply: 'Echo: Where is the Eiffel tower?',
    cut: { kind: 'chunks', contentType: 'application/x-ndjson', chunks: [line('The Eiffel'), line(' tower is')], end: 'close' },
    limited: {
      kind: 'chunks',
      contentType: 'application/x-ndjson',
      chunks: [line('The Eiffel tower is'), ollamaLine({ message: { role: 'assistant', content: '' }, done: true, done_reason: 'length', eval_count: 4 })],
      end: 'close',
    },
  });

  it('speaks the native API: options.temperature and num_predict, keep_alive, stream false or NDJSON, no key', async () => {
    server.reset();
    const chat = new OllamaChat({ host: server.url.replace(/^http:\/\//, ''), temperature: 0.2, keepAlive: '10m' });
    await chat.complete(question, { maxTokens: 64 });
    await streamText(chat.stream(question));
    expect(server.requests.map((request) => request.body)).toEqual([
      { model: 'llama3.1', messages: question, stream: false, options: { temperature: 0.2, num_predict: 64 }, keep_alive: '10m' },
      { model: 'llama3.1', messages: question, stream: true, options: { temperature: 0.2 }, keep_alive: '10m' },
    ]);
    expect(server.requests[1].headers.accept).toBe('application/x-ndjson');
    expect(server.requests[0].headers.authorization).toBeUndefined();
  });

  it('reports prompt_eval_count and eval_count, and only the output when the prompt came from the cache', async () => {
    const chat = new OllamaChat({ host: server.url });
    const usages: Usage[] = [];
    await chat.complete(question, { onUsage: (usage) => usages.push(usage) });
    await streamText(chat.stream(question, { onUsage: (usage) => usages.push(usage) }));
    server.failNext({ kind: 'respond', body: { message: { role: 'assistant', content: 'hi' }, done: true, eval_count: 1 } });
    await chat.complete(question, { onUsage: (usage) => usages.push(usage) });
    expect(usages).toEqual([{ inputTokens: 5, outputTokens: 6 }, { inputTokens: 5, outputTokens: 6 }, { outputTokens: 1 }]);
  });

  it('says how to pull a model the server does not have, and reads an error line in a stream', async () => {
    const error = await rejectionOf(new OllamaChat({ host: server.url, model: 'phi4' }).complete(question));
    expect(error).toMatchObject({ status: 404, fix: expect.stringContaining('ollama pull phi4') });
    server.failNext({ kind: 'chunks', contentType: 'application/x-ndjson', chunks: [line('The'), '{"error":"an unexpected error occurred"}\n'], end: 'close' });
    const streamed = await rejectionOf(streamText(new OllamaChat({ host: server.url }).stream(question)));
    expect(streamed.message).toContain('an unexpected error occurred');
  });

  it('never shows the key of a proxy in front of the server, should its errors echo it', async () => {
    const chat = new OllamaChat({ host: server.url, apiKey: TEST_KEY, maxRetries: 0 });
    server.failNext({ kind: 'echo-key', status: 404, body: (key) => ({ error: `model "phi4" not found, try pulling it first (key ${key})` }) });
    const missing = await rejectionOf(chat.complete(question));
    expect(missing).toMatchObject({ code: 'PROVIDER_NOT_FOUND', fix: expect.stringContaining('ollama pull phi4') });
    expectNoSecret(missing);
    server.failNext({
      kind: 'chunks',
      contentType: 'application/x-ndjson',
      chunks: [line('The'), `{"error":"proxy refused key ${TEST_KEY}"}\n`],
      end: 'close',
    });
    const streamed = await rejectionOf(streamText(chat.stream(question)));
    expect(streamed.message).toContain('proxy refused key');
    expectNoSecret(streamed);
  });
});

describe('OllamaEmbeddings against a loopback Ollama server', () => {
  describeEmbeddingsConformance(() => new OllamaEmbeddings({ host: server.url, model: 'embed-test', maxBatchSize: 5 }));

  describeTransportBehaviour({
    server: () => server,
    path: '/api/embed',
    create: (transport) => new OllamaEmbeddings({ host: server.url, model: 'embed-test', apiKey: TEST_KEY, ...transport }),
    call: (provider, signal) => (provider as OllamaEmbeddings).embed(['hello world'], { inputType: 'document', signal }),
  });

  it('sends /api/embed with input as a list and reports prompt_eval_count', async () => {
    server.reset();
    const usages: Usage[] = [];
    const provider = new OllamaEmbeddings({ host: server.url });
    expect(provider.dimensions).toBe(768);
    const vectors = await provider.embed(['two words', 'three more words'], { inputType: 'document', onUsage: (usage) => usages.push(usage) });
    expect(vectors.map((vector) => vector.length)).toEqual([768, 768]);
    expect(server.requests[0].body).toEqual({ model: 'nomic-embed-text', input: ['two words', 'three more words'], truncate: true });
    expect(usages).toEqual([{ inputTokens: 5 }]);
  });
});
