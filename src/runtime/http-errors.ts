/**
 * The one mapping of HTTP failures to Axon errors, shared by every remote adapter (the providers through
 * `HttpClient` and their SDK clients, `QdrantStore` through its own client): which statuses are retried, what each
 * means and how to fix it, what a network failure was, and how long a server asked us to wait.
 */
import { ProviderError, type ProviderErrorCode } from '../errors.ts';
import { parseRetryAfter } from './retry.ts';
import type { Secret } from './secret.ts';

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

/**
 * The code of the failure an HTTP status stands for (as `statusError` gives it): for an error a service reports
 * with a status of its own, inside a stream or a client library's exception.
 */
export function providerCodeOfStatus(status: number): ProviderErrorCode {
  if (status === 401 || status === 403 || status === 498) return 'PROVIDER_AUTH_FAILED';
  if (status === 429) return 'PROVIDER_RATE_LIMITED';
  if (status === 404 || status === 501) return 'PROVIDER_NOT_FOUND';
  if (status === 413) return 'PROVIDER_REQUEST_TOO_LARGE';
  if (status === 408 || status === 409 || status === 425 || status >= 500) return 'PROVIDER_UNAVAILABLE';
  if (status >= 400) return 'PROVIDER_REQUEST_REJECTED';
  return 'PROVIDER_ERROR';
}

/** The `ProviderError` for a non-2xx HTTP status: message, fix and whether a retry may help. */
export function statusError(provider: string, status: number, details: StatusErrorDetails = {}): ProviderError {
  const said = details.serverMessage ? cleanServerMessage(details.serverMessage, details.secret) : undefined;
  const suffix = said ? `: ${said}` : '.';
  const base = { provider, status, retryAfterMs: details.retryAfterMs };
  if (status === 401 || status === 498) {
    return new ProviderError(`The service rejected the API key${suffix}`, {
      ...base,
      code: 'PROVIDER_AUTH_FAILED',
      fix: details.keyFix ?? 'Check the API key.',
    });
  }
  if (status === 403) {
    return new ProviderError(`The API key is not allowed to do this${suffix}`, {
      ...base,
      code: 'PROVIDER_AUTH_FAILED',
      fix: `${details.keyFix ?? 'Check the API key.'} Check its permissions for this model.`,
    });
  }
  if (status === 429) {
    const wait = details.retryAfterMs === undefined ? '' : ` The service asked to wait ${formatSeconds(details.retryAfterMs)}.`;
    return new ProviderError(`Rate limited by the service${suffix}${wait}`, {
      ...base,
      code: 'PROVIDER_RATE_LIMITED',
      retryable: isRetryableStatus(status),
      fix: 'Axon retried with backoff. Lower maxParallelCalls or the batch size, wait, or raise the rate limit of your plan.',
    });
  }
  if (status === 404) return new ProviderError(`Not found${suffix}`, { ...base, code: 'PROVIDER_NOT_FOUND', fix: 'Check the model name and the base URL.' });
  if (status === 413)
    return new ProviderError(`The request is too large${suffix}`, {
      ...base,
      code: 'PROVIDER_REQUEST_TOO_LARGE',
      fix: 'Lower the batch size or shorten the texts.',
    });
  if (status === 408 || status === 409 || status === 425) {
    return new ProviderError(`The service could not complete the request${suffix}`, {
      ...base,
      code: 'PROVIDER_UNAVAILABLE',
      retryable: isRetryableStatus(status),
      fix: 'Axon retried; try again later.',
    });
  }
  if (status >= 500) {
    return new ProviderError(`The service failed${suffix}`, {
      ...base,
      code: status === 501 ? 'PROVIDER_NOT_FOUND' : 'PROVIDER_UNAVAILABLE',
      retryable: isRetryableStatus(status),
      fix:
        status === 501 ? 'The server does not implement this endpoint; check the base URL.' : 'Axon retried with backoff; try again later or raise maxRetries.',
    });
  }
  if (status >= 400)
    return new ProviderError(`The service rejected the request${suffix}`, {
      ...base,
      code: 'PROVIDER_REQUEST_REJECTED',
      fix: 'Check the model name and the options sent.',
    });
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
    code: 'PROVIDER_UNREACHABLE',
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
    code: 'PROVIDER_STREAM_INTERRUPTED',
    cause,
    fix: 'Ask again. If replies keep being cut, look for a proxy or load balancer that closes long responses, or raise its idle timeout.',
  });
}

/**
 * An error the service reported inside a stream it had opened (OpenAI-compatible servers send `data: {"error": …}`):
 * the HTTP status was a success, the reply is no answer. Not retried: the reply had begun. The key is redacted from
 * the service's message should it be echoed there.
 */
export function streamedServiceError(provider: string, details: Pick<StatusErrorDetails, 'serverMessage' | 'secret'> = {}): ProviderError {
  const said = details.serverMessage ? cleanServerMessage(details.serverMessage, details.secret) : undefined;
  return new ProviderError(`The service reported an error in the stream${said ? `: ${said}` : '.'}`, {
    provider,
    fix: 'Ask again; if the error repeats, check the model name, the options sent and the service status.',
  });
}

/**
 * An error a service reported inside a stream with a status of its own (Anthropic's `error` event, a Gemini error
 * chunk, whose HTTP status was a success): the code that status stands for, and retryable as that status is (a
 * stream is retried only before its first text). Without a status it is a `PROVIDER_ERROR`.
 */
export function streamedStatusError(
  provider: string,
  status: number | undefined,
  details: Pick<StatusErrorDetails, 'serverMessage' | 'secret' | 'retryAfterMs'> = {},
): ProviderError {
  const said = details.serverMessage ? cleanServerMessage(details.serverMessage, details.secret) : undefined;
  const retryable = status !== undefined && isRetryableStatus(status);
  return new ProviderError(`The service reported an error in the stream${said ? `: ${said}` : '.'}`, {
    provider,
    code: status === undefined ? 'PROVIDER_ERROR' : providerCodeOfStatus(status),
    retryable,
    retryAfterMs: details.retryAfterMs,
    fix: retryable
      ? 'Axon retries a stream that fails before its first text; this one failed later. Ask again.'
      : 'Check the model name and the options sent; if the error repeats, check the service status.',
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
  if (error && typeof error === 'object' && typeof (error as Record<string, unknown>).message === 'string')
    return (error as Record<string, unknown>).message as string;
  if (typeof error === 'string') return error;
  if (typeof record.message === 'string') return record.message;
  if (typeof record.detail === 'string') return record.detail;
  if (record.detail !== undefined) return JSON.stringify(record.detail);
  return undefined;
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

/**
 * A service's own words as an error may show them: the key redacted (a service may echo what it was sent), on one
 * line, at most 300 characters. Every message built from a server's reply goes through it; `statusError` and
 * `streamedServiceError` already do.
 */
export function cleanServerMessage(message: string, secret: Secret | undefined): string {
  const redacted = secret ? secret.redact(message) : message;
  const oneLine = redacted.replace(/\s+/g, ' ').trim();
  return oneLine.length <= 300 ? oneLine : `${oneLine.slice(0, 299)}…`;
}

// --- Internal helpers ---

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
