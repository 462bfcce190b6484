/**
 * Nothing Axon configures writes to the console (issue 13: D13). The `cohere-ai` SDK printed "Failed to validate …
 * Received "<response text>"" through `console.warn` for every response its own schema rejected, whatever its
 * logging setting. Each Cohere adapter is sent malformed bodies that carry a marker and the echoed key; the call
 * must fail with Axon's typed error, and not one byte may reach stdout, stderr or the console.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CohereChat } from '../../../providers/cohere/cohere-chat.ts';
import { CohereEmbeddings } from '../../../providers/cohere/cohere-embeddings.ts';
import { CohereRerankModel } from '../../../providers/cohere/cohere-rerank.ts';
import { captureConsoleOutput } from '../../helpers/console-capture.ts';
import { expectNoSecret, rejectionOf, streamText, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import { startCohereServer } from '../../servers/cohere-server.ts';
import type { FailureMode, LoopbackServer } from '../../servers/loopback-server.ts';

const MARKER = 'MARKER-d13-response-text';
const ECHO = `${MARKER} ${TEST_KEY}`;

let server: LoopbackServer;
beforeAll(async () => {
  server = await startCohereServer();
});
afterAll(() => server.close());

/** Everything written to the process's output or through the console while a test runs. */
const output = captureConsoleOutput();

const transport = { apiKey: TEST_KEY, baseURL: '', maxRetries: 0 };
const connect = () => ({ ...transport, baseURL: server.url });

const cohereEvent = (type: string, payload: Record<string, unknown>) => ({ event: type, data: JSON.stringify({ type, ...payload }) });

const cases: Array<[string, FailureMode, () => Promise<unknown>]> = [
  [
    'rerank: index and score are strings',
    { kind: 'respond', body: { id: ECHO, results: [{ index: ECHO, relevance_score: ECHO }], meta: { api_version: { version: ECHO } } } },
    () => new CohereRerankModel(connect()).rerank('q', ['a', 'b'], { topN: 2 }),
  ],
  ['rerank: results is a string', { kind: 'respond', body: { results: ECHO } }, () => new CohereRerankModel(connect()).rerank('q', ['a'], { topN: 1 })],
  [
    'embed: a vector component is a string',
    { kind: 'respond', body: { id: 'x', embeddings: { float: [[ECHO, 0.5]] }, texts: ['hi'], response_type: 'embeddings_by_type' } },
    () => new CohereEmbeddings({ ...connect(), model: 'embed-test' }).embed(['hi'], { inputType: 'query' }),
  ],
  [
    'embed: embeddings is a string',
    { kind: 'respond', body: { id: 'x', embeddings: ECHO } },
    () => new CohereEmbeddings({ ...connect(), model: 'embed-test' }).embed(['hi'], { inputType: 'document' }),
  ],
  [
    'chat: message is a string',
    { kind: 'respond', body: { id: 'x', finish_reason: ECHO, message: ECHO } },
    () => new CohereChat(connect()).complete([{ role: 'user', content: 'hi' }]),
  ],
  [
    'chat: a content part has a numeric text and an unknown type',
    { kind: 'respond', body: { id: 'x', finish_reason: 'COMPLETE', message: { role: ECHO, content: ECHO } } },
    () => new CohereChat(connect()).complete([{ role: 'user', content: 'hi' }]),
  ],
  // Each stream fails on its last event (a stream stops at the first bad one, so each shape gets its own case; an
  // event of an unknown type is skipped, as Cohere may add types, so it is no case here).
  ...(
    [
      ['a content delta whose text is a number', cohereEvent('content-delta', { index: ECHO, delta: { message: { content: { text: 7 } } } })],
      ['an event that is a JSON string', { event: 'content-delta', data: JSON.stringify(ECHO) }],
    ] as const
  ).map(([label, event]): [string, FailureMode, () => Promise<unknown>] => [
    `chat stream: ${label}`,
    { kind: 'events', events: [cohereEvent('message-start', { id: ECHO, delta: ECHO }), event], end: 'close' },
    () => streamText(new CohereChat(connect()).stream([{ role: 'user', content: 'hi' }])),
  ]),
];

describe('Cohere adapters write nothing to the console, whatever the response', () => {
  it.each(cases)('%s: PROVIDER_RESPONSE_INVALID, no key in it, nothing printed', async (_label, fault, call) => {
    server.reset();
    server.failNext(fault);
    const error = await rejectionOf(call());
    expect(output.lines).toEqual([]);
    expect(error).toMatchObject({ name: 'ProviderError', code: 'PROVIDER_RESPONSE_INVALID', status: 200 });
    expect((error as { component?: string }).component).toMatch(/^cohere-(rerank|embeddings|chat)$/);
    expect(error.message).toMatch(/\[axon\] \[cohere-(rerank|embeddings|chat)\] Invalid response from the service/);
    expect(error.message).not.toContain(MARKER);
    expectNoSecret(error);
  });

  it('the spies see a write: the check can fail', () => {
    console.warn(`Failed to validate. Received "${MARKER}"`);
    process.stderr.write('x');
    expect(output.lines).toHaveLength(2);
  });
});
