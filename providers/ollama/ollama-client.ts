import { z } from 'zod';
import { ProviderError } from '../../src/errors.ts';
import {
  cleanServerMessage,
  HttpClient,
  httpUrlProblem,
  retryPolicyFrom,
  type StatusErrorDetails,
  statusError,
  transportOptionsShape,
} from '../../src/runtime/http.ts';
import { apiKeySchema, resolveApiKey, type Secret } from '../../src/runtime/secret.ts';

/** Connection options shared by the Ollama chat and embeddings providers. */
export const ollamaConnectionOptionsShape = {
  /**
   * Where Ollama listens; requests go to `{host}/api/chat` and `{host}/api/embed`. A bare `host:port` gets `http://`,
   * as Ollama reads `OLLAMA_HOST`. @default process.env.OLLAMA_HOST, else http://localhost:11434
   */
  host: z
    .string()
    .min(1)
    .superRefine((value, context) => {
      const problem = httpUrlProblem(normaliseHost(value));
      if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  /** Only behind a proxy that wants one (Ollama itself has no keys): sent as `Authorization: Bearer …`. */
  apiKey: apiKeySchema.optional(),
  /** How long Ollama keeps the model in memory after a request (`keep_alive`, e.g. `5m`, `1h`, `-1`). Leave out for Ollama's default (5 minutes). */
  keepAlive: z.union([z.string().min(1), z.number()]).optional(),
  ...transportOptionsShape,
};

const connectionSchema = z.object(ollamaConnectionOptionsShape);
type ConnectionOptions = z.output<typeof connectionSchema>;

/**
 * The HTTP client of one Ollama provider. `OLLAMA_HOST` is read as Ollama reads it: a bare `host:port` (as
 * `ollama serve` is often configured) gets `http://`.
 */
export function connectOllama(component: string, options: ConnectionOptions): { http: HttpClient; host: string; apiKey: Secret | undefined } {
  const host = normaliseHost(options.host ?? process.env.OLLAMA_HOST ?? 'http://localhost:11434');
  const apiKey = resolveApiKey(options.apiKey, { component, required: false });
  const http = new HttpClient({
    provider: component,
    baseURL: host,
    apiKey,
    keyFix: 'Ollama has no keys: a proxy in front of it refused the request. Check the apiKey it expects.',
    describeStatus: (status, body, details) => ollamaError(component, status, body, details),
    timeoutMs: options.timeoutMs,
    retry: retryPolicyFrom(options),
    fetch: options.fetch,
  });
  return { http, host, apiKey };
}

/**
 * The one mapping of Ollama's failures to Axon errors. Its error body is `{error: "…"}`, in a reply or as a line of
 * a stream; a model that is not pulled (404 `model "x" not found, try pulling it first`) gets the command that fixes it.
 */
export function ollamaError(provider: string, status: number | undefined, body: unknown, details: StatusErrorDetails = {}): ProviderError {
  const serverMessage = typeof (body as { error?: unknown } | null)?.error === 'string' ? (body as { error: string }).error : details.serverMessage;
  const said = serverMessage === undefined ? undefined : cleanServerMessage(serverMessage, details.secret);
  const missingModel = said === undefined ? undefined : /model "([^"]+)" not found/i.exec(said)?.[1];
  if (missingModel !== undefined) {
    return new ProviderError(`The model is not on this Ollama server: ${said}`, {
      provider,
      code: 'PROVIDER_NOT_FOUND',
      status,
      fix: `Run \`ollama pull ${missingModel}\` on the server, or check the model name.`,
    });
  }
  if (status === undefined) {
    return new ProviderError(`The service reported an error in the stream: ${said ?? 'no detail'}`, {
      provider,
      fix: 'Ask again; if the error repeats, check the server log (`ollama serve`) and its memory.',
    });
  }
  return statusError(provider, status, { ...details, serverMessage });
}

// --- Internal helpers ---

function normaliseHost(host: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(host) ? host : `http://${host}`;
  return withScheme.replace(/\/+$/, '');
}
