import { z } from 'zod';
import type { Usage } from '../../src/contracts/usage.ts';
import { usageFromCounts, usageObject } from '../shared/usage.ts';
import { HttpClient, httpUrlSchema, retryPolicyFrom, transportOptionsShape } from '../../src/runtime/http.ts';
import { apiKeySchema, resolveApiKey } from '../../src/runtime/secret.ts';

/** Cohere's production API. */
export const COHERE_BASE_URL = 'https://api.cohere.com';

/** Connection options shared by the Cohere embeddings, rerank and chat providers. */
export const cohereConnectionOptionsShape = {
  /** The API key: the key itself, `{ env: 'NAME' }`, or a `Secret`. @default process.env.COHERE_API_KEY */
  apiKey: apiKeySchema.optional(),
  /** Base URL of the API (a proxy, a private deployment); requests go to `{baseURL}/v2/…`. @default https://api.cohere.com */
  baseURL: httpUrlSchema.optional(),
  ...transportOptionsShape,
};

const connectionSchema = z.object(cohereConnectionOptionsShape);
type ConnectionOptions = z.output<typeof connectionSchema>;

/**
 * The HTTP client of one Cohere provider, rooted at `{baseURL}/v2` (paths are `embed`, `rerank`, `chat`). Cohere's v2 API is spoken over `fetch` directly, in its wire format
 * (snake_case fields, a bearer key, `{id, message}` error bodies), not through the `cohere-ai` SDK: the SDK checks
 * every reply against its own schema and prints what it rejects, with fragments of the body, through
 * `console.warn` whatever its logging setting. Here a reply is checked only by Axon's response checks, and a
 * wrong one is a `PROVIDER_RESPONSE_INVALID` error, never a line on stderr. The key is resolved now, so a missing
 * key fails at construction.
 *
 * @param component The name used in errors, e.g. `cohere-rerank`.
 * @throws AxonError `MISSING_API_KEY`
 */
export function connectCohere(component: string, options: ConnectionOptions): HttpClient {
  return new HttpClient({
    provider: component,
    baseURL: `${(options.baseURL ?? COHERE_BASE_URL).replace(/\/+$/, '')}/v2`,
    apiKey: resolveApiKey(options.apiKey, { component, environmentVariable: 'COHERE_API_KEY' }),
    keyFix: 'Check the key passed as apiKey or set in COHERE_API_KEY.',
    timeoutMs: options.timeoutMs,
    retry: retryPolicyFrom(options),
    fetch: options.fetch,
  });
}

/**
 * The usage of a Cohere reply: `billed_units` (what Cohere bills: `input_tokens`, `output_tokens`,
 * `search_units`) under `meta` (embed, rerank) or `usage` (chat, and a stream's `message-end` delta), else the
 * chat's raw `tokens` counts; `'unknown'` when there are none.
 */
export function cohereBilledUsage(component: string, status: number, body: unknown, field: 'meta' | 'usage'): Usage {
  const holder = usageObject(component, status, (body as Record<string, unknown> | null | undefined)?.[field], field);
  const billed = usageObject(component, status, holder?.billed_units, `${field}.billed_units`);
  const counted = billed ?? usageObject(component, status, holder?.tokens, `${field}.tokens`);
  const path = billed ? `${field}.billed_units` : `${field}.tokens`;
  return usageFromCounts(component, status, {
    inputTokens: { value: counted?.input_tokens, path: `${path}.input_tokens` },
    outputTokens: { value: counted?.output_tokens, path: `${path}.output_tokens` },
    searchUnits: { value: counted?.search_units, path: `${path}.search_units` },
  });
}
