import { z } from 'zod';
import { abortError, AxonError, ProviderError } from '../errors.ts';
import { parseRetryAfter, RetryPolicy, retryOptionsSchema } from './retry.ts';
import type { Secret } from './secret.ts';

/** A `fetch` implementation: the global one, a proxy-aware one, or a test double. */
export const fetchFunctionSchema = z.custom<typeof fetch>((value) => typeof value === 'function', { message: 'must be a fetch function' });

/**
 * Options every remote provider accepts, spread into each provider's schema so they read the same everywhere.
 */
export const transportOptionsShape = {
  /**
   * Time limit of one attempt, in milliseconds, from sending the request to the end of the response. For a
   * streamed reply it limits the wait for each chunk instead, so long answers are not cut off. A timed-out
   * attempt is retried like a 5xx.
   * @default 60000
   */
  timeoutMs: z.number().int().positive().default(60_000),
  /** Retries after a failed attempt (429, 5xx, network errors, timeouts); 0 disables them. @default 2 */
  maxRetries: z.number().int().min(0).max(10).default(2),
  /** Backoff tuning (initialDelayMs, maxDelayMs, maxRetryAfterMs); see `retryOptionsSchema`. */
  retry: retryOptionsSchema.omit({ maxRetries: true }).optional(),
  /** A ready-made policy (shared between providers, or with a test clock). Replaces `maxRetries` and `retry`. */
  retryPolicy: z.instanceof(RetryPolicy).optional(),
  /** The `fetch` used for every request (a proxy agent, a test double). @default globalThis.fetch */
  fetch: fetchFunctionSchema.optional(),
};

/** The retry policy described by a provider's parsed transport options. */
export function retryPolicyFrom(options: { maxRetries: number; retry?: Omit<z.input<typeof retryOptionsSchema>, 'maxRetries'>; retryPolicy?: RetryPolicy }): RetryPolicy {
  return options.retryPolicy ?? new RetryPolicy({ ...options.retry, maxRetries: options.maxRetries });
}

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
  return context.retry.run(async () => {
    const deadline = new AttemptDeadline(context.timeoutMs, context.signal);
    try {
      return await attempt(deadline.signal);
    } catch (error) {
      throw classifyFailure(error, context, deadline);
    } finally {
      deadline.dispose();
    }
  }, { component: context.provider, signal: context.signal });
}

/**
 * Open a streamed reply under the shared policy and yield its items. Opening is retried like `request`;
 * once the first item has been received nothing is retried (it would repeat text the caller already has).
 * The timeout applies to the wait for each item. Leaving the loop early closes the connection.
 */
export async function* streamRequest<T>(context: RequestContext, open: (signal: AbortSignal) => Promise<AsyncIterable<T>>): AsyncGenerator<T> {
  // The deadline of the attempt that opened the stream goes on to time each item.
  const { iterable, deadline: current } = await context.retry.run(async () => {
    const deadline = new AttemptDeadline(context.timeoutMs, context.signal);
    try {
      return { iterable: await open(deadline.signal), deadline };
    } catch (error) {
      deadline.dispose();
      throw classifyFailure(error, context, deadline);
    }
  }, { component: context.provider, signal: context.signal });
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
  timeoutMs: number;
  retry: RetryPolicy;
  fetch?: typeof fetch;
}

/** The body of a successful response, already parsed, and its status. */
export interface JsonResponse {
  status: number;
  body: unknown;
}

/**
 * A small JSON-over-fetch client for services without an SDK (Jina, LocalAI). Everything about retries,
 * timeouts, cancellation and error mapping is delegated to `request`.
 */
export class HttpClient {
  readonly #options: HttpClientOptions;

  constructor(options: HttpClientOptions) {
    this.#options = options;
  }

