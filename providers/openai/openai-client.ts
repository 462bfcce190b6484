import type OpenAI from 'openai';
import { z } from 'zod';
import type { ProviderError } from '../../src/errors.ts';
import {
  HttpClient,
  invalidResponseError,
  messageFromErrorBody,
  networkError,
  type RequestContext,
  requestFailedError,
  retryAfterFromHeaders,
  retryPolicyFrom,
  type ServerSentEvent,
  statusError,
  streamedServiceError,
  timeoutError,
  transportOptionsShape,
} from '../../src/runtime/http.ts';
import { lazyModule } from '../../src/runtime/lazy-module.ts';
import { apiKeySchema, resolveApiKey, type Secret } from '../../src/runtime/secret.ts';

/** The official endpoint; any other `baseURL` is treated as an OpenAI-compatible server. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** Connection options shared by the OpenAI chat and embeddings providers. */
export const openAIConnectionOptionsShape = {
  /**
   * The API key: the key itself, `{ env: 'NAME' }`, or a `Secret`. Without one, `OPENAI_API_KEY` is read,
   * but only for the official endpoint: a key meant for OpenAI is never sent to another server. Local
   * servers (Ollama, LocalAI, vLLM, LM Studio) usually need none; then no Authorization header is sent.
   */
  apiKey: apiKeySchema.optional(),
  /**
   * Base URL of the API. Set it to use an OpenAI-compatible server, e.g. `http://localhost:11434/v1`
   * (Ollama), `http://localhost:8080/v1` (LocalAI), `http://localhost:8000/v1` (vLLM), `http://localhost:1234/v1` (LM Studio).
   * @default https://api.openai.com/v1
   */
  baseURL: z.url().optional(),
  /** OpenAI organization id, sent as `OpenAI-Organization`. */
  organization: z.string().min(1).optional(),
  /** OpenAI project id, sent as `OpenAI-Project`. */
  project: z.string().min(1).optional(),
  ...transportOptionsShape,
};

const connectionSchema = z.object(openAIConnectionOptionsShape);
type ConnectionOptions = z.output<typeof connectionSchema>;

/** A configured SDK client plus what the shared request runtime needs. Kept in private fields by providers. */
export interface OpenAIConnection {
  /** The SDK client, built on first use (the `openai` package is loaded then, not when Axon is imported). */
  client(): Promise<OpenAI>;
  /**
   * POST `body` to `{baseURL}/{path}` and read the reply as server-sent events, over `fetch` without the SDK
   * (`HttpClient.postEventStream`): the same key, headers, retries on opening, per-event time limit and error
   * mapping as the SDK calls. The SDK's stream reader prints the data of a `thread.…` event it cannot parse
   * through `console.error`, whatever its `logLevel`; here a reply is checked only by Axon's response checks.
   */
  events(path: string, body: unknown, signal: AbortSignal | undefined): AsyncGenerator<ServerSentEvent>;
  /** The error for an error the service reported inside a stream (`{"error": {"message": …}}`), the key redacted. */
  streamedError(body: unknown): ProviderError;
  baseURL: string;
  official: boolean;
  /** Per-request SDK options: the attempt's signal, the SDK's own retries off, the time limit. */
  requestOptions(signal: AbortSignal): { signal: AbortSignal; maxRetries: 0; timeout: number };
  /** The request context for one call. */
  context(signal: AbortSignal | undefined): RequestContext;
}

/**
 * Build the SDK client. Its own retries are disabled (`maxRetries: 0`) so there is exactly one retry policy,
 * Axon's; the caller's `fetch` and the time limit are passed through.
 */
export function connectOpenAI(component: string, options: ConnectionOptions): OpenAIConnection {
  const baseURL = (options.baseURL ?? OPENAI_BASE_URL).replace(/\/+$/, '');
  const official = isOfficialEndpoint(baseURL);
  const apiKey = resolveApiKey(options.apiKey, { component, environmentVariable: official ? 'OPENAI_API_KEY' : undefined, required: official });
  const keyFix = official ? 'Check the key passed as apiKey or set in OPENAI_API_KEY.' : 'Check the apiKey expected by the server at baseURL.';
  const retry = retryPolicyFrom(options);
  const settings = {
    // The SDK insists on a key; for keyless local servers a placeholder is given and the header removed below.
    apiKey: apiKey ? apiKey.reveal() : 'no-key',
    defaultHeaders: apiKey ? undefined : { Authorization: null },
    // Passed explicitly so OPENAI_BASE_URL, OPENAI_ORG_ID and OPENAI_PROJECT_ID cannot silently redirect requests.
    baseURL,
    organization: options.organization ?? null,
    project: options.project ?? null,
    maxRetries: 0,
    timeout: options.timeoutMs,
    fetch: options.fetch,
    logLevel: 'off' as const,
  };
  const headers: Record<string, string> = {};
  if (options.organization !== undefined) headers['openai-organization'] = options.organization;
  if (options.project !== undefined) headers['openai-project'] = options.project;
  const http = new HttpClient({ provider: component, baseURL, apiKey, keyFix, headers, timeoutMs: options.timeoutMs, retry, fetch: options.fetch });
  let client: Promise<OpenAI> | undefined;
  const describeError = (error: unknown) => describeOpenAIError(component, error, { apiKey, keyFix, baseURL, timeoutMs: options.timeoutMs });
  return {
    client: () => (client ??= openAISdk.load().then(({ default: OpenAISdk }) => new OpenAISdk(settings))),
    events: (path, body, signal) => http.postEventStream(path, body, { signal }),
    streamedError: (body) => streamedServiceError(component, { serverMessage: messageFromErrorBody(body), secret: apiKey }),
    baseURL,
    official,
    requestOptions: (signal) => ({ signal, maxRetries: 0, timeout: options.timeoutMs }),
    context: (signal) => ({ provider: component, timeoutMs: options.timeoutMs, retry, signal, describeError }),
  };
}

/** True for OpenAI's own API, where model defaults and `OPENAI_API_KEY` apply. */
export function isOfficialEndpoint(baseURL: string): boolean {
  try {
    return new URL(baseURL).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

// --- Internal helpers ---

const openAISdk = lazyModule('openai', 'openai', () => import('openai'));

function describeOpenAIError(
  component: string,
  error: unknown,
  context: { apiKey: Secret | undefined; keyFix: string; baseURL: string; timeoutMs: number },
): ProviderError {
  // An SDK error can only exist once the SDK was loaded; before that, nothing here is the SDK's.
  const OpenAI = openAISdk.loaded()?.default;
  if (OpenAI === undefined) return requestFailedError(component, error, context.apiKey);
  if (error instanceof OpenAI.APIConnectionTimeoutError) return timeoutError(component, context.timeoutMs);
  if (error instanceof OpenAI.APIConnectionError) return networkError(component, error.cause ?? error, context.baseURL);
  if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
    return statusError(component, error.status, {
      serverMessage: messageFromErrorBody({ error: error.error }) ?? messageFromErrorBody(error.error) ?? error.message.replace(/^\d{3}\s*/, ''),
      retryAfterMs: retryAfterFromHeaders(error.headers),
      keyFix: context.keyFix,
      secret: context.apiKey,
    });
  }
  if (error instanceof SyntaxError) return invalidResponseError(component, undefined, 'The response body is not valid JSON.');
  return requestFailedError(component, error, context.apiKey);
}
