import { z } from 'zod';
import { HttpClient, httpUrlSchema, retryPolicyFrom, transportOptionsShape } from '../../src/runtime/http.ts';
import { apiKeySchema, resolveApiKey, type Secret } from '../../src/runtime/secret.ts';
import { geminiError } from './gemini-error.ts';

/** Google's Gemini API (Google AI Studio keys). */
export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

/** Connection options shared by the Gemini chat and embeddings providers. */
export const geminiConnectionOptionsShape = {
  /** The API key: the key itself, `{ env: 'NAME' }`, or a `Secret`; sent as `x-goog-api-key`. @default process.env.GEMINI_API_KEY */
  apiKey: apiKeySchema.optional(),
  /** Base URL of the API, version included; requests go to `{baseURL}/models/{model}:{method}`. @default https://generativelanguage.googleapis.com/v1beta */
  baseURL: httpUrlSchema.default(GEMINI_BASE_URL),
  ...transportOptionsShape,
};

const connectionSchema = z.object(geminiConnectionOptionsShape);
type ConnectionOptions = z.output<typeof connectionSchema>;

/** One Gemini provider's way to the API: its HTTP client, and the key (to redact it from streamed errors). */
export interface GeminiConnection {
  http: HttpClient;
  apiKey: Secret;
  baseURL: string;
}

/**
 * The HTTP client of one Gemini provider: the key in `x-goog-api-key` (never in the URL, where proxies log it),
 * Google's error bodies read by `geminiError`. The key is resolved now, so a missing key fails at construction.
 *
 * @throws AxonError `MISSING_API_KEY`
 */
export function connectGemini(component: string, options: ConnectionOptions): GeminiConnection {
  const baseURL = options.baseURL.replace(/\/+$/, '');
  const apiKey = resolveApiKey(options.apiKey, { component, environmentVariable: 'GEMINI_API_KEY' });
  const http = new HttpClient({
    provider: component,
    baseURL,
    apiKey,
    apiKeyHeader: 'x-goog-api-key',
    keyFix: 'Check the key passed as apiKey or set in GEMINI_API_KEY.',
    describeStatus: (status, body, details) => geminiError(component, { status, body, details }),
    timeoutMs: options.timeoutMs,
    retry: retryPolicyFrom(options),
    fetch: options.fetch,
  });
  return { http, apiKey, baseURL };
}

/** The path of a model's method, `models/{model}:{method}`; a model given as `models/…` is not prefixed twice. */
export function modelPath(model: string, method: string): string {
  return `${model.startsWith('models/') ? model : `models/${model}`}:${method}`;
}
