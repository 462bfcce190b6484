/**
 * Secrets property suite (issue 13): every error an adapter raises, for every fault mode the loopback servers
 * know and for random response bodies that echo the key, is searched for the key in `message`, `String(e)`,
 * `JSON.stringify(e)`, `util.inspect(e, { depth: Infinity })`, the stack and the cause chain.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CohereChat } from '../../providers/cohere/cohere-chat.ts';
import { CohereEmbeddings } from '../../providers/cohere/cohere-embeddings.ts';
import { CohereRerankModel } from '../../providers/cohere/cohere-rerank.ts';
import { JinaEmbeddings } from '../../providers/jina/jina-embeddings.ts';
import { JinaRerankModel } from '../../providers/jina/jina-rerank.ts';
import { OpenAIChat } from '../../providers/openai/openai-chat.ts';
import { OpenAIEmbeddings } from '../../providers/openai/openai-embeddings.ts';
import { expectNoSecret } from '../helpers/provider-test-helpers.ts';
import { propertyRuns } from '../helpers/property.ts';
import { startCohereServer } from '../servers/cohere-server.ts';
import { startJinaServer } from '../servers/jina-server.ts';
import type { FailureMode, LoopbackServer } from '../servers/loopback-server.ts';
import { startOpenAIServer } from '../servers/openai-server.ts';

/** Short, as the probe's was: an 18-character key fits in a 19-character quote. */
const KEY = 'sk-short-key-12345';
let openai: LoopbackServer;
let cohere: LoopbackServer;
let jina: LoopbackServer;
beforeAll(async () => {
  [openai, cohere, jina] = await Promise.all([startOpenAIServer(), startCohereServer(), startJinaServer()]);
});
afterAll(async () => {
  await Promise.all([openai.close(), cohere.close(), jina.close()]);
});

const transport = { apiKey: KEY, maxRetries: 0, timeoutMs: 250 };
const question = [{ role: 'user' as const, content: 'hi' }];
const query = { inputType: 'query' as const };
async function drain(stream: AsyncIterable<string>): Promise<void> {
  for await (const _delta of stream);
}

const adapters: [string, () => LoopbackServer, () => Promise<unknown>][] = [
  ['openai-chat complete', () => openai, () => new OpenAIChat({ ...transport, baseURL: `${openai.url}/v1` }).complete(question)],
  ['openai-chat stream', () => openai, () => drain(new OpenAIChat({ ...transport, baseURL: `${openai.url}/v1` }).stream(question))],
  ['openai-embeddings', () => openai, () => new OpenAIEmbeddings({ ...transport, baseURL: `${openai.url}/v1` }).embed(['hi'], query)],
  ['cohere-chat complete', () => cohere, () => new CohereChat({ ...transport, baseURL: cohere.url }).complete(question)],
  ['cohere-chat stream', () => cohere, () => drain(new CohereChat({ ...transport, baseURL: cohere.url }).stream(question))],
  ['cohere-embeddings', () => cohere, () => new CohereEmbeddings({ ...transport, baseURL: cohere.url, model: 'embed-test' }).embed(['hi'], query)],
  ['cohere-rerank', () => cohere, () => new CohereRerankModel({ ...transport, baseURL: cohere.url }).rerank('q', ['a', 'b'], { topN: 2 })],
  ['jina-embeddings', () => jina, () => new JinaEmbeddings({ ...transport, baseURL: jina.url }).embed(['hi'], query)],
  ['jina-rerank', () => jina, () => new JinaRerankModel({ ...transport, baseURL: jina.url }).rerank('q', ['a', 'b'], { topN: 2 })],
];

const FAULTS: FailureMode[] = [
  { kind: 'unauthorized' },
  { kind: 'rate-limited', retryAfter: '1' },
  { kind: 'server-error', status: 500 },
  { kind: 'server-error', status: 503 },
  { kind: 'malformed-json' },
  { kind: 'slow', delayMs: 1000 },
  { kind: 'reset' },
  { kind: 'respond', status: 400, body: { error: { message: `Invalid key ${KEY}` }, message: `Invalid key ${KEY}` } },
  {
    kind: 'respond',
    status: 200,
    body: {
      data: [{ index: 0, embedding: [KEY] }],
      embeddings: { float: [[KEY]] },
      results: [{ index: KEY, relevance_score: KEY }],
      choices: [{ message: { content: null } }],
      message: KEY,
    },
  },
  { kind: 'raw', status: 200, contentType: 'text/html', body: `<html>${KEY}</html>` },
  { kind: 'raw', status: 502, contentType: 'text/plain', body: `upstream said ${KEY}` },
  { kind: 'events', events: [{ data: KEY }, { event: 'content-delta', data: `{"type":"content-delta","delta":${JSON.stringify(KEY)}}` }], end: 'destroy' },
];

async function errorOf(call: () => Promise<unknown>): Promise<unknown> {
  try {
    await call();
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('no key in any error an adapter raises', () => {
  describe.each(adapters)('%s', (_name, server, call) => {
    const labelled = FAULTS.map((fault) => [`${fault.kind}${'status' in fault && fault.status ? ` ${fault.status}` : ''}`, fault] as const);
    it.each(labelled)('%s', async (_label, fault) => {
      server().failNext(fault);
      const error = await errorOf(call);
      // Some faults are a valid (if odd) answer for some adapters; a rejection is what must hold no key.
      if (error !== undefined) expectNoSecret(error, KEY);
    });
  });

  it('property: random response bodies that echo the key, in any field, never put it in an error', async () => {
    const around = fc.string({ maxLength: 4 });
    const echo = fc.oneof(
      fc.constant(KEY),
      around.map((text) => `${text}${KEY}`),
      around.map((text) => `${KEY}${text}`),
    );
    const value = fc.oneof(echo, fc.integer(), fc.double(), fc.constant(null), fc.boolean(), fc.array(echo, { maxLength: 2 }));
    const body = fc.oneof(
      fc.record({ data: fc.array(fc.record({ index: value, embedding: fc.array(value, { maxLength: 3 }) }), { maxLength: 2 }) }),
      fc.record({ embeddings: fc.record({ float: fc.array(fc.array(value, { maxLength: 3 }), { maxLength: 2 }) }) }),
      fc.record({ results: fc.array(fc.record({ index: value, relevance_score: value }), { maxLength: 3 }) }),
      fc.record({ choices: fc.array(fc.record({ message: fc.record({ content: value }) }), { maxLength: 1 }) }),
      fc.record({ message: fc.record({ content: fc.array(fc.record({ type: fc.constant('text'), text: value }), { maxLength: 1 }) }) }),
      fc.record({ error: fc.record({ message: echo }), message: echo, detail: echo }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...adapters), fc.constantFrom(200, 400, 404, 422, 500), body, async ([, server, call], status, json) => {
        server().failNext({ kind: 'respond', status, body: json });
        const error = await errorOf(call);
        if (error !== undefined) expectNoSecret(error, KEY);
      }),
      propertyRuns(60),
    );
  });
});

it('the suite can fail: an error that holds the key is caught', () => {
  expect(() => expectNoSecret(new Error('x', { cause: new Error(`deep ${KEY}`) }), KEY)).toThrow();
});
