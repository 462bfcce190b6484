import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient, httpUrlProblem, httpUrlSchema, joinUrl, request, streamRequest } from '../../src/runtime/http.ts';
import { RetryPolicy } from '../../src/runtime/retry.ts';
import { Secret } from '../../src/runtime/secret.ts';
import { expectNoSecret, recordingRetryPolicy, rejectionOf, TEST_KEY } from '../helpers/provider-test-helpers.ts';
import { LoopbackServer } from '../servers/loopback-server.ts';

let server: LoopbackServer;
beforeAll(async () => {
  server = await LoopbackServer.start({
    errorBody: (_status, message) => ({ error: { message } }),
    routes: {
      'POST /api/echo': (recorded, reply) => reply.json(200, { received: recorded.body }),
      'POST /api/events': (recorded, reply) => reply.sse([{ event: 'first', data: JSON.stringify(recorded.body) }, { data: 'second' }]),
      'POST /api/text': (_recorded, reply) => {
        reply.response.writeHead(500, { 'content-type': 'text/plain' });
        reply.response.end('upstream exploded');
      },
    },
  });
});
afterAll(() => server.close());

const client = (retry: RetryPolicy = new RetryPolicy({ maxRetries: 0 }), timeoutMs = 2000) =>
  new HttpClient({ provider: 'test-http', baseURL: `${server.url}/api/`, apiKey: new Secret(TEST_KEY), keyFix: 'Check TEST_KEY.', timeoutMs, retry });

describe('HttpClient', () => {
  it('posts JSON with a bearer key and returns the parsed reply and status', async () => {
    server.reset();
    const response = await client().postJson('/echo', { a: 1 });
    expect(response).toEqual({ status: 200, body: { received: { a: 1 } } });
    expect(server.requests[0].headers['content-type']).toBe('application/json');
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${TEST_KEY}`);
  });

  it('uses a plain-text error body as the server message', async () => {
    const error = await rejectionOf(client().postJson('text', {}));
    expect(error.message).toBe(
      '[axon] [test-http] The service failed: upstream exploded (HTTP 500) Axon retried with backoff; try again later or raise maxRetries.',
    );
  });

  it('uses the injected fetch', async () => {
    const calls: string[] = [];
    const http = new HttpClient({
      provider: 'test-http',
      baseURL: 'https://example.invalid/v1',
      timeoutMs: 1000,
      retry: new RetryPolicy({ maxRetries: 0 }),
      fetch: async (input) => {
        calls.push(String(input));
        return new Response('{"ok":true}', { status: 200 });
      },
    });
    expect((await http.postJson('rerank', {})).body).toEqual({ ok: true });
    expect(calls).toEqual(['https://example.invalid/v1/rerank']);
  });

  it('keeps the key out of errors from every failure mode', async () => {
    for (const mode of [{ kind: 'unauthorized' }, { kind: 'malformed-json' }, { kind: 'reset' }, { kind: 'server-error' }] as const) {
      server.reset();
      server.failNext(mode);
      const error = await rejectionOf(client().postJson('echo', { a: 1 }));
      expectNoSecret(error);
    }
    expectNoSecret(client());
  });

  it('retries a timed-out attempt and succeeds on the next', async () => {
    server.reset();
    server.failNext({ kind: 'slow', delayMs: 10_000 });
    const { policy, sleeps } = recordingRetryPolicy({ maxRetries: 1 });
    // A generous limit, so the healthy second attempt fits even on a busy machine.
    const response = await client(policy, 1000).postJson('echo', { a: 2 });
    expect(response.body).toEqual({ received: { a: 2 } });
    expect(sleeps).toEqual([250]);
  });
});

describe('HttpClient.postEventStream', () => {
  async function collect(events: AsyncIterable<unknown>): Promise<unknown[]> {
    const all: unknown[] = [];
    for await (const event of events) all.push(event);
    return all;
  }

  it('posts JSON asking for an event stream and yields its events', async () => {
    server.reset();
    expect(await collect(client().postEventStream('events', { a: 1 }))).toEqual([{ event: 'first', data: '{"a":1}' }, { data: 'second' }]);
    expect(server.requests[0].headers.accept).toBe('text/event-stream');
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${TEST_KEY}`);
  });

  it('maps a status before the stream as postJson does, retries what may be retried, and keeps the key out', async () => {
    server.reset();
    server.failNext({ kind: 'server-error', status: 503 });
    const { policy, sleeps } = recordingRetryPolicy({ maxRetries: 1 });
    expect(await collect(client(policy).postEventStream('events', {}))).toHaveLength(2);
    expect(sleeps).toHaveLength(1);
    server.failNext({ kind: 'unauthorized' });
    const error = await rejectionOf(collect(client().postEventStream('events', {})));
    expect(error).toMatchObject({ status: 401, code: 'PROVIDER_AUTH_FAILED' });
    expect(error.message).toContain('[redacted]');
    expectNoSecret(error);
  });

  it('says a connection lost after the first event cut the reply', async () => {
    server.failNext({ kind: 'events', events: [{ data: 'one' }], end: 'destroy' });
    const error = await rejectionOf(collect(client().postEventStream('events', {})));
    expect(error.message).toMatch(/mid-stream/);
  });
});

