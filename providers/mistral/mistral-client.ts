import { z } from 'zod';
import { ProviderError } from '../../src/errors.ts';
import {
  cleanServerMessage,
  HttpClient,
  httpUrlSchema,
  retryPolicyFrom,
  type StatusErrorDetails,
  statusError,
  streamedServiceError,
  transportOptionsShape,
} from '../../src/runtime/http.ts';
import { apiKeySchema, resolveApiKey } from '../../src/runtime/secret.ts';

/** Mistral AI's API ("La Plateforme"). */
export const MISTRAL_BASE_URL = 'https://api.mistral.ai/v1';

/** Connection options shared by the Mistral chat and embeddings providers. */
export const mistralConnectionOptionsShape = {
  /** The API key: the key itself, `{ env: 'NAME' }`, or a `Secret`. @default process.env.MISTRAL_API_KEY */
  apiKey: apiKeySchema.optional(),
  /** Base URL of the API; requests go to `{baseURL}/chat/completions` and `{baseURL}/embeddings`. @default https://api.mistral.ai/v1 */
  baseURL: httpUrlSchema.default(MISTRAL_BASE_URL),
  ...transportOptionsShape,
};

const connectionSchema = z.object(mistralConnectionOptionsShape);
type ConnectionOptions = z.output<typeof connectionSchema>;

/** One Mistral provider's way to the API. */
export interface MistralConnection {
  http: HttpClient;
  baseURL: string;
  /** The error for an error chunk of a stream, the key redacted. */
  streamedError(chunk: unknown): ProviderError;
}

/**
 * The HTTP client of one Mistral provider: a bearer key from `apiKey` or `MISTRAL_API_KEY` (resolved now, so a
 * missing key fails at construction), Mistral's error bodies read by `mistralError`.
 *
 * @throws AxonError `MISSING_API_KEY`
 */
export function connectMistral(component: string, options: ConnectionOptions): MistralConnection {
  const baseURL = options.baseURL.replace(/\/+$/, '');
  const apiKey = resolveApiKey(options.apiKey, { component, environmentVariable: 'MISTRAL_API_KEY' });
  const http = new HttpClient({
    provider: component,
    baseURL,
    apiKey,
    keyFix: 'Check the key passed as apiKey or set in MISTRAL_API_KEY.',
    describeStatus: (status, body, details) => mistralError(component, status, body, details),
    timeoutMs: options.timeoutMs,
    retry: retryPolicyFrom(options),
    fetch: options.fetch,
  });
  return { http, baseURL, streamedError: (chunk) => streamedServiceError(component, { serverMessage: messageOf(chunk), secret: apiKey }) };
}

/**
 * The one mapping of Mistral's failures to Axon errors. Its error bodies are `{object: "error", message, type,
 * code}` and, for a request that fails validation (422), `{detail: [{loc, msg, type}]}`; both are read into the
 * message, and "Too many inputs" (an embeddings batch over its limit) gets the fix that cures it.
 */
export function mistralError(provider: string, status: number, body: unknown, details: StatusErrorDetails): ProviderError {
  const serverMessage = messageOf(body) ?? details.serverMessage;
  if (status === 400 && serverMessage !== undefined && /too many (inputs|tokens)/i.test(serverMessage)) {
    return new ProviderError(`The request is over the service's limits: ${cleanServerMessage(serverMessage, details.secret)}`, {
      provider,
      code: 'PROVIDER_REQUEST_TOO_LARGE',
      status,
      fix: 'Lower maxBatchSize, or shorten the texts.',
    });
  }
  return statusError(provider, status, { ...details, serverMessage });
}

// --- Internal helpers ---

/** The service's message in an error body, as it was sent (redacted where it is shown). */
function messageOf(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const record = body as Record<string, unknown>;
  const nested = record.error && typeof record.error === 'object' ? (record.error as Record<string, unknown>) : record;
  let message: string | undefined;
  if (typeof nested.message === 'string')
    message = typeof nested.type === 'string' && nested.type !== '' ? `${nested.message} (${nested.type})` : nested.message;
  else if (Array.isArray(record.detail)) {
    message = record.detail
      .map((issue: { loc?: unknown; msg?: unknown }) => `${Array.isArray(issue?.loc) ? `${issue.loc.join('.')}: ` : ''}${String(issue?.msg ?? '')}`)
      .join('; ');
  }
  return message;
}
