import { HttpClient, retryPolicyFrom } from '../../src/runtime/http.ts';
import { type ApiKeyInput, resolveApiKey } from '../../src/runtime/secret.ts';

/** Where LocalAI listens when neither `host` nor `LOCALAI_HOST` says otherwise. */
export const LOCALAI_DEFAULT_HOST = 'http://localhost:8080';

/** What a LocalAI provider parses out of its options to reach the server. */
export type LocalAIConnectionOptions = Parameters<typeof retryPolicyFrom>[0] & {
  host?: string;
  apiKey?: ApiKeyInput;
  timeoutMs: number;
  fetch?: typeof fetch;
};

/**
 * The HTTP client of one LocalAI provider, rooted at the server's host (`host`, else `LOCALAI_HOST`, else
 * `http://localhost:8080`; paths are `v1/…`). A key is sent only when one is given or set in `LOCALAI_API_KEY`:
 * LocalAI needs none unless it was started with API keys.
 *
 * @param component The name used in errors, e.g. `localai-rerank`.
 */
export function connectLocalAI(component: string, options: LocalAIConnectionOptions): HttpClient {
  return new HttpClient({
    provider: component,
    baseURL: options.host || process.env.LOCALAI_HOST || LOCALAI_DEFAULT_HOST,
    apiKey: resolveApiKey(options.apiKey, { component, environmentVariable: 'LOCALAI_API_KEY', required: false }),
    keyFix: 'LocalAI was started with API keys: pass apiKey or set LOCALAI_API_KEY.',
    timeoutMs: options.timeoutMs,
    retry: retryPolicyFrom(options),
    fetch: options.fetch,
  });
}