describe('request and streamRequest', () => {
  const context = (signal?: AbortSignal) => ({ provider: 'test-stream', timeoutMs: 100, retry: new RetryPolicy({ maxRetries: 0 }), signal });

  it('passes a signal that fires when the time limit passes', async () => {
    const error = await rejectionOf(
      request(context(), (signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)))),
    );
    expect(error).toMatchObject({ code: 'PROVIDER_TIMEOUT' });
  });

  it('closes the source when the consumer leaves a stream early', async () => {
    let closed = false;
    let sourceSignal: AbortSignal | undefined;
    async function* source() {
      try {
        yield 'a';
        yield 'b';
        yield 'c';
      } finally {
        closed = true;
      }
    }
    for await (const item of streamRequest(context(), async (signal) => {
      sourceSignal = signal;
      return source();
    })) {
      expect(item).toBe('a');
      break;
    }
    expect(closed).toBe(true);
    expect(sourceSignal?.aborted).toBe(true);
  });

  it('applies the time limit to each item, not to the whole stream', async () => {
    async function* slowSource() {
      for (const item of ['a', 'b', 'c']) {
        await new Promise((resolve) => setTimeout(resolve, 350));
        yield item;
      }
    }
    const items: string[] = [];
    for await (const item of streamRequest({ ...context(), timeoutMs: 1000 }, async () => slowSource())) items.push(item);
    // Over a second in total, past the limit, but no single wait came near it.
    expect(items).toEqual(['a', 'b', 'c']);
  });
});

describe('helpers', () => {
  it('joins URLs with exactly one slash', () => {
    expect(joinUrl('http://h/v1/', '/rerank')).toBe('http://h/v1/rerank');
    expect(joinUrl('http://h', 'v1/rerank')).toBe('http://h/v1/rerank');
  });
});

describe('httpUrlSchema', () => {
  it('names the address to write when the scheme is missing, for a host name, a host:port and an address', () => {
    expect(httpUrlProblem('api.openai.com/v1')).toBe('"api.openai.com/v1" has no scheme: write "https://api.openai.com/v1"');
    expect(httpUrlProblem('localhost:8080')).toBe('"localhost:8080" has no scheme: write "http://localhost:8080"');
    expect(httpUrlProblem('127.0.0.1:11434/v1')).toBe('"127.0.0.1:11434/v1" has no scheme: write "http://127.0.0.1:11434/v1"');
    expect(httpUrlProblem('ftp://example.com')).toBe('must be an http:// or https:// URL, not ftp://');
    expect(httpUrlProblem('')).toMatch(/must be an http:\/\/ or https:\/\/ URL/);
  });

  it('accepts http and https URLs as written', () => {
    for (const url of ['http://localhost:8080', 'https://api.jina.ai/v1', 'http://[::1]:7000/v1', 'https://proxy.example/openai/']) {
      expect(httpUrlProblem(url)).toBeUndefined();
      expect(httpUrlSchema.parse(url)).toBe(url);
    }
  });

  it('reports through zod, so a configuration lists it at its path', () => {
    const result = httpUrlSchema.safeParse('localhost:8080');
    expect(result.success).toBe(false);
    expect(result.error?.issues[0].message).toBe('"localhost:8080" has no scheme: write "http://localhost:8080"');
  });
});
