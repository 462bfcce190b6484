import { z } from 'zod';
import type { ChatMessage, ChatOptions, ChatProvider } from '../../src/contracts/chat.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { assertChatMessages } from '../shared/chat-input.ts';
import { openAIChatBody, readOpenAIChatStream, readOpenAICompletion } from '../shared/openai-format.ts';
import { connectOpenAI, openAIConnectionOptionsShape, type OpenAIConnection } from './openai-client.ts';

export const openAIChatOptionsSchema = z
  .object({
    /** Chat model, e.g. `gpt-4o-mini`, or the name a compatible server gives its model (`llama3.1`). @default gpt-4o-mini */
    model: z.string().min(1).default('gpt-4o-mini'),
    /** Sampling temperature for every call unless a call sets its own. Leave out for the model's default. */
    temperature: z.number().min(0).max(2).optional(),
    /** Upper bound on generated tokens for every call unless a call sets its own. */
    maxTokens: z.number().int().positive().optional(),
    ...openAIConnectionOptionsShape,
    /**
     * Time limit of one attempt in milliseconds; for `stream`, of the wait for each chunk. Generation is slower
     * than embedding, hence the longer default.
     * @default 120000
     */
    timeoutMs: z.number().int().positive().default(120_000),
  })
  .strict();

export type OpenAIChatOptions = z.input<typeof openAIChatOptionsSchema>;

const NAME = 'openai-chat';

/**
 * Chat completions: OpenAI itself, or any OpenAI-compatible server via `baseURL`, through the `openai` SDK for
 * `complete` and `stream` alike (one transport, one error mapping; the SDK is loaded on the first call).
 *
 * @example
 * new OpenAIChat({ model: 'gpt-4o-mini' })                                           // OPENAI_API_KEY
 * new OpenAIChat({ model: 'llama3.1', baseURL: 'http://localhost:11434/v1' })        // Ollama, no key
 */
export class OpenAIChat implements ChatProvider {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'openai';
  readonly model: string;
  readonly baseURL: string;
  readonly #connection: OpenAIConnection;
  readonly #temperature: number | undefined;
  readonly #maxTokens: number | undefined;

  constructor(options: OpenAIChatOptions = {}) {
    const parsed = parseOptions(openAIChatOptionsSchema, options, NAME);
    this.#connection = connectOpenAI(NAME, parsed);
    this.model = parsed.model;
    this.baseURL = this.#connection.baseURL;
    this.#temperature = parsed.temperature;
    this.#maxTokens = parsed.maxTokens;
  }

  /**
   * @throws ProviderError on a failed request or a reply without text.
   * @throws AxonError `ABORTED` when `options.signal` fires.
   */
  async complete(messages: ChatMessage[], options: ChatOptions = {}): Promise<string> {
    assertChatMessages(messages, NAME);
    const { data, response } = await this.#connection.request(options.signal, (client, requestOptions) =>
      client.chat.completions.create(this.#body(messages, options), requestOptions).withResponse(),
    );
    const { text, usage } = readOpenAICompletion(NAME, response.status, data);
    options.onUsage?.(usage);
    return text;
  }

  /**
   * The reply as text deltas, from server-sent events (`POST {baseURL}/chat/completions` with `stream: true`: one
   * `data: {chunk}` event per delta, then `data: [DONE]`). The SDK sends the request; its raw response body is read
   * by Axon's event reader rather than the SDK's, which prints event data it cannot parse. Opening the stream is
   * retried; nothing is retried after the first chunk arrives. A chunk that is not JSON or has no `choices` array is
   * `PROVIDER_RESPONSE_INVALID`; an error the service sends in the stream is a `ProviderError` with its message.
   * Usage: OpenAI is asked for it (`stream_options.include_usage`); a compatible server's is read when it sends one,
   * else it is `'unknown'`.
   */
  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<string> {
    assertChatMessages(messages, NAME);
    // OpenAI sends the usage in a last chunk only when asked; compatible servers may refuse the field, so only it is asked.
    const usage = this.#connection.official ? { stream_options: { include_usage: true } } : {};
    const body = { ...this.#body(messages, options), stream: true as const, ...usage };
    const events = this.#connection.events(options.signal, (client, requestOptions) => client.chat.completions.create(body, requestOptions).asResponse());
    yield* readOpenAIChatStream(NAME, events, options, (chunk) => this.#connection.streamedError(chunk));
  }

  #body(messages: ChatMessage[], options: ChatOptions) {
    // OpenAI's newer models reject `max_tokens`; compatible servers often only know it.
    const limitField = this.#connection.official ? 'max_completion_tokens' : 'max_tokens';
    return { ...openAIChatBody(messages, options, { temperature: this.#temperature, maxTokens: this.#maxTokens, limitField }), model: this.model };
  }
}
