import { ProviderError } from '../../src/errors.ts';
import { cleanServerMessage, type StatusErrorDetails, statusError, streamedStatusError } from '../../src/runtime/http.ts';
import type { Secret } from '../../src/runtime/secret.ts';

/**
 * The one mapping of the Gemini API's failures to Axon errors. Its error body is Google's `{error: {code, message,
 * status, details}}`; the status name (`RESOURCE_EXHAUSTED`, `UNAVAILABLE`) is kept in the message, and a
 * `google.rpc.RetryInfo` detail's `retryDelay` (`"37s"`) stands for `Retry-After`, which the API does not send.
 * The same body may arrive as a chunk of a stream; there the failure is retried only before any text.
 */
export function geminiError(provider: string, failure: { status?: number; body: unknown; details?: StatusErrorDetails; secret?: Secret }): ProviderError {
  const error = errorObject(failure.body);
  const statusName = typeof error?.status === 'string' ? error.status : undefined;
  const message = typeof error?.message === 'string' ? error.message : undefined;
  const serverMessage = message === undefined ? failure.details?.serverMessage : statusName ? `${message} (${statusName})` : message;
  const retryAfterMs = failure.details?.retryAfterMs ?? retryDelayOf(error);
  const secret = failure.details?.secret ?? failure.secret;
  if (failure.status !== undefined && reasonOf(error) === 'API_KEY_INVALID') {
    // The API answers a wrong key with 400 INVALID_ARGUMENT, not 401: say what it means.
    const said = serverMessage ? `: ${cleanServerMessage(serverMessage, secret)}` : '.';
    return new ProviderError(`The service rejected the API key${said}`, {
      provider,
      code: 'PROVIDER_AUTH_FAILED',
      status: failure.status,
      fix: failure.details?.keyFix ?? 'Check the API key.',
    });
  }
  if (failure.status !== undefined) return statusError(provider, failure.status, { ...failure.details, serverMessage, retryAfterMs });
  // A streamed error chunk: the HTTP status was 200, `code` says which status the same failure would have had.
  const code = typeof error?.code === 'number' ? error.code : undefined;
  return streamedStatusError(provider, code, { serverMessage, secret, retryAfterMs });
}

/**
 * A reply without text, for the reason Gemini gave: a prompt it refused (`promptFeedback.blockReason`), a
 * candidate it stopped (`finishReason` `SAFETY`, `RECITATION`…), or a token limit spent before any text
 * (`MAX_TOKENS`, a thinking model's reasoning can use it all). Never passed on as an empty answer.
 */
export function emptyReplyError(provider: string, what: 'prompt' | 'reply', reason: string): ProviderError {
  if (reason === 'MAX_TOKENS') {
    return new ProviderError('The reply holds no text: the token limit was reached before any (MAX_TOKENS).', {
      provider,
      code: 'PROVIDER_OUTPUT_LIMIT',
      fix: 'Raise maxTokens; a thinking model spends part of it on its reasoning.',
    });
  }
  return new ProviderError(`The service blocked the ${what} (${reason}).`, {
    provider,
    code: 'PROVIDER_CONTENT_BLOCKED',
    fix: 'The question or the retrieved evidence tripped its safety filters; rephrase it, or review the documents retrieved.',
  });
}

// --- Internal helpers ---

function errorObject(body: unknown): Record<string, unknown> | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const error = (body as { error?: unknown }).error;
  return error && typeof error === 'object' ? (error as Record<string, unknown>) : undefined;
}

/** The `reason` of a `google.rpc.ErrorInfo` detail (`API_KEY_INVALID`). */
function reasonOf(error: Record<string, unknown> | undefined): string | undefined {
  const details = Array.isArray(error?.details) ? error.details : [];
  for (const detail of details) {
    const reason = (detail as { reason?: unknown } | null)?.reason;
    if (typeof reason === 'string') return reason;
  }
  return undefined;
}

/** `retryDelay` of a `google.rpc.RetryInfo` detail (`"37s"`, `"0.5s"`), in milliseconds. */
function retryDelayOf(error: Record<string, unknown> | undefined): number | undefined {
  const details = error?.details;
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    const delay = (detail as { '@type'?: unknown; retryDelay?: unknown } | null)?.retryDelay;
    if (typeof delay !== 'string') continue;
    const match = /^(\d+(?:\.\d+)?)s$/.exec(delay.trim());
    if (match) return Math.round(Number(match[1]) * 1000);
  }
  return undefined;
}
