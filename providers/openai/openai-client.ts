import type OpenAI from 'openai';
import { z } from 'zod';
import type { ProviderError } from '../../src/errors.ts';
import {
  httpUrlSchema,
  invalidResponseError,
  messageFromErrorBody,
  networkError,
  request,
  requestFailedError,
  retryAfterFromHeaders,
  retryPolicyFrom,
  type ServerSentEvent,
  statusError,
  streamedServiceError,
  streamRequest,
  timeoutError,
  transportOptionsShape,
} from '../../src/runtime/http.ts';
import { lazyModule, optionalPackage } from '../../src/runtime/lazy-module.ts';
import { apiKeySchema, resolveApiKey, type Secret } from '../../src/runtime/secret.ts';
import { readServerSentEvents } from '../../src/runtime/server-sent-events.ts';

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
  baseURL: httpUrlSchema.optional(),
  /** OpenAI organization id, sent as `OpenAI-Organization`. */
  organization: z.string().min(1).optional(),
  /** OpenAI project id, sent as `OpenAI-Project`. */
  project: z.string().min(1).optional(),
  ...transportOptionsShape,
};

const connectionSchema = z.object(openAIConnectionOptionsShape);
type ConnectionOptions = z.output<typeof connectionSchema>;

/** What one SDK call is given: the attempt's signal, the SDK's own retries off, the time limit. */
export interface OpenAIRequestOptions {
  signal: AbortSignal;
  maxRetries: 0;
  timeout: number;
  /** For a stream, `Accept: text/event-stream` (the SDK asks for JSON whatever the call). */
  headers?: Record<string, string>;
}

/**
 * One provider's way to the API, through the `openai` SDK for every call (the SDK builds the URL, sends the key,
 * organization and project headers, and reports failures as its error classes, mapped here in one place).
 * Kept in a private field by providers.
 */
export interface OpenAIConnection {
  /**
   * Run one SDK call under the shared policy (time limit per attempt, the caller's signal, Axon's retries).
   * The SDK is loaded on the first call, not when Axon is imported.
   */
  request<T>(signal: AbortSignal | undefined, call: (client: OpenAI, options: OpenAIRequestOptions) => Promise<T>): Promise<T>;
  /**
   * Open a streamed SDK call and read its reply as server-sent events, under `streamRequest`'s policy (opening
   * retried, then a time limit per event). `open` returns the SDK call's raw `Response` (`.asResponse()`): the body
   * is read by Axon's event reader, not the SDK's, which prints the data of an event it cannot parse through
   * `console.error` whatever its `logLevel`; a reply is checked by Axon's response checks only.
   */
  events(signal: AbortSignal | undefined, open: (client: OpenAI, options: OpenAIRequestOptions) => Promise<Response>): AsyncGenerator<ServerSentEvent>;
  /** The error for an error the service reported inside a stream (`{"error": {"message": …}}`), the key redacted. */
  streamedError(body: unknown): ProviderError;
  baseURL: string;
  official: boolean;
}

/**
 * Connect one provider to the API. The SDK client's own retries are disabled (`maxRetries: 0`) so there is
 * exactly one retry policy, Axon's; the caller's `fetch` and the time limit are passed through.
 *
 * @throws AxonError `MISSING_API_KEY` for the official endpoint without a key.
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
  let client: Promise<OpenAI> | undefined;
  const connect = () => (client ??= openAISdk.load().then(({ default: OpenAISdk }) => new OpenAISdk(settings)));
  const describeError = (error: unknown) => describeOpenAIError(component, error, { apiKey, keyFix, baseURL, timeoutMs: options.timeoutMs });
  // Reading a stream's body happens outside the SDK: a failure there (a reset connection) is a network failure.
  const describeStreamError = (error: unknown) => (isSdkError(error) ? describeError(error) : networkError(component, error, baseURL));
  const context = (signal: AbortSignal | undefined, describe = describeError) => ({
    provider: component,
    timeoutMs: options.timeoutMs,
    retry,
    signal,
    describeError: describe,
  });
  const requestOptions = (signal: AbortSignal): OpenAIRequestOptions => ({ signal, maxRetries: 0, timeout: options.timeoutMs });
  return {
    async request(signal, call) {
      const sdk = await connect();
      return request(context(signal), (attemptSignal) => call(sdk, requestOptions(attemptSignal)));
    },
    async *events(signal, open) {
      const sdk = await connect();
      yield* streamRequest(context(signal, describeStreamError), async (attemptSignal) => {
        const response = await open(sdk, { ...requestOptions(attemptSignal), headers: { accept: 'text/event-stream' } });
        return readServerSentEvents(response.body, component);
      });
    },
    streamedError: (body) => streamedServiceError(component, { serverMessage: messageFromErrorBody(body), secret: apiKey }),
    baseURL,
    official,
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

const openAISdk = lazyModule('openai', 'openai', () => import('openai').catch(optionalPackage));

function isSdkError(error: unknown): boolean {
  const OpenAI = openAISdk.loaded()?.default;
  return OpenAI !== undefined && error instanceof OpenAI.OpenAIError;
}

/** The one mapping of the SDK's failures to Axon's errors, for every OpenAI call, complete and stream alike. */
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
