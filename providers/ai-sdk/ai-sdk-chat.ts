import { z } from 'zod';
import type { ChatMessage, ChatOptions, ChatProvider } from '../../src/contracts/chat.ts';
import type { Usage } from '../../src/contracts/usage.ts';
import { invalidResponseError, type RequestContext, request, retryPolicyFrom, streamRequest, transportOptionsShape } from '../../src/runtime/http.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import type { RetryPolicy } from '../../src/runtime/retry.ts';
import { StreamFinish } from '../shared/chat-finish.ts';
import { assertChatMessages } from '../shared/chat-input.ts';
import { usageFromCounts } from '../shared/usage.ts';
import { aiSdkError, aiSdkProviderError, assertSpecificationVersion, componentName, genAiProviderOf } from './ai-sdk-errors.ts';
import {
  type AISdkLanguageCallOptions,
  type AISdkLanguageModel,
  type AISdkLanguageUsage,
  type AISdkPromptMessage,
  type AISdkStreamPart,
  finishReasonOf,
  tokenCount,
  type AISdkProviderOptions,
} from './ai-sdk-specification.ts';

const { fetch: _fetch, ...transport } = transportOptionsShape;

export const aiSdkChatOptionsSchema = z
  .object({
    /** The name shown in traces and errors. @default `ai-sdk-<provider>` from the model's provider id */
    name: z
      .string()
      .regex(/^[a-z0-9-]+$/)
      .optional(),
    /** Sampling temperature for every call unless a call sets its own. Leave out for the model's default. */
    temperature: z.number().min(0).optional(),
    /** Upper bound on generated tokens (`maxOutputTokens`) for every call unless a call sets its own. */
    maxTokens: z.number().int().positive().optional(),
    /** Passed to the model as `providerOptions` (e.g. `{ openai: { reasoningEffort: 'low' } }`). */
    providerOptions: z.record(z.string(), z.record(z.string(), z.json())).optional(),
    ...transport,
    /** Time limit of one attempt in milliseconds; for `stream`, of the wait for each part. @default 120000 */
    timeoutMs: z.number().int().positive().default(120_000),
  })
  .strict();

export type AISdkChatOptions = z.input<typeof aiSdkChatOptionsSchema>;

/**
 * An AI SDK language model (`LanguageModelV2` of `ai` 5, `V3` of `ai` 6, `V4` of `ai` 7; from `@ai-sdk/openai`,
 * `@ai-sdk/anthropic`, …) as Axon's `ChatProvider`. It calls the model's `doGenerate` / `doStream` directly, under
 * Axon's retry policy and time limits (the AI SDK retries in `generateText`, which is not used); text parts are the
 * reply, the `finish` part gives the finish reason and the usage (`inputTokens`, `outputTokens`); an
 * `APICallError` becomes the `ProviderError` of its status, and the caller's signal is the model's `abortSignal`.
 *
 * @example new AISdkChat(openai('gpt-4o-mini'))
 */
export class AISdkChat implements ChatProvider {
  readonly name: string;
  /** `gen_ai.provider.name` of this model's call spans: the first part of the AI SDK provider id (`openai.chat` → `openai`). */
  readonly genAiProvider: string | undefined;
  readonly model: AISdkLanguageModel;
  readonly #temperature: number | undefined;
  readonly #maxTokens: number | undefined;
  readonly #providerOptions: AISdkProviderOptions | undefined;
  readonly #timeoutMs: number;
  readonly #retry: RetryPolicy;

  constructor(model: AISdkLanguageModel, options: AISdkChatOptions = {}) {
    const parsed = parseOptions(aiSdkChatOptionsSchema, options, 'ai-sdk-chat');
    this.name = parsed.name ?? componentName(model?.provider ?? '', 'ai-sdk-chat');
    this.genAiProvider = genAiProviderOf(model?.provider);
    assertSpecificationVersion(this.name, 'language', model);
    this.model = model;
    this.#temperature = parsed.temperature;
    this.#maxTokens = parsed.maxTokens;
    this.#providerOptions = parsed.providerOptions;
    this.#timeoutMs = parsed.timeoutMs;
    this.#retry = retryPolicyFrom(parsed);
  }

