/**
 * Requests under the shared policy (`request`, `streamRequest`: a time limit per attempt, the caller's signal,
 * retries) and `HttpClient`, the JSON-over-fetch client of the adapters without an SDK. The transport options
 * every adapter accepts are in `transport-options.ts`; the mapping of failures to errors in `http-errors.ts`.
 * Both are re-exported here, so adapters import one module.
 */
import { z } from 'zod';
import { abortError, AxonError, type ProviderError } from '../errors.ts';
import {
  invalidResponseError,
  messageFromErrorBody,
  networkError,
  retryAfterFromHeaders,
  type StatusErrorDetails,
  statusError,
  streamInterruptedError,
  timeoutError,
} from './http-errors.ts';
import type { RetryPolicy } from './retry.ts';
import type { Secret } from './secret.ts';
import { readJsonLines } from './json-lines.ts';
import { readServerSentEvents, type ServerSentEvent } from './server-sent-events.ts';

export { fetchFunctionSchema, retryPolicyFrom, transportOptionsShape } from './transport-options.ts';
export type { ServerSentEvent } from './server-sent-events.ts';
export {
  cleanServerMessage,
  invalidResponseError,
  isRetryableStatus,
  messageFromErrorBody,
  networkError,
  networkReason,
  providerCodeOfStatus,
  requestFailedError,
  retryAfterFromHeaders,
  statusError,
  streamedServiceError,
  streamedStatusError,
  streamInterruptedError,
  timeoutError,
  type StatusErrorDetails,
} from './http-errors.ts';

/** What `request` and `streamRequest` need to know about the caller. */
export interface RequestContext {
  /** The component named in errors, e.g. `jina-rerank`. */
  provider: string;
  timeoutMs: number;
  retry: RetryPolicy;
  /** The caller's cancellation signal. */
  signal?: AbortSignal;
  /** Turn a failure that is neither a timeout nor a cancellation into a `ProviderError` (SDK errors, network errors). */
  describeError?: (error: unknown) => ProviderError;
}

/**
 * Run one remote call under the shared policy: each attempt gets a signal that fires on the caller's abort or
 * after `timeoutMs` (`AbortSignal.any`), failures become `ProviderError`s, and transient ones are retried.
 *
 * @throws AxonError `ABORTED` when the caller cancels; `ProviderError` otherwise.
 */
export async function request<T>(context: RequestContext, attempt: (signal: AbortSignal) => Promise<T>): Promise<T> {
  return context.retry.run(
    async () => {
      const deadline = new AttemptDeadline(context.timeoutMs, context.signal);
      try {
        return await attempt(deadline.signal);
      } catch (error) {
        throw classifyFailure(error, context, deadline);
      } finally {
        deadline.dispose();
      }
    },
    { component: context.provider, signal: context.signal },
  );
}

/**
 * Open a streamed reply under the shared policy and yield its items. Opening is retried like `request`;
 * once the first item has been received nothing is retried (it would repeat text the caller already has).
 * The timeout applies to the wait for each item. Leaving the loop early closes the connection.
 */
export async function* streamRequest<T>(context: RequestContext, open: (signal: AbortSignal) => Promise<AsyncIterable<T>>): AsyncGenerator<T> {
  // The deadline of the attempt that opened the stream goes on to time each item.
  const { iterable, deadline: current } = await context.retry.run(
    async () => {
      const deadline = new AttemptDeadline(context.timeoutMs, context.signal);
      try {
        return { iterable: await open(deadline.signal), deadline };
      } catch (error) {
        deadline.dispose();
        throw classifyFailure(error, context, deadline);
      }
    },
    { component: context.provider, signal: context.signal },
  );
  const iterator = iterable[Symbol.asyncIterator]();
  let finished = false;
  let received = 0;
  try {
    while (true) {
      current.restart();
      let next: IteratorResult<T>;
      try {
        next = await iterator.next();
      } catch (error) {
        finished = true;
        const failure = classifyFailure(error, context, current);
        // A connection lost once the reply has begun is no wrong address: say the reply was cut, not "check the base URL".
        const interrupted = received > 0 && !context.signal?.aborted && !current.timedOut && !AxonError.isInstance(error);
        throw interrupted ? streamInterruptedError(context.provider, received, error) : failure;
      }
      received++;
      current.pause();
      if (next.done) {
        finished = true;
        // Some SDK streams end quietly when their signal fires; an end caused by a timeout or a cancellation is a failure.
        if (context.signal?.aborted || current.timedOut) throw classifyFailure(undefined, context, current);
        return;
      }
      yield next.value;
    }
  } finally {
    current.dispose();
    if (!finished) {
      // The caller stopped early: close the connection rather than let the server keep generating.
      current.cancel();
      await iterator.return?.().catch(() => undefined);
    }
  }
}

