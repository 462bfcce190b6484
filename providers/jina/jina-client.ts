import { HttpClient, retryPolicyFrom } from '../../src/runtime/http.ts';
import { type ApiKeyInput, resolveApiKey } from '../../src/runtime/secret.ts';

/** What the Jina embeddings and rerank providers parse out of their options to reach the API. */
export type JinaConnectionOptions = Parameters<typeof retryPolicyFrom>[0] & {
  apiKey?: ApiKeyInput;
  baseURL: string;
  timeoutMs: number;
  fetch?: typeof fetch;
};

/**
 * The HTTP client of one Jina provider, rooted at `baseURL` (paths are `embeddings`, `rerank`): the key from
 * `apiKey` or `JINA_API_KEY` (resolved now, so a missing key fails at construction), and the transport options
 * turned into the shared retry policy.
 *
 * @param component The name used in errors, e.g. `jina-rerank`.
 * @throws AxonError `MISSING_API_KEY`
 */
export function connectJina(component: string, options: JinaConnectionOptions): HttpClient {
  return new HttpClient({
    provider: component,
    baseURL: options.baseURL,
    apiKey: resolveApiKey(options.apiKey, { component, environmentVariable: 'JINA_API_KEY' }),
    keyFix: 'Check the key passed as apiKey or set in JINA_API_KEY.',
    timeoutMs: options.timeoutMs,
    retry: retryPolicyFrom(options),
    fetch: options.fetch,
  });
}
