import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback HTTP server (127.0.0.1, a free port) for offline tests of remote providers. Each service server
 * (OpenAI, Cohere, Jina, LocalAI) supplies the routes that speak its real wire format and the shape of its
 * error bodies; this file supplies request recording and switchable failure modes.
 */

/** One request as the server received it. */
export interface RecordedRequest {
  method: string;
  path: string;
  /** The query string's parameters (`api-version`, `alt`), empty when there is none. */
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
}

/** What the next request(s) should meet instead of a normal answer. */
export type FailureMode =
  /** 401 with the service's error body, echoing the key it received (as OpenAI does, partly) to test redaction. */
  | { kind: 'unauthorized' }
  /** 429 with `Retry-After` set to `retryAfter` (seconds or an HTTP-date) when given. */
  | { kind: 'rate-limited'; retryAfter?: string }
  /** 500 with the service's error body. */
  | { kind: 'server-error'; status?: number }
  /** 200, `application/json`, and a body that is not JSON. */
  | { kind: 'malformed-json' }
  /** Answer normally, but only after `delayMs` (past the client's timeout). */
  | { kind: 'slow'; delayMs: number }
  /** Read the request, then destroy the socket without answering. */
  | { kind: 'reset' }
  /**
   * Answer with this status and a body made from the key the request presented, as a service that echoes it (to
   * test redaction on every path); a string is sent as plain text, anything else as JSON.
   */
  | { kind: 'echo-key'; status: number; body: (key: string) => unknown }
  /** Answer with this status and JSON body (wrong shapes, bad indices…). */
  | { kind: 'respond'; status?: number; body: unknown }
  /** Answer with this status, content type and raw body (HTML from a proxy, `{}` where a stream was asked for…). */
  | { kind: 'raw'; status?: number; contentType: string; body: string }
  /** Start an event stream, write these events, then end it normally (`close`) or destroy the socket mid-stream (`destroy`). */
  | { kind: 'events'; events: Array<{ event?: string; data: string }>; end: 'close' | 'destroy' }
  /** Start a 200 reply of this content type (NDJSON, say), write these chunks as they are, then end or destroy it. */
  | { kind: 'chunks'; contentType: string; chunks: string[]; end: 'close' | 'destroy' };

export interface Reply {
  json(status: number, body: unknown, headers?: Record<string, string>): void;
  /** Start a `text/event-stream` reply and write each event; `event:` lines are added when `event` is set. */
  sse(events: Array<{ event?: string; data: string }>, options?: { delayBetweenMs?: number }): Promise<void>;
  readonly response: ServerResponse;
}

export type RouteHandler = (request: RecordedRequest, reply: Reply) => void | Promise<void>;

export interface LoopbackServerOptions {
  /** Routes by `METHOD /path`, e.g. `POST /v1/embeddings`. */
  routes: Record<string, RouteHandler>;
  /** Routes whose path holds a name (`/v1beta/models/{model}:generateContent`): asked when no exact route matches. */
  route?: (method: string, path: string) => RouteHandler | undefined;
  /** The key a request presented, echoed by the 401 reply (to test redaction). @default the bearer token of `Authorization` */
  presentedKey?: (headers: IncomingMessage['headers']) => string;
  /** The service's error body for a status and message. */
  errorBody: (status: number, message: string) => unknown;
  /** Delay before every answer, in milliseconds (the benchmark's simulated model latency). @default 0 */
  latencyMs?: number;
}

export class LoopbackServer {
  readonly requests: RecordedRequest[] = [];
  readonly #server: Server;
  readonly #options: LoopbackServerOptions;
  readonly #failures: FailureMode[] = [];
  #url = '';

