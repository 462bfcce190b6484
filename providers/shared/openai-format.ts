import type { ChatMessage, ChatOptions } from '../../src/contracts/chat.ts';
import type { Usage } from '../../src/contracts/usage.ts';
import type { Vector } from '../../src/document.ts';
import type { ProviderError } from '../../src/errors.ts';
import { type HttpClient, invalidResponseError, type ServerSentEvent } from '../../src/runtime/http.ts';
import { vectorsFromIndexedData } from '../../src/runtime/provider-responses.ts';
import { parseEventObject } from '../../src/runtime/server-sent-events.ts';
import { StreamFinish } from './chat-finish.ts';
import { usageFromCounts, usageObject } from './usage.ts';

/**
 * OpenAI's chat-completions and embeddings wire format, spoken by OpenAI itself and, with their own paths, keys
 * and quirks, by Azure OpenAI and Mistral: `{model, messages, temperature, max_tokens}` in, `choices[0].message
 * .content` out, streamed as `data: {chunk}` events ending in `data: [DONE]`; `{model, input}` in and
 * `data: [{index, embedding}]` out for embeddings; usage as `usage.prompt_tokens` / `completion_tokens`.
 */

/** What differs between the services that speak the format. */
export interface OpenAIFormatSettings {
  /** Sent as `model`; left out where the URL names the model (an Azure deployment). */
  model?: string;
  temperature?: number;
  maxTokens?: number;
  /** The field of the token limit: `max_completion_tokens` (OpenAI's newer models) or `max_tokens`. */
  limitField: 'max_tokens' | 'max_completion_tokens';
}

/** A chat completion's request body, as built here (without `stream`). */
export interface OpenAIChatBody {
  model?: string;
  messages: Array<{ role: ChatMessage['role']; content: string }>;
  temperature?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
}

/** The request body of a chat completion (without `stream`). */
export function openAIChatBody(messages: ChatMessage[], options: ChatOptions, settings: OpenAIFormatSettings): OpenAIChatBody {
  const temperature = options.temperature ?? settings.temperature;
  const maxTokens = options.maxTokens ?? settings.maxTokens;
  return {
    ...(settings.model === undefined ? {} : { model: settings.model }),
    messages: messages.map(({ role, content }) => ({ role, content })),
    ...(temperature === undefined ? {} : { temperature }),
    ...(maxTokens === undefined ? {} : { [settings.limitField]: maxTokens }),
  };
}

/** The text of a chat completion, and its usage. */
export function readOpenAICompletion(provider: string, status: number, body: unknown): { text: string; usage: Usage } {
  const reply = (body ?? {}) as { choices?: Array<{ message?: { content?: unknown } }>; usage?: unknown };
  const content = reply.choices?.[0]?.message?.content;
  if (typeof content !== 'string') throw invalidResponseError(provider, status, 'choices[0].message.content is missing or not a string.');
  return { text: content, usage: openAIChatUsage(provider, status, reply.usage) };
}

/** A chat completion's `usage` (`prompt_tokens`, `completion_tokens`), or `'unknown'` when the reply has none. */
export function openAIChatUsage(provider: string, status: number | undefined, value: unknown): Usage {
  const usage = usageObject(provider, status, value, 'usage');
  return usageFromCounts(provider, status, {
    inputTokens: { value: usage?.prompt_tokens, path: 'usage.prompt_tokens' },
    outputTokens: { value: usage?.completion_tokens, path: 'usage.completion_tokens' },
  });
}

/**
 * The deltas of a streamed chat completion: the text of `choices[0].delta.content`, in order, until `[DONE]`. The
 * finish reason goes to `onFinish` (mapped through `finishReasons`, for a service's own reasons), the usage of
 * whichever chunk carries one (OpenAI's last, with `stream_options.include_usage`; Mistral's last) to `onUsage`.
 * A chunk that is not JSON or has no `choices` array is `PROVIDER_RESPONSE_INVALID`; an error the service sends in
 * the stream is `streamedError`'s.
 */
export async function* readOpenAIChatStream(
  provider: string,
  events: AsyncIterable<ServerSentEvent>,
  options: ChatOptions,
  streamedError: (chunk: Record<string, unknown>) => ProviderError,
  finishReasons: Record<string, string> = {},
): AsyncGenerator<string> {
  const finish = new StreamFinish(provider, options.onFinish);
  let usage: unknown;
  for await (const { event: name, data } of events) {
    if (data.startsWith('[DONE]')) break;
    finish.event();
    const chunk = parseEventObject(data, provider, 'chunk');
    if (name === 'error' || (chunk.error !== undefined && chunk.error !== null)) throw streamedError(chunk);
    if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage;
    const choices = chunk.choices;
    if (!Array.isArray(choices)) throw invalidResponseError(provider, 200, 'a streamed chunk has no choices array.');
    const choice = choices[0] as { delta?: { content?: unknown }; finish_reason?: unknown } | undefined;
    if (typeof choice?.finish_reason === 'string') finish.finished(finishReasons[choice.finish_reason] ?? choice.finish_reason);
    const delta = choice?.delta?.content;
    if (delta !== undefined && delta !== null && typeof delta !== 'string') {
      throw invalidResponseError(provider, 200, 'a streamed chunk has a delta content that is not a string.');
    }
    if (typeof delta === 'string' && delta !== '') yield delta;
  }
  finish.end();
  options.onUsage?.(openAIChatUsage(provider, 200, usage));
}

/**
 * POST an embeddings request in the format and read the vectors (by `index`) and the usage (`usage.prompt_tokens`,
 * else `total_tokens`).
 */
export async function embedOpenAIFormat(
  http: HttpClient,
  path: string,
  body: Record<string, unknown>,
  expected: { provider: string; count: number; dimensions: number | undefined; signal?: AbortSignal },
): Promise<{ vectors: Vector[]; usage: Usage }> {
  const response = await http.postJson(path, body, { signal: expected.signal });
  const reply = (response.body ?? {}) as { data?: unknown; usage?: unknown };
  const vectors = vectorsFromIndexedData(expected.provider, response.status, reply.data, { count: expected.count, dimensions: expected.dimensions });
  return { vectors, usage: openAIEmbeddingsUsage(expected.provider, response.status, reply.usage) };
}

/** An embeddings reply's `usage.prompt_tokens` (or `total_tokens`, which some servers send alone), or `'unknown'`. */
export function openAIEmbeddingsUsage(provider: string, status: number | undefined, value: unknown): Usage {
  const usage = usageObject(provider, status, value, 'usage');
  const prompt = usage?.prompt_tokens;
  return usageFromCounts(provider, status, {
    inputTokens:
      prompt === undefined || prompt === null ? { value: usage?.total_tokens, path: 'usage.total_tokens' } : { value: prompt, path: 'usage.prompt_tokens' },
  });
}