export interface HttpClientOptions {
  /** Component named in errors, e.g. `jina-rerank`. */
  provider: string;
  /** Prefix of every path, e.g. `https://api.jina.ai/v1`. */
  baseURL: string;
  /** Sent as `Authorization: Bearer …`; left out when undefined. */
  apiKey?: Secret;
  /** The fix shown on 401/403, e.g. `Check the key passed as apiKey or set in JINA_API_KEY.` */
  keyFix?: string;
  /** Further headers sent with every request (e.g. OpenAI's `OpenAI-Organization`). */
  headers?: Record<string, string>;
  /** The header that carries the key as it is (`x-api-key`, `api-key`, `x-goog-api-key`) instead of `Authorization: Bearer …`. */
  apiKeyHeader?: string;
  /** Query parameters added to every URL (Azure OpenAI's `api-version`). */
  query?: Record<string, string>;
  /**
   * The service's own reading of a non-2xx reply (its error body's types, its overload status), given the parsed
   * body and what Axon read from the reply. @default `statusError`
   */
  describeStatus?: (status: number, body: unknown, details: StatusErrorDetails) => ProviderError;
  timeoutMs: number;
  retry: RetryPolicy;
  fetch?: typeof fetch;
}

/** Options of one streamed request. */
export interface StreamRequestOptions {
  signal?: AbortSignal;
  /**
   * Called on each item read while the stream is opening, until it returns true (the reply has begun). What it
   * throws fails the opening attempt, which is retried when the error is retryable (a service that reports an
   * overload as the first event of a 200 reply); the items read meanwhile are yielded first, in order.
   */
  openedBy?: (item: ServerSentEvent | string) => boolean;
}

/** The body of a successful response, already parsed, and its status. */
export interface JsonResponse {
  status: number;
  body: unknown;
}

/**
 * The JSON-over-fetch client of every provider spoken to without an SDK (Cohere, Jina, LocalAI, …): each provider
 * builds one in its `connect…` function and calls it directly. Everything about retries (honouring
 * `Retry-After`), timeouts, cancellation and error mapping is delegated to `request` and `streamRequest`.
 */
export class HttpClient {
  /** The prefix of every path, without a trailing slash. */
  readonly baseURL: string;
  readonly #options: HttpClientOptions;

  constructor(options: HttpClientOptions) {
    this.#options = options;
    this.baseURL = options.baseURL.replace(/\/+$/, '');
  }

  /**
   * POST `body` as JSON to `{baseURL}{path}` and parse the JSON reply.
   *
   * @throws ProviderError with the HTTP status: 401/403 (check the key), 429 (rate limited, retried), 5xx
   * (retried), `PROVIDER_RESPONSE_INVALID` for a body that is not JSON, `PROVIDER_TIMEOUT` after `timeoutMs`.
   * @throws AxonError `ABORTED` when `signal` fires.
   */
  async postJson(path: string, body: unknown, options: { signal?: AbortSignal } = {}): Promise<JsonResponse> {
    const { url, payload, context } = this.#prepare(path, body, options.signal);
    return request(context, async (signal) => {
      const response = await this.#post(url, payload, 'application/json', signal);
      const text = await response.text();
      const parsed = safeJsonParse(text);
      if (parsed === undefined) throw invalidResponseError(context.provider, response.status, 'The response body is not valid JSON.');
      return { status: response.status, body: parsed };
    });
  }