  /**
   * @throws ProviderError on a failed call or a reply without text parts.
   * @throws AxonError `ABORTED` when `options.signal` fires.
   */
  async complete(messages: ChatMessage[], options: ChatOptions = {}): Promise<string> {
    assertChatMessages(messages, this.name);
    const result = await request(this.#context(options.signal), async (signal) => await this.model.doGenerate(this.#callOptions(messages, options, signal)));
    if (!Array.isArray(result?.content)) throw invalidResponseError(this.name, undefined, 'the model returned no content list.');
    const text = result.content
      .filter((part): part is { type: 'text'; text: string } => part?.type === 'text' && typeof part.text === 'string')
      .map((part) => part.text)
      .join('');
    options.onUsage?.(this.#usage(result.usage));
    return text;
  }

  /** The reply as text deltas. Opening the stream is retried; nothing after its first part. */
  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<string> {
    assertChatMessages(messages, this.name);
    const parts = streamRequest(this.#context(options.signal), async (signal) => {
      const { stream } = await this.model.doStream(this.#callOptions(messages, options, signal));
      return readParts(stream);
    });
    const finish = new StreamFinish(this.name, options.onFinish);
    let usage: AISdkLanguageUsage | undefined;
    for await (const part of parts) {
      finish.event();
      if (part.type === 'error') throw aiSdkError(this.name, (part as { error: unknown }).error, options.signal);
      if (part.type === 'finish') {
        const finished = part as { finishReason?: Parameters<typeof finishReasonOf>[0]; usage?: AISdkLanguageUsage };
        const reason = finishReasonOf(finished.finishReason) ?? 'stop';
        finish.finished(FINISH_REASONS[reason] ?? reason);
        usage = finished.usage;
        continue;
      }
      if (part.type !== 'text-delta') continue;
      // V2 and later name the text `delta`; `textDelta` is read too, for providers still on the older name.
      const { delta, textDelta } = part as { delta?: unknown; textDelta?: unknown };
      const text = delta ?? textDelta;
      if (typeof text !== 'string') throw invalidResponseError(this.name, undefined, 'a text-delta part has no text.');
      if (text !== '') yield text;
    }
    finish.end();
    options.onUsage?.(this.#usage(usage));
  }

  #callOptions(messages: ChatMessage[], options: ChatOptions, signal: AbortSignal): AISdkLanguageCallOptions {
    const temperature = options.temperature ?? this.#temperature;
    const maxTokens = options.maxTokens ?? this.#maxTokens;
    return {
      prompt: messages.map(toPromptMessage),
      ...(temperature === undefined ? {} : { temperature }),
      ...(maxTokens === undefined ? {} : { maxOutputTokens: maxTokens }),
      ...(this.#providerOptions === undefined ? {} : { providerOptions: this.#providerOptions }),
      abortSignal: signal,
    };
  }

  #context(signal: AbortSignal | undefined): RequestContext {
    return { provider: this.name, timeoutMs: this.#timeoutMs, retry: this.#retry, signal, describeError: (error) => aiSdkProviderError(this.name, error) };
  }

  #usage(usage: AISdkLanguageUsage | undefined): Usage {
    return usageFromCounts(this.name, undefined, {
      inputTokens: { value: tokenCount(usage?.inputTokens), path: 'usage.inputTokens' },
      outputTokens: { value: tokenCount(usage?.outputTokens), path: 'usage.outputTokens' },
    });
  }
}

// --- Internal helpers ---

/** The AI SDK's unified finish reasons in the words `ChatFinish` uses. */
const FINISH_REASONS: Record<string, string> = { 'content-filter': 'content_filter', 'tool-calls': 'tool_calls' };

function toPromptMessage({ role, content }: ChatMessage): AISdkPromptMessage {
  return role === 'system' ? { role, content } : { role, content: [{ type: 'text', text: content }] };
}

/** A `ReadableStream` read as an async iterable that releases (and cancels) it when the reader leaves early. */
async function* readParts(stream: ReadableStream<AISdkStreamPart>): AsyncGenerator<AISdkStreamPart> {
  const reader = stream.getReader();
  let done = false;
  try {
    while (true) {
      const next = await reader.read();
      if (next.done) break;
      yield next.value;
    }
    done = true;
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
