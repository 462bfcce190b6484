import { z } from 'zod';
import { ProviderError } from '../../src/errors.ts';
import {
  cleanServerMessage,
  HttpClient,
  httpUrlSchema,
  type StatusErrorDetails,
  retryPolicyFrom,
  statusError,
  transportOptionsShape,
} from '../../src/runtime/http.ts';
import { apiKeySchema, resolveApiKey } from '../../src/runtime/secret.ts';

/** Voyage AI's API. */
export const VOYAGE_BASE_URL = 'https://api.voyageai.com/v1';

/** Connection options shared by the Voyage embeddings and rerank providers. */
export const voyageConnectionOptionsShape = {
  /** The API key: the key itself, `{ env: 'NAME' }`, or a `Secret`. @default process.env.VOYAGE_API_KEY */
  apiKey: apiKeySchema.optional(),
  /** Base URL of the API; requests go to `{baseURL}/embeddings` and `{baseURL}/rerank`. @default https://api.voyageai.com/v1 */
  baseURL: httpUrlSchema.default(VOYAGE_BASE_URL),
  ...transportOptionsShape,
};

const connectionSchema = z.object(voyageConnectionOptionsShape);
type ConnectionOptions = z.output<typeof connectionSchema>;

/**
 * The HTTP client of one Voyage provider: a bearer key from `apiKey` or `VOYAGE_API_KEY` (resolved now, so a
 * missing key fails at construction), Voyage's error bodies read by `voyageError`.
 *
 * @throws AxonError `MISSING_API_KEY`
 */
export function connectVoyage(component: string, options: ConnectionOptions): { http: HttpClient; baseURL: string } {
  const baseURL = options.baseURL.replace(/\/+$/, '');
  const http = new HttpClient({
    provider: component,
    baseURL,
    apiKey: resolveApiKey(options.apiKey, { component, environmentVariable: 'VOYAGE_API_KEY' }),
    keyFix: 'Check the key passed as apiKey or set in VOYAGE_API_KEY.',
    describeStatus: (status, body, details) => voyageError(component, status, body, details),
    timeoutMs: options.timeoutMs,
    retry: retryPolicyFrom(options),
    fetch: options.fetch,
  });
  return { http, baseURL };
}

/**
 * The one mapping of Voyage's failures to Axon errors. Its error body is `{detail: "…"}`, read as the server's
 * message; a 400 over its per-request limits (texts, tokens) says so and how to stay under them.
 */
export function voyageError(provider: string, status: number, body: unknown, details: StatusErrorDetails): ProviderError {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (status === 400 && typeof detail === 'string' && /\b(max|maximum|limit|exceeds?|too (long|many))\b/i.test(detail)) {
    return new ProviderError(`The request is over the service's limits: ${cleanServerMessage(detail, details.secret)}`, {
      provider,
      code: 'PROVIDER_REQUEST_TOO_LARGE',
      status,
      fix: 'Lower maxBatchSize (embeddings) or maxDocumentsPerCall (rerank), or shorten the texts.',
    });
  }
  return statusError(provider, status, details);
}