  /**
   * POST `body` as JSON to `{baseURL}{path}` and read the reply as server-sent events, under `streamRequest`'s
   * policy: opening is retried like `postJson`, nothing after the first event; `timeoutMs` limits the wait for each
   * event; leaving the loop early closes the connection. The events' data is handed over unparsed.
   *
   * @throws ProviderError as `postJson` before the first event; after it, a lost connection says the reply was cut.
   * @throws AxonError `ABORTED` when `signal` fires.
   */
  postEventStream(path: string, body: unknown, options: StreamRequestOptions = {}): AsyncGenerator<ServerSentEvent> {
    return this.#stream(path, body, 'text/event-stream', (response, provider) => readServerSentEvents(response.body, provider), options);
  }

  /**
   * POST `body` as JSON to `{baseURL}{path}` and read the reply as newline-delimited JSON (Ollama's streams), one
   * non-blank line per item, unparsed, under the same policy as `postEventStream`.
   *
   * @throws ProviderError as `postEventStream`.
   * @throws AxonError `ABORTED` when `signal` fires.
   */
  postLineStream(path: string, body: unknown, options: StreamRequestOptions = {}): AsyncGenerator<string> {
    return this.#stream(path, body, 'application/x-ndjson', (response, provider) => readJsonLines(response.body, provider), options);
  }

  #stream<T extends ServerSentEvent | string>(
    path: string,
    body: unknown,
    accept: string,
    read: (response: Response, provider: string) => AsyncGenerator<T>,
    options: StreamRequestOptions,
  ): AsyncGenerator<T> {
    const { url, payload, context } = this.#prepare(path, body, options.signal);
    return streamRequest(context, async (signal) => {
      const response = await this.#post(url, payload, accept, signal);
      const items = read(response, context.provider);
      return options.openedBy ? await readOpening(items, options.openedBy) : items;
    });
  }

  #prepare(path: string, body: unknown, signal: AbortSignal | undefined): { url: string; payload: string; context: RequestContext } {
    const { provider, timeoutMs, retry } = this.#options;
    const url = withQuery(joinUrl(this.baseURL, path), this.#options.query);
    return {
      url,
      payload: JSON.stringify(body),
      context: { provider, timeoutMs, retry, signal, describeError: (error) => networkError(provider, error, url) },
    };
  }

  /** One attempt: the response when its status is 2xx, else the status's `ProviderError` (the body read for the service's message). */
  async #post(url: string, payload: string, accept: string, signal: AbortSignal): Promise<Response> {
    const { provider, apiKey, keyFix, apiKeyHeader } = this.#options;
    const fetchFunction = this.#options.fetch ?? globalThis.fetch;
    const headers: Record<string, string> = { ...this.#options.headers, 'content-type': 'application/json', accept };
    if (apiKey && apiKeyHeader) headers[apiKeyHeader] = apiKey.reveal();
    else if (apiKey) headers.authorization = `Bearer ${apiKey.reveal()}`;
    const response = await fetchFunction(url, { method: 'POST', headers, body: payload, signal });
    if (response.ok) return response;
    const text = await response.text();
    const parsed = safeJsonParse(text) ?? text;
    const details: StatusErrorDetails = {
      serverMessage: messageFromErrorBody(parsed),
      retryAfterMs: retryAfterFromHeaders(response.headers),
      keyFix,
      secret: apiKey,
    };
    throw this.#options.describeStatus ? this.#options.describeStatus(response.status, parsed, details) : statusError(provider, response.status, details);
  }
}

/**
 * The address of an HTTP service (a provider's `baseURL`, a server's `host`): an absolute `http://` or `https://`
 * URL. One written without its scheme (`localhost:8080`, `api.openai.com/v1`) is refused with the address to
 * write instead, rather than a bare "Invalid URL" (or, for `localhost:8080`, accepted as a URL of scheme
 * `localhost:` and failing at the first request).
 */
