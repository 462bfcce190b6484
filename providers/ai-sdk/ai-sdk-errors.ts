import { AxonError, abortError, type ProviderError } from '../../src/errors.ts';
import { networkError, requestFailedError, retryAfterFromHeaders, statusError } from '../../src/runtime/http.ts';
import { SUPPORTED_VERSIONS } from './ai-sdk-specification.ts';

/**
 * The one mapping of the AI SDK's failures to Axon errors. An `APICallError` (recognised by its shape, so any copy
 * of `@ai-sdk/provider` is read) becomes the `ProviderError` of its HTTP status, with its `retry-after` header; a
 * cancellation of the caller's signal becomes `ABORTED`; anything else is a failed request, not retried.
 */
export function aiSdkError(component: string, error: unknown, signal: AbortSignal | undefined): AxonError {
  if (AxonError.isInstance(error)) return error;
  if (signal?.aborted) return abortError(component, signal);
  return aiSdkProviderError(component, error);
}

/** `aiSdkError` for a failure known not to be a cancellation (the shared request policy checks that first). */
export function aiSdkProviderError(component: string, error: unknown): ProviderError {
  const record = (error ?? {}) as { statusCode?: unknown; responseHeaders?: unknown; message?: unknown; isRetryable?: unknown; name?: unknown };
  if (typeof record.statusCode === 'number') {
    const headers = record.responseHeaders && typeof record.responseHeaders === 'object' ? (record.responseHeaders as Record<string, string>) : {};
    return statusError(component, record.statusCode, {
      serverMessage: typeof record.message === 'string' ? record.message : undefined,
      retryAfterMs: retryAfterFromHeaders({ get: (name) => headers[name] ?? headers[name.toLowerCase()] ?? null }),
    });
  }
  // An APICallError without a status never reached the service (a refused connection): retryable.
  if (record.name === 'AI_APICallError' && record.isRetryable === true) return networkError(component, error);
  return requestFailedError(component, error);
}

/**
 * Refuse a model of a specification version Axon does not read (a `v1` model of `ai` 4, a future `v5`).
 *
 * @throws AxonError `UNSUPPORTED_VERSION` naming the versions read.
 */
export function assertSpecificationVersion(component: string, kind: keyof typeof SUPPORTED_VERSIONS, model: unknown): void {
  const version = (model as { specificationVersion?: unknown } | null)?.specificationVersion;
  const supported: readonly string[] = SUPPORTED_VERSIONS[kind];
  if (typeof version === 'string' && supported.includes(version)) return;
  throw new AxonError('UNSUPPORTED_VERSION', `The ${kind} model implements specification ${JSON.stringify(version)}; Axon reads ${supported.join(', ')}.`, {
    component,
    details: { found: typeof version === 'string' ? version : undefined, supported: [...supported] },
    fix: `Pass a model from an @ai-sdk provider built for ai 5, 6 or 7 (specification ${supported.join(', ')}).`,
  });
}

/** A component name from the model's provider id (`openai.chat` → `ai-sdk-openai-chat`). */
export function componentName(provider: string, fallback: string): string {
  const slug = provider
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slug === '' ? fallback : `ai-sdk-${slug}`;
}

/** The `gen_ai.provider.name` of a model's calls: its provider id's first part (`openai.chat` → `openai`), if any. */
export function genAiProviderOf(provider: unknown): string | undefined {
  const first = typeof provider === 'string' ? provider.split('.')[0] : '';
  return first === '' ? undefined : first;
}