  /**
   * POST `body` as JSON to `{baseURL}{path}` and parse the JSON reply.
   *
   * @throws ProviderError with the HTTP status: 401/403 (check the key), 429 (rate limited, retried), 5xx
   * (retried), `PROVIDER_RESPONSE_INVALID` for a body that is not JSON, `PROVIDER_TIMEOUT` after `timeoutMs`.
   * @throws AxonError `ABORTED` when `signal` fires.
   */
  async postJson(path: string, body: unknown, options: { signal?: AbortSignal } = {}): Promise<JsonResponse> {
    const { provider, apiKey, keyFix, timeoutMs, retry } = this.#options;
    const fetchFunction = this.#options.fetch ?? globalThis.fetch;
    const url = joinUrl(this.#options.baseURL, path);
    const payload = JSON.stringify(body);
    return request({ provider, timeoutMs, retry, signal: options.signal, describeError: (error) => networkError(provider, error, url) }, async (signal) => {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
      if (apiKey) headers.authorization = `Bearer ${apiKey.reveal()}`;
      const response = await fetchFunction(url, { method: 'POST', headers, body: payload, signal });
      const text = await response.text();
      if (!response.ok) {
        throw statusError(provider, response.status, {
          serverMessage: messageFromErrorBody(safeJsonParse(text) ?? text),
          retryAfterMs: retryAfterFromHeaders(response.headers),
          keyFix,
          secret: apiKey,
        });
      }
      const parsed = safeJsonParse(text);
      if (parsed === undefined) throw invalidResponseError(provider, response.status, 'The response body is not valid JSON.');
      return { status: response.status, body: parsed };
    });
  }
}

export interface StatusErrorDetails {
  /** The service's own explanation, from its error body. Redacted and shortened before use. */
  serverMessage?: string;
  retryAfterMs?: number;
  /** The fix shown on 401/403. */
  keyFix?: string;
  /** Removed from the server message should the service echo it. */
  secret?: Secret;
}

/**
 * Whether a retry may cure an HTTP status: 408 (timeout), 409 (conflict), 425 (too early), 429 (rate limit) and
 * every 5xx but 501 (not implemented, which no retry changes). The one retryable set for every adapter.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 425 || status === 429 || (status >= 500 && status !== 501);
}

/** The `ProviderError` for a non-2xx HTTP status: message, fix and whether a retry may help. */
export function statusError(provider: string, status: number, details: StatusErrorDetails = {}): ProviderError {
  const said = details.serverMessage ? cleanServerMessage(details.serverMessage, details.secret) : undefined;
  const suffix = said ? `: ${said}` : '.';
  const base = { provider, status, retryAfterMs: details.retryAfterMs };
  if (status === 401 || status === 498) {
    return new ProviderError(`The service rejected the API key${suffix}`, { ...base, fix: details.keyFix ?? 'Check the API key.' });
  }
  if (status === 403) {
    return new ProviderError(`The API key is not allowed to do this${suffix}`, { ...base, fix: `${details.keyFix ?? 'Check the API key.'} Check its permissions for this model.` });
  }
  if (status === 429) {
    const wait = details.retryAfterMs === undefined ? '' : ` The service asked to wait ${formatSeconds(details.retryAfterMs)}.`;
    return new ProviderError(`Rate limited by the service${suffix}${wait}`, {
      ...base,
      retryable: isRetryableStatus(status),
      fix: 'Axon retried with backoff. Lower maxParallelCalls or the batch size, wait, or raise the rate limit of your plan.',
    });
  }
  if (status === 404) return new ProviderError(`Not found${suffix}`, { ...base, fix: 'Check the model name and the base URL.' });
  if (status === 413) return new ProviderError(`The request is too large${suffix}`, { ...base, fix: 'Lower the batch size or shorten the texts.' });
  if (status === 408 || status === 409 || status === 425) {
    return new ProviderError(`The service could not complete the request${suffix}`, { ...base, retryable: isRetryableStatus(status), fix: 'Axon retried; try again later.' });
  }
  if (status >= 500) {
    return new ProviderError(`The service failed${suffix}`, { ...base, retryable: isRetryableStatus(status), fix: status === 501 ? 'The server does not implement this endpoint; check the base URL.' : 'Axon retried with backoff; try again later or raise maxRetries.' });
  }
  if (status >= 400) return new ProviderError(`The service rejected the request${suffix}`, { ...base, fix: 'Check the model name and the options sent.' });
  return new ProviderError(`Unexpected HTTP status${suffix}`, { ...base, fix: 'Check the base URL; a proxy may be in the way.' });
}

/** The `ProviderError` for a request that never got an HTTP answer (refused, reset, DNS). Retryable. */
export function networkError(provider: string, cause: unknown, target?: string): ProviderError {
  const reason = networkReason(cause);
  if (reason !== undefined && /includes credentials/i.test(reason)) {
    // fetch refuses such a URL before sending anything: retrying cannot help, and the URL must not be printed.
    return new ProviderError('The base URL carries credentials (user:password@), which fetch refuses.', {
      provider,
      cause,
      fix: 'Remove the user:password@ part from the base URL and pass the key as apiKey (or { env: "NAME" }).',
    });
  }
  return new ProviderError(`Could not reach the service${target ? ` at ${safeTarget(target)}` : ''}${reason ? ` (${reason})` : ''}.`, {
    provider,
    code: 'PROVIDER_ERROR',
    retryable: true,
    cause,
    fix: 'Check the network, the base URL or host, and that the server is running.',
  });
}

/** The `ProviderError` for an attempt that ran past its time limit. Retryable. */
export function timeoutError(provider: string, timeoutMs: number): ProviderError {
  return new ProviderError(`No response within ${timeoutMs} ms.`, {
    provider,
    code: 'PROVIDER_TIMEOUT',
    retryable: true,
    fix: 'Raise timeoutMs, send smaller batches, or check the server load.',
  });
}

/**
 * The `ProviderError` for a failure an SDK raised that is neither an HTTP status, a network error nor a timeout.
 * Not retryable; the key is redacted from the message should it appear there.
 */
export function requestFailedError(provider: string, cause: unknown, secret?: Secret): ProviderError {
  const message = cause instanceof Error ? cause.message : String(cause);
  return new ProviderError(`Request failed: ${secret ? secret.redact(message) : message}`, { provider, fix: 'Check the base URL and the options sent.' });
}

/** The `ProviderError` for a response we cannot trust (malformed JSON, wrong shape, impossible values). */
export function invalidResponseError(provider: string, status: number | undefined, problem: string, cause?: unknown): ProviderError {
  return new ProviderError(`Invalid response from the service: ${problem}`, {
    provider,
    status,
    code: 'PROVIDER_RESPONSE_INVALID',
    cause,
    fix: 'Check that the base URL points at a compatible server and the model name is right; a proxy may be altering responses.',
  });
}

/** A stream whose connection failed after its first item: the reply is incomplete, and is not retried (it would repeat text). */
export function streamInterruptedError(provider: string, received: number, cause: unknown): ProviderError {
  const reason = networkReason(cause);
  return new ProviderError(`The connection closed mid-stream, after ${received} event(s)${reason ? ` (${reason})` : ''}: the reply is incomplete.`, {
    provider,
    cause,
    fix: 'Ask again. If replies keep being cut, look for a proxy or load balancer that closes long responses, or raise its idle timeout.',
  });
}

/** Milliseconds to wait according to `retry-after-ms` (OpenAI) or `Retry-After` (seconds or HTTP-date). */
export function retryAfterFromHeaders(headers: { get(name: string): string | null } | undefined | null): number | undefined {
  if (!headers || typeof headers.get !== 'function') return undefined;
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds !== null && /^\d+(\.\d+)?$/.test(milliseconds.trim())) return Math.round(Number(milliseconds));
  return parseRetryAfter(headers.get('retry-after'));
}

