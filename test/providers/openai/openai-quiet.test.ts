/**
 * Nothing Axon configures writes to the console (issue 13: D13). The `openai` SDK's stream reader printed the data
 * of a streamed event named `thread.…` that was not JSON ("Could not parse message into JSON: <data>") through
 * `console.error`, whatever its `logLevel`. Each OpenAI call is sent malformed bodies (streamed and not) that carry
 * a marker and the echoed key; the call must fail with Axon's typed error, and not one byte may reach stdout,
 * stderr or the console.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAIChat } from '../../../providers/openai/openai-chat.ts';
import { OpenAIEmbeddings } from '../../../providers/openai/openai-embeddings.ts';
import { captureConsoleOutput } from '../../helpers/console-capture.ts';
import { expectNoSecret, rejectionOf, streamText, TEST_KEY } from '../../helpers/provider-test-helpers.ts';
import type { FailureMode, LoopbackServer } from '../../servers/loopback-server.ts';
import { startOpenAIServer } from '../../servers/openai-server.ts';

const MARKER = 'MARKER-d13-response-text';
const ECHO = `${MARKER} ${TEST_KEY}`;

let server: LoopbackServer;
beforeAll(async () => {
  server = await startOpenAIServer();
});
afterAll(() => server.close());

/** Everything written to the process's output or through the console while a test runs. */
const output = captureConsoleOutput();

const connect = () => ({ apiKey: TEST_KEY, baseURL: `${server.url}/v1`, maxRetries: 0 });
const question = [{ role: 'user' as const, content: 'hi' }];
const stream = () => streamText(new OpenAIChat(connect()).stream(question));
const complete = () => new OpenAIChat(connect()).complete(question);
const embed = (encodingFormat: 'float' | 'base64' = 'float') => new OpenAIEmbeddings({ ...connect(), encodingFormat }).embed(['hi'], { inputType: 'query' });

const chunk = (choices: unknown) => JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices });
const events = (list: Array<{ event?: string; data: string }>): FailureMode => ({ kind: 'events', events: list, end: 'close' });

/** Replies that are no valid answer: each must be PROVIDER_RESPONSE_INVALID (status 200), and nothing printed. */
const invalid: Array<[string, FailureMode, () => Promise<unknown>]> = [
  ['stream: an event named thread.… whose data is not JSON', events([{ event: 'thread.message.delta', data: ECHO }]), stream],
  [
    'stream: a thread.… event after the first delta',
    events([{ data: chunk([{ index: 0, delta: { content: 'Hel' }, finish_reason: null }]) }, { event: 'thread.run.step', data: `{${ECHO}` }]),
    stream,
  ],
  ['stream: an unnamed event whose data is not JSON', events([{ data: ECHO }]), stream],
  ['stream: an event named error whose data is not JSON', events([{ event: 'error', data: ECHO }]), stream],
  ['stream: a chunk whose choices is a string', events([{ data: JSON.stringify({ id: ECHO, choices: ECHO }) }]), stream],
  ['stream: a chunk that is a JSON string', events([{ data: JSON.stringify(ECHO) }]), stream],
  ['stream: a delta whose content is an object', events([{ data: chunk([{ index: 0, delta: { content: { text: ECHO } }, finish_reason: null }]) }]), stream],
  ['complete: choices is a string', { kind: 'respond', body: { id: ECHO, choices: ECHO } }, complete],
  ['complete: the content is a number', { kind: 'respond', body: { choices: [{ message: { role: ECHO, content: 7 } }] } }, complete],
  ['complete: an HTML page', { kind: 'raw', contentType: 'text/html', body: `<html>${ECHO}</html>` }, complete],
  ['complete: an event stream where JSON was asked', { kind: 'raw', contentType: 'text/event-stream', body: `event: thread.x\ndata: ${ECHO}\n\n` }, complete],
  ['embeddings: data is a string', { kind: 'respond', body: { object: 'list', data: ECHO } }, () => embed()],
  ['embeddings: a vector component is a string', { kind: 'respond', body: { data: [{ index: 0, embedding: [ECHO, 0.5] }] } }, () => embed()],
  ['embeddings: base64 that is no vector', { kind: 'respond', body: { data: [{ index: 0, embedding: ECHO }] } }, () => embed('base64')],
  ['embeddings: an HTML page', { kind: 'raw', contentType: 'text/html', body: `<html>${ECHO}</html>` }, () => embed()],
];