  private constructor(options: LoopbackServerOptions) {
    this.#options = options;
    this.#server = createServer((request, response) => {
      void this.#handle(request, response);
    });
  }

  /** Start a server listening on 127.0.0.1 and a free port. */
  static async start(options: LoopbackServerOptions): Promise<LoopbackServer> {
    const server = new LoopbackServer(options);
    await new Promise<void>((resolve) => server.#server.listen(0, '127.0.0.1', resolve));
    const address = server.#server.address() as AddressInfo;
    server.#url = `http://127.0.0.1:${address.port}`;
    return server;
  }

  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  get url(): string {
    return this.#url;
  }

  /** The next `times` requests meet `mode`, in the order queued. */
  failNext(mode: FailureMode, times = 1): this {
    for (let count = 0; count < times; count++) this.#failures.push(mode);
    return this;
  }

  /** Forget recorded requests and queued failures. */
  reset(): void {
    this.requests.length = 0;
    this.#failures.length = 0;
  }

  /** Requests to one path, in arrival order. */
  requestsTo(path: string): RecordedRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #presentedKey(incoming: IncomingMessage): string {
    return this.#options.presentedKey?.(incoming.headers) ?? String(incoming.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
  }

  async #handle(incoming: IncomingMessage, response: ServerResponse): Promise<void> {
    const text = await readBody(incoming);
    const [path, search = ''] = (incoming.url ?? '/').split('?');
    const query = Object.fromEntries(new URLSearchParams(search));
    const recorded: RecordedRequest = { method: incoming.method ?? 'GET', path, query, headers: { ...incoming.headers }, body: parseJson(text) };
    this.requests.push(recorded);
    const reply = makeReply(response);
    const { errorBody } = this.#options;
    const failure = this.#failures.shift();
    if (this.#options.latencyMs) await delay(this.#options.latencyMs);
    switch (failure?.kind) {
      case 'unauthorized':
        reply.json(401, errorBody(401, `Incorrect API key provided: ${this.#presentedKey(incoming)}.`));
        return;
      case 'echo-key': {
        const body = failure.body(this.#presentedKey(incoming));
        if (typeof body !== 'string') return reply.json(failure.status, body);
        response.writeHead(failure.status, { 'content-type': 'text/plain' });
        response.end(body);
        return;
      }
      case 'rate-limited':
        reply.json(
          429,
          errorBody(429, 'Rate limit reached. Please try again later.'),
          failure.retryAfter === undefined ? {} : { 'retry-after': failure.retryAfter },
        );
        return;
      case 'server-error': {
        const status = failure.status ?? 500;
        reply.json(status, errorBody(status, 'The server had an error while processing your request.'));
        return;
      }
      case 'malformed-json':
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"data": [{"index": 0, "embedd');
        return;
      case 'reset':
        incoming.socket.destroy();
        return;
      case 'respond':
        reply.json(failure.status ?? 200, failure.body);
        return;
      case 'raw':
        response.writeHead(failure.status ?? 200, { 'content-type': failure.contentType });
        response.end(failure.body);
        return;
      case 'events': {
        response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (const { event, data } of failure.events) response.write(`${event ? `event: ${event}\n` : ''}data: ${data}\n\n`);
        if (failure.end === 'destroy') await new Promise<void>((resolve) => response.write('', () => resolve())).then(() => incoming.socket.destroy());
        else response.end();
        return;
      }
      case 'chunks': {
        response.writeHead(200, { 'content-type': failure.contentType });
        for (const chunk of failure.chunks) response.write(chunk);
        if (failure.end === 'destroy') await new Promise<void>((resolve) => response.write('', () => resolve())).then(() => incoming.socket.destroy());
        else response.end();
        return;
      }
      case 'slow':
        await delay(failure.delayMs);
        if (response.destroyed || incoming.socket.destroyed) return;
        break;
      default:
        break;
    }
    const route = this.#options.routes[`${recorded.method} ${path}`] ?? this.#options.route?.(recorded.method, path);
    if (!route) {
      reply.json(404, errorBody(404, `No route for ${recorded.method} ${path}.`));
      return;
    }
    try {
      await route(recorded, reply);
    } catch (error) {
      if (!response.headersSent) reply.json(500, errorBody(500, error instanceof Error ? error.message : String(error)));
    }
  }
}

/** Lowercased word tokens; the fake models below work on these. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * A deterministic stand-in for an embedding model: a bag of words hashed into `dimensions` buckets,
 * L2-normalised, so texts sharing words are close. Text without words maps to the first axis.
 */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of words(text)) {
    let hash = 2166136261;
    for (let index = 0; index < word.length; index++) hash = Math.imul(hash ^ word.charCodeAt(index), 16777619) >>> 0;
    vector[hash % dimensions] += 1;
  }
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
  if (norm === 0) {
    vector[0] = 1;
    return vector;
  }
  return vector.map((value) => value / norm);
}

/**
 * A deterministic stand-in for a reranking model: the share of the query's distinct words that occur in the
 * document, in [0, 1]. Returns `{index, score}` best first (ties by index), cut to `topN`.
 */
export function fakeRerank(query: string, documents: string[], topN: number | undefined): Array<{ index: number; score: number }> {
  const queryWords = new Set(words(query));
  const scored = documents.map((document, index) => {
    const documentWords = new Set(words(document));
    let shared = 0;
    for (const word of queryWords) if (documentWords.has(word)) shared++;
    return { index, score: queryWords.size === 0 ? 0 : shared / queryWords.size };
  });
  scored.sort((left, right) => right.score - left.score || left.index - right.index);
  return scored.slice(0, topN ?? scored.length);
}

/** The fake chat model's reply: it repeats the last user message. */
export function fakeReply(messages: Array<{ role?: unknown; content?: unknown }>): string {
  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  return `Echo: ${typeof lastUser?.content === 'string' ? lastUser.content : ''}`;
}

/** Split a reply into stream deltas of a few characters, keeping every character. */
export function deltasOf(text: string, size = 7): string[] {
  const deltas: string[] = [];
  for (let start = 0; start < text.length; start += size) deltas.push(text.slice(start, start + size));
  return deltas;
}

// --- Internal helpers ---

function makeReply(response: ServerResponse): Reply {
  return {
    response,
    json(status, body, headers = {}) {
      if (response.destroyed) return;
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(JSON.stringify(body));
    },
    async sse(events, options = {}) {
      if (response.destroyed) return;
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      for (const event of events) {
        if (response.destroyed) return;
        response.write(`${event.event ? `event: ${event.event}\n` : ''}data: ${event.data}\n\n`);
        if (options.delayBetweenMs) await delay(options.delayBetweenMs);
      }
      response.end();
    },
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    request.on('error', () => resolve(Buffer.concat(parts).toString('utf8')));
  });
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
