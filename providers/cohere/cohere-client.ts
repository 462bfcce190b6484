import type { CohereClientV2 } from 'cohere-ai';
import { z } from 'zod';
import type { ProviderError } from '../../src/errors.ts';
import {
  invalidResponseError,
  messageFromErrorBody,
  networkError,
  type RequestContext,
  requestFailedError,
  retryAfterFromHeaders,
  retryPolicyFrom,
  statusError,
  timeoutError,
  transportOptionsShape,
} from '../../src/runtime/http.ts';
import { lazyModule } from '../../src/runtime/lazy-module.ts';
import { apiKeySchema, resolveApiKey, type Secret } from '../../src/runtime/secret.ts';

/** Cohere's production API. */
export const COHERE_BASE_URL = 'https://api.cohere.com';

/** Connection options shared by the Cohere embeddings, rerank and chat providers. */
export const cohereConnectionOptionsShape = {
  /** The API key: the key itself, `{ env: 'NAME' }`, or a `Secret`. @default process.env.COHERE_API_KEY */
  apiKey: apiKeySchema.optional(),
  /** Base URL of the API (a proxy, a private deployment). @default https://api.cohere.com */
  baseURL: z.url().optional(),
  ...transportOptionsShape,
};

const connectionSchema = z.object(cohereConnectionOptionsShape);
type ConnectionOptions = z.output<typeof connectionSchema>;

export interface CohereConnection {
  /** The SDK client, built on first use (the `cohere-ai` package is loaded then, not when Axon is imported). */
  client(): Promise<CohereClientV2>;
  /** Per-request SDK options: Axon's signal, the SDK's own retries off. */
  requestOptions(signal: AbortSignal): { abortSignal: AbortSignal; maxRetries: 0; timeoutInSeconds: number };
  context(signal: AbortSignal | undefined): RequestContext;
}

/**
 * Build the `CohereClientV2`. Its own retries are disabled so Axon's policy is the only one; the key is handed
 * over as a supplier so the SDK's options never hold it as a plain string.
 *
 * @param component The name used in errors, e.g. `cohere-reranker`.
 */
export function connectCohere(component: string, options: ConnectionOptions): CohereConnection {
  const apiKey = resolveApiKey(options.apiKey, { component, environmentVariable: 'COHERE_API_KEY' });
  const baseURL = (options.baseURL ?? COHERE_BASE_URL).replace(/\/+$/, '');
  const retry = retryPolicyFrom(options);
  const settings = {
    token: () => apiKey.reveal(),
    baseUrl: baseURL,
    maxRetries: 0,
    timeoutInSeconds: options.timeoutMs / 1000,
    fetch: options.fetch,
    logging: { silent: true },
  };
  let client: Promise<CohereClientV2> | undefined;
  const describeError = (error: unknown) => describeCohereError(component, error, { apiKey, baseURL, timeoutMs: options.timeoutMs });
  return {
    client: () => (client ??= cohereSdk.load().then((sdk) => new sdk.CohereClientV2(settings))),
    requestOptions: (signal) => ({ abortSignal: signal, maxRetries: 0, timeoutInSeconds: options.timeoutMs / 1000 }),
    context: (signal) => ({ provider: component, timeoutMs: options.timeoutMs, retry, signal, describeError }),
  };
}

// --- Internal helpers ---

const cohereSdk = lazyModule('cohere-ai', 'cohere', () => import('cohere-ai'));

function describeCohereError(component: string, error: unknown, context: { apiKey: Secret; baseURL: string; timeoutMs: number }): ProviderError {
  // An SDK error can only exist once the SDK was loaded; before that, nothing here is the SDK's.
  const sdk = cohereSdk.loaded();
  if (sdk === undefined) return requestFailedError(component, error, context.apiKey);
  const { CohereError, CohereTimeoutError } = sdk;
  if (error instanceof CohereTimeoutError) return timeoutError(component, context.timeoutMs);
  if (error instanceof CohereError) {
    const status = error.statusCode;
    // The SDK reports a failed connection as a CohereError without a status.
    if (status === undefined) return networkError(component, error.cause ?? error, context.baseURL);
    // A 2xx "error" is the SDK failing to parse the body.
    if (status >= 200 && status < 300) return invalidResponseError(component, status, 'The response body is not valid JSON.');
    return statusError(component, status, {
      serverMessage: messageFromErrorBody(error.body),
      retryAfterMs: retryAfterFromHeaders(error.rawResponse?.headers),
      keyFix: 'Check the key passed as apiKey or set in COHERE_API_KEY.',
      secret: context.apiKey,
    });
  }
  if (error instanceof SyntaxError) return invalidResponseError(component, 200, 'A streamed event is not valid JSON.');
  return requestFailedError(component, error, context.apiKey);
}