/** The human explanation inside a service's error body: `{error: {message}}`, `{error}`, `{message}` or `{detail}`. */
export function messageFromErrorBody(body: unknown): string | undefined {
  if (typeof body === 'string') return body.trim() === '' ? undefined : body;
  if (!body || typeof body !== 'object') return undefined;
  const record = body as Record<string, unknown>;
  const error = record.error;
  if (error && typeof error === 'object' && typeof (error as Record<string, unknown>).message === 'string') return (error as Record<string, unknown>).message as string;
  if (typeof error === 'string') return error;
  if (typeof record.message === 'string') return record.message;
  if (typeof record.detail === 'string') return record.detail;
  if (record.detail !== undefined) return JSON.stringify(record.detail);
  return undefined;
}

/** `{base}/{path}` with exactly one slash between them. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/**
 * The most telling part of a network failure: a system error code (`ECONNREFUSED`), else the innermost
 * message ("fetch failed" says nothing). `undefined` when the failure carries neither.
 */
export function networkReason(cause: unknown): string | undefined {
  let current: unknown = cause;
  let innermost: string | undefined;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
    if (current instanceof Error && current.message) innermost = current.message;
    current = (current as { cause?: unknown }).cause;
  }
  return innermost;
}

// --- Internal helpers ---

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

function cleanServerMessage(message: string, secret: Secret | undefined): string {
  const redacted = secret ? secret.redact(message) : message;
  const oneLine = redacted.replace(/\s+/g, ' ').trim();
  return oneLine.length <= 300 ? oneLine : `${oneLine.slice(0, 299)}…`;
}

/** The target without credentials or a query string, which may carry keys. */
function safeTarget(target: string): string {
  try {
    const url = new URL(target);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

function formatSeconds(milliseconds: number): string {
  const seconds = milliseconds / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}
