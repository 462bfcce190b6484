import { ProviderError } from '../../src/errors.ts';
import { type StatusErrorDetails, statusError, streamedStatusError } from '../../src/runtime/http.ts';
import type { Secret } from '../../src/runtime/secret.ts';

/** Anthropic's error types and the HTTP status each stands for (its API reference, "Errors"). */
const STATUS_OF_ERROR_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** The status Anthropic answers when its servers are overloaded (its own, outside the HTTP registry). */
export const ANTHROPIC_OVERLOADED_STATUS = 529;

/**
 * The one mapping of Anthropic's failures to Axon errors: a non-2xx reply (`{type: "error", error: {type,
 * message}}`) and an `error` event inside a stream (the same object, sent as `event: error`). The error type is
 * kept in the message; 529 `overloaded_error` reads as an overload and is retried like a 5xx; in a stream, the
 * retryable types (overload, rate limit, `api_error`) carry `retryable`, so a stream that opens with one is retried.
 */
export function anthropicError(provider: string, failure: { status?: number; body: unknown; details?: StatusErrorDetails; secret?: Secret }): ProviderError {
  const error = errorObject(failure.body);
  const type = typeof error?.type === 'string' ? error.type : undefined;
  const message = typeof error?.message === 'string' ? error.message : undefined;
  const serverMessage = message === undefined ? failure.details?.serverMessage : type ? `${message} (${type})` : message;
  if (failure.status !== undefined) {
    if (failure.status === ANTHROPIC_OVERLOADED_STATUS || type === 'overloaded_error')
      return overloaded(provider, failure.status, failure.details?.retryAfterMs);
    return statusError(provider, failure.status, { ...failure.details, serverMessage });
  }
  // An error event: the HTTP status was 200; the type says which status the same failure would have had (of
  // those, rate_limit_error, api_error and timeout_error are retryable).
  if (type === 'overloaded_error') return overloaded(provider, undefined, undefined);
  const equivalent = type === undefined ? undefined : STATUS_OF_ERROR_TYPE[type];
  return streamedStatusError(provider, equivalent, { serverMessage, secret: failure.details?.secret ?? failure.secret });
}

// --- Internal helpers ---

function overloaded(provider: string, status: number | undefined, retryAfterMs: number | undefined): ProviderError {
  return new ProviderError('The service is overloaded (overloaded_error).', {
    provider,
    code: 'PROVIDER_UNAVAILABLE',
    status,
    retryAfterMs,
    retryable: true,
    fix: 'Axon retried with backoff. Anthropic sheds load this way at busy times: try again shortly, or raise maxRetries.',
  });
}

function errorObject(body: unknown): Record<string, unknown> | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const error = (body as { error?: unknown }).error;
  return error && typeof error === 'object' ? (error as Record<string, unknown>) : undefined;
}
