import { z } from 'zod';
import { ConfigError, ProviderError } from '../../src/errors.ts';
import {
  cleanServerMessage,
  HttpClient,
  httpUrlProblem,
  httpUrlSchema,
  retryPolicyFrom,
  type StatusErrorDetails,
  statusError,
  streamedServiceError,
  transportOptionsShape,
} from '../../src/runtime/http.ts';
import { apiKeySchema, resolveApiKey } from '../../src/runtime/secret.ts';

/** The API version sent when none is given: the latest generally available one of the data-plane API. */
export const AZURE_OPENAI_API_VERSION = '2024-10-21';

/** Connection options shared by the Azure OpenAI chat and embeddings providers. */
export const azureOpenAIConnectionOptionsShape = {
  /** The resource's endpoint, e.g. `https://my-resource.openai.azure.com`. @default process.env.AZURE_OPENAI_ENDPOINT */
  endpoint: httpUrlSchema.optional(),
  /** The deployment's name (chosen when the model was deployed; it stands for the model in every request). */
  deployment: z.string().min(1),
  /** The data-plane API version, sent as the `api-version` query parameter. @default 2024-10-21 */
  apiVersion: z.string().min(1).default(AZURE_OPENAI_API_VERSION),
  /** The resource's key: the key itself, `{ env: 'NAME' }`, or a `Secret`; sent as `api-key`. @default process.env.AZURE_OPENAI_API_KEY */
  apiKey: apiKeySchema.optional(),
  ...transportOptionsShape,
};

const connectionSchema = z.object(azureOpenAIConnectionOptionsShape);
type ConnectionOptions = z.output<typeof connectionSchema>;

/** One Azure OpenAI provider's way to its deployment. */
export interface AzureOpenAIConnection {
  http: HttpClient;
  /** `{endpoint}/openai/deployments/{deployment}`, without the query. */
  deploymentURL: string;
  streamedError(chunk: unknown): ProviderError;
}

/**
 * The HTTP client of one Azure OpenAI provider: requests go to `{endpoint}/openai/deployments/{deployment}/…
 * ?api-version=…` with the key in `api-key`; the endpoint and key come from the options or `AZURE_OPENAI_ENDPOINT`
 * and `AZURE_OPENAI_API_KEY`, resolved now, so a missing one fails at construction.
 *
 * @throws ConfigError without an endpoint; AxonError `MISSING_API_KEY` without a key.
 */
export function connectAzureOpenAI(component: string, options: ConnectionOptions): AzureOpenAIConnection {
  const endpoint = options.endpoint ?? process.env.AZURE_OPENAI_ENDPOINT;
  if (!endpoint) {
    throw new ConfigError(
      [{ path: 'endpoint', code: 'invalid_type', message: 'is required: pass endpoint (https://<resource>.openai.azure.com) or set AZURE_OPENAI_ENDPOINT' }],
      {
        component,
        source: `${component} options`,
      },
    );
  }
  // The option is checked by its schema; the variable is checked here, by the same rule.
  const endpointProblem = options.endpoint === undefined ? httpUrlProblem(endpoint) : undefined;
  if (endpointProblem !== undefined) {
    throw new ConfigError([{ path: 'endpoint', code: 'invalid_format', message: `AZURE_OPENAI_ENDPOINT ${endpointProblem}` }], {
      component,
      source: `${component} options`,
    });
  }
  const apiKey = resolveApiKey(options.apiKey, { component, environmentVariable: 'AZURE_OPENAI_API_KEY' });
  const deploymentURL = `${endpoint.replace(/\/+$/, '')}/openai/deployments/${encodeURIComponent(options.deployment)}`;
  const http = new HttpClient({
    provider: component,
    baseURL: deploymentURL,
    apiKey,
    apiKeyHeader: 'api-key',
    query: { 'api-version': options.apiVersion },
    keyFix: 'Check the key passed as apiKey or set in AZURE_OPENAI_API_KEY (Keys and Endpoint, in the resource).',
    describeStatus: (status, body, details) => azureOpenAIError(component, status, body, details),
    timeoutMs: options.timeoutMs,
    retry: retryPolicyFrom(options),
    fetch: options.fetch,
  });
  return { http, deploymentURL, streamedError: (chunk) => streamedServiceError(component, { serverMessage: messageOf(chunk), secret: apiKey }) };
}

/**
 * The one mapping of Azure OpenAI's failures to Axon errors. Its bodies are OpenAI's `{error: {code, message}}`;
 * the code is kept in the message, and two get fixes of their own: `content_filter` (the prompt tripped the
 * resource's content filter: no retry changes that) and `DeploymentNotFound`.
 */
export function azureOpenAIError(provider: string, status: number, body: unknown, details: StatusErrorDetails): ProviderError {
  const code = codeOf(body);
  const serverMessage = messageOf(body) ?? details.serverMessage;
  const said = serverMessage === undefined ? undefined : cleanServerMessage(serverMessage, details.secret);
  if (code === 'content_filter') {
    return new ProviderError(`The prompt was refused by the resource's content filter: ${said ?? 'no detail'}`, {
      provider,
      code: 'PROVIDER_CONTENT_BLOCKED',
      status,
      fix: 'The question or the retrieved evidence tripped the content filter; rephrase it, review the documents, or adjust the filter of the deployment.',
    });
  }
  if (code === 'DeploymentNotFound') {
    return new ProviderError(`No such deployment: ${said ?? ''}`, {
      provider,
      code: 'PROVIDER_NOT_FOUND',
      status,
      fix: 'Check deployment (the deployment name, not the model name) and endpoint.',
    });
  }
  return statusError(provider, status, { ...details, serverMessage });
}

// --- Internal helpers ---

function errorOf(body: unknown): Record<string, unknown> | undefined {
  const error = body && typeof body === 'object' ? (body as { error?: unknown }).error : undefined;
  return error && typeof error === 'object' ? (error as Record<string, unknown>) : undefined;
}

function codeOf(body: unknown): string | undefined {
  const code = errorOf(body)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The service's message in an error body, with its code, as it was sent (redacted where it is shown). */
function messageOf(body: unknown): string | undefined {
  const error = errorOf(body);
  if (typeof error?.message !== 'string') return undefined;
  const code = typeof error.code === 'string' ? ` (${error.code})` : '';
  return `${error.message}${code}`;
}