/** Bodies cut inside their JSON: PROVIDER_RESPONSE_INVALID; the SDK parses them, so the status is not always known. */
const unparsable: Array<[string, FailureMode, () => Promise<unknown>]> = [
  ['complete: JSON cut off', { kind: 'raw', contentType: 'application/json', body: `{"choices": [{"message": {"content": "${ECHO}` }, complete],
  ['complete: JSON with an odd media type', { kind: 'raw', contentType: 'application/vnd.x+json; charset=utf-8', body: `{"x": ${ECHO}}` }, complete],
  ['embeddings: JSON cut off', { kind: 'raw', contentType: 'application/json', body: `{"data": [{"embedding": "${ECHO}` }, () => embed()],
];

function expectInvalid(error: Error & { code?: string }): void {
  expect(error).toMatchObject({ name: 'ProviderError', code: 'PROVIDER_RESPONSE_INVALID' });
  expect((error as { component?: string }).component).toMatch(/^openai-(chat|embeddings)$/);
  expect(error.message).toMatch(/\[axon\] \[openai-(chat|embeddings)\] Invalid response from the service/);
  expect(error.message).not.toContain(MARKER);
  expectNoSecret(error);
}

describe('OpenAI adapters write nothing to the console, whatever the response', () => {
  it.each(invalid)('%s: PROVIDER_RESPONSE_INVALID, no key in it, nothing printed', async (_label, fault, call) => {
    server.reset();
    server.failNext(fault);
    const error = await rejectionOf(call());
    expect(output.lines).toEqual([]);
    expectInvalid(error);
    expect(error).toMatchObject({ status: 200 });
  });

  it.each(unparsable)('%s: PROVIDER_RESPONSE_INVALID, no key in it, nothing printed', async (_label, fault, call) => {
    server.reset();
    server.failNext(fault);
    const error = await rejectionOf(call());
    expect(output.lines).toEqual([]);
    expectInvalid(error);
  });

  it.each([
    ['an error object', { data: JSON.stringify({ error: { message: `The model is overloaded: ${ECHO}`, type: 'server_error' } }) }],
    ['an event named error', { event: 'error', data: JSON.stringify({ message: `The model is overloaded: ${ECHO}` }) }],
  ])('stream: %s in the stream is a ProviderError with the service message, the key redacted, nothing printed', async (_label, event) => {
    server.reset();
    server.failNext(events([{ data: chunk([{ index: 0, delta: { content: 'Hel' }, finish_reason: null }]) }, event]));
    const error = await rejectionOf(stream());
    expect(output.lines).toEqual([]);
    expect(error).toMatchObject({ name: 'ProviderError', code: 'PROVIDER_ERROR' });
    expect(error.message).toContain('The model is overloaded');
    expectNoSecret(error);
  });

  it('odd response headers on a good reply change nothing and print nothing', async () => {
    server.reset();
    const body = { id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }] };
    const fetchWithHeaders: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const headers = new Headers(response.headers);
      for (const [name, value] of [
        ['x-request-id', ECHO],
        ['openai-processing-ms', ECHO],
        ['x-should-retry', ECHO],
        ['retry-after-ms', ECHO],
        ['x-ratelimit-remaining-requests', ECHO],
      ])
        headers.set(name, value);
      return new Response(response.body, { status: response.status, headers });
    };
    server.failNext({ kind: 'respond', body });
    expect(await new OpenAIChat({ ...connect(), fetch: fetchWithHeaders }).complete(question)).toBe('fine');
    expect(await streamText(new OpenAIChat({ ...connect(), fetch: fetchWithHeaders }).stream(question))).toBe('Echo: hi');
    expect(output.lines).toEqual([]);
  });

  it('the spies see a write: the check can fail', () => {
    console.error('Could not parse message into JSON:', MARKER);
    process.stderr.write('x');
    expect(output.lines).toHaveLength(2);
  });
});