export const httpUrlSchema = z.string().superRefine((value, context) => {
  const problem = httpUrlProblem(value);
  if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
});

/** What is wrong with `value` as the address of an HTTP service, or `undefined` when nothing is. */
export function httpUrlProblem(value: string): string | undefined {
  const text = value.trim();
  if (text === '') return 'must be an http:// or https:// URL, e.g. "http://localhost:8080"';
  // `host:port…` parses as a URL whose scheme is the host name, so a missing scheme is looked for before parsing.
  const withoutScheme = !/^[a-z][a-z0-9+.-]*:\/\//i.test(text);
  if (withoutScheme && (/^[\w.-]+(:\d+)?(\/|$)/.test(text) || /^\[[\d:a-f]+\](:\d+)?(\/|$)/i.test(text))) {
    const local = /^(localhost|127\.|0\.0\.0\.0|\[::1\]|10\.|192\.168\.|host\.docker\.internal)/i.test(text);
    return `"${text}" has no scheme: write "${local ? 'http' : 'https'}://${text}"`;
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `"${text}" is not a URL: write it as "http://host:port/path"`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must be an http:// or https:// URL, not ${url.protocol}//`;
  return undefined;
}

/** `{base}/{path}` with exactly one slash between them. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

// --- Internal helpers ---

/** `url` with `query` appended (after its own query string, if it has one). */
function withQuery(url: string, query: Record<string, string> | undefined): string {
  if (!query || Object.keys(query).length === 0) return url;
  return `${url}${url.includes('?') ? '&' : '?'}${new URLSearchParams(query).toString()}`;
}

/** Read items until `openedBy` says the reply has begun; hand back those items followed by the rest. */
async function readOpening<T>(items: AsyncGenerator<T>, openedBy: (item: T) => boolean): Promise<AsyncGenerator<T>> {
  const opening: T[] = [];
  let ended = false;
  try {
    while (true) {
      const next = await items.next();
      if (next.done) {
        ended = true;
        break;
      }
      opening.push(next.value);
      if (openedBy(next.value)) break;
    }
  } catch (error) {
    await items.return(undefined).catch(() => undefined);
    throw error;
  }
  return (async function* replay() {
    try {
      yield* opening;
      if (!ended) yield* items;
    } finally {
      // A consumer that leaves while the opening items are replayed must still close the body.
      await items.return(undefined).catch(() => undefined);
    }
  })();
}

/**
 * One attempt's signal: fires when the caller aborts, when the time limit passes, or when the stream's
 * consumer leaves early. The timer can be paused and restarted so a stream's limit applies per chunk.
 */
class AttemptDeadline {
  readonly signal: AbortSignal;
  readonly #timeout = new AbortController();
  readonly #cancel = new AbortController();
  readonly #timeoutMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(timeoutMs: number, callerSignal: AbortSignal | undefined) {
    this.#timeoutMs = timeoutMs;
    const signals = [this.#timeout.signal, this.#cancel.signal];
    if (callerSignal) signals.push(callerSignal);
    this.signal = AbortSignal.any(signals);
    this.restart();
  }

  get timedOut(): boolean {
    return this.#timeout.signal.aborted;
  }

  restart(): void {
    this.pause();
    this.#timer = setTimeout(() => this.#timeout.abort(new Error(`timed out after ${this.#timeoutMs} ms`)), this.#timeoutMs);
  }

  pause(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  dispose(): void {
    this.pause();
  }

  cancel(): void {
    this.#cancel.abort(new Error('stream closed by the consumer'));
  }
}

function classifyFailure(error: unknown, context: RequestContext, deadline: AttemptDeadline): unknown {
  if (context.signal?.aborted) return abortError(context.provider, context.signal);
  if (deadline.timedOut) return timeoutError(context.provider, context.timeoutMs);
  if (AxonError.isInstance(error)) return error;
  return context.describeError ? context.describeError(error) : networkError(context.provider, error);
}

function safeJsonParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
