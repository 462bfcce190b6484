/**
 * An empty or cut-off answer is not an answer (issue 13: D9): a 200 whose body is no event stream is
 * PROVIDER_RESPONSE_INVALID, a truncated stream is reported through `onFinish` and flagged on the answer,
 * and a connection lost mid-stream says so rather than blaming the base URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CohereChat } from '../../providers/cohere/cohere-chat.ts';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import { OpenAIChat } from '../../providers/openai/openai-chat.ts';
import type { ChatFinish, ChatProvider } from '../../src/contracts/chat.ts';
import { RAG } from '../../src/rag.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import { rejectionOf, streamText, TEST_KEY } from '../helpers/provider-test-helpers.ts';
import { startCohereServer } from '../servers/cohere-server.ts';
import type { FailureMode, LoopbackServer } from '../servers/loopback-server.ts';
import { startOpenAIServer } from '../servers/openai-server.ts';

let openai: LoopbackServer;
let cohere: LoopbackServer;
beforeAll(async () => {
  [openai, cohere] = await Promise.all([startOpenAIServer(), startCohereServer()]);
});
afterAll(async () => {
  await Promise.all([openai.close(), cohere.close()]);
});

const question = [{ role: 'user' as const, content: 'Where is the Eiffel tower?' }];
const openaiChunk = (delta: Record<string, unknown>, finishReason: string | null) => {
  const choices = [{ index: 0, delta, logprobs: null, finish_reason: finishReason }];
  return JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices });
};
const cohereText = (text: string) => ({ index: 0, delta: { message: { content: { text } } } });
const cohereEvent = (type: string, payload: Record<string, unknown>) => ({ event: type, data: JSON.stringify({ type, ...payload }) });

interface Case {
  name: string;
  server: () => LoopbackServer;
  create: () => ChatProvider;
  /** Events of a stream cut after its text: no end event. */
  cut: FailureMode & { kind: 'events' };
  /** Events of a stream that ends because it hit the token limit. */
  limited: FailureMode & { kind: 'events' };
}

const cases: Case[] = [
  {
    name: 'openai-chat',
    server: () => openai,
    create: () => new OpenAIChat({ apiKey: TEST_KEY, baseURL: `${openai.url}/v1`, maxRetries: 0 }),
    cut: {
      kind: 'events',
      events: [{ data: openaiChunk({ role: 'assistant', content: 'The Eiffel' }, null) }, { data: openaiChunk({ content: ' tower is' }, null) }],
      end: 'close',
    },
    limited: {
      kind: 'events',
      events: [{ data: openaiChunk({ content: 'The Eiffel tower is' }, null) }, { data: openaiChunk({}, 'length') }, { data: '[DONE]' }],
      end: 'close',
    },
  },
  {
    name: 'cohere-chat',
    server: () => cohere,
    create: () => new CohereChat({ apiKey: TEST_KEY, baseURL: cohere.url, maxRetries: 0 }),
    cut: {
      kind: 'events',
      events: [
        cohereEvent('message-start', { id: 'c', delta: { message: { role: 'assistant' } } }),
        cohereEvent('content-delta', cohereText('The Eiffel tower is')),
      ],
      end: 'close',
    },
    limited: {
      kind: 'events',
      events: [cohereEvent('content-delta', cohereText('The Eiffel tower is')), cohereEvent('message-end', { delta: { finish_reason: 'MAX_TOKENS' } })],
      end: 'close',
    },
  },
];

function collect(chat: ChatProvider, finishes: ChatFinish[] = []): Promise<string> {
  return streamText(chat.stream(question, { onFinish: (finish) => finishes.push(finish) }));
}

describe.each(cases)('$name stream faults', ({ server, create, cut, limited }) => {
  it.each([
    ['HTML', 'text/html', '<html><body>Bad gateway</body></html>'],
    ['{}', 'application/json', '{}'],
    ['malformed JSON', 'application/json', '{"choices": [{"delta'],
    ['an empty body', 'text/event-stream', ''],
  ])('a 200 whose body is %s is PROVIDER_RESPONSE_INVALID', async (_label, contentType, body) => {
    server().failNext({ kind: 'raw', status: 200, contentType, body });
    const error = await rejectionOf(collect(create()));
    expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID' });
  });

  it('a complete stream reports a finish that is not truncated', async () => {
    const finishes: ChatFinish[] = [];
    expect(await collect(create(), finishes)).toBe('Echo: Where is the Eiffel tower?');
    expect(finishes).toEqual([expect.objectContaining({ truncated: false })]);
  });

  it('a stream that ends without its end event is reported truncated', async () => {
    server().failNext(cut);
    const finishes: ChatFinish[] = [];
    expect(await collect(create(), finishes)).toMatch(/^The Eiffel tower is/);
    expect(finishes).toEqual([expect.objectContaining({ truncated: true, reason: 'incomplete' })]);
  });

  it('a stream stopped by the token limit is reported truncated', async () => {
    server().failNext(limited);
    const finishes: ChatFinish[] = [];
    expect(await collect(create(), finishes)).toBe('The Eiffel tower is');
    expect(finishes).toEqual([expect.objectContaining({ truncated: true, reason: 'length' })]);
  });

  it('a connection lost mid-stream says so, and does not blame the base URL', async () => {
    server().failNext({ ...cut, end: 'destroy' });
    const error = await rejectionOf(collect(create()));
    expect(error.message).toMatch(/mid-stream|middle of the stream/i);
    expect(error.message).not.toMatch(/base URL/);
    expect(error).toMatchObject({ code: 'PROVIDER_STREAM_INTERRUPTED' });
  });
});

describe('RAG.answer with a truncated stream', () => {
  class Pipeline extends RAG {
    readonly store = new MemoryStore();
    protected embeddings() {
      return new LocalHashEmbeddings();
    }
    protected vectorStore() {
      return this.store;
    }
    protected chat() {
      return new OpenAIChat({ apiKey: TEST_KEY, baseURL: `${openai.url}/v1`, maxRetries: 0 });
    }
  }

  it('flags the answer as truncated and warns in the trace', async () => {
    const rag = new Pipeline();
    await rag.addDocuments([{ content: 'The Eiffel tower is in Paris.' }]);
    openai.failNext(cases[0].limited);
    const answer = await rag.answer('Where is the Eiffel tower?');
    expect(answer.truncated).toBe(true);
    expect(JSON.stringify(answer.trace)).toMatch(/cut off/);
    const complete = await rag.answer('Where is the Eiffel tower?');
    expect(complete.truncated).toBeUndefined();
  });
});
