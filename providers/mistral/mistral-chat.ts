import { z } from 'zod';
import type { ChatMessage, ChatOptions, ChatProvider } from '../../src/contracts/chat.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { assertChatMessages } from '../shared/chat-input.ts';
import { openAIChatBody, readOpenAIChatStream, readOpenAICompletion } from '../shared/openai-format.ts';
import { connectMistral, type MistralConnection, mistralConnectionOptionsShape } from './mistral-client.ts';

export const mistralChatOptionsSchema = z
  .object({
    /** Chat model, e.g. `mistral-medium-latest`, `mistral-small-latest`, `mistral-large-latest`. @default mistral-small-latest */
    model: z.string().min(1).default('mistral-small-latest'),
    /** Sampling temperature for every call unless a call sets its own. Leave out for the model's default. */
    temperature: z.number().min(0).max(2).optional(),
    /** Upper bound on generated tokens (`max_tokens`) for every call unless a call sets its own. */
    maxTokens: z.number().int().positive().optional(),
    ...mistralConnectionOptionsShape,
    /** Time limit of one attempt in milliseconds; for `stream`, of the wait for each chunk. @default 120000 */
    timeoutMs: z.number().int().positive().default(120_000),
  })
  .strict();

export type MistralChatOptions = z.input<typeof mistralChatOptionsSchema>;

const NAME = 'mistral-chat';

/**
 * Mistral's chat completions (`POST {baseURL}/chat/completions`). The wire format is OpenAI's, read by the same
 * code (`providers/shared/openai-format.ts`), with Mistral's differences: the limit is always `max_tokens`, no
 * `stream_options` is sent (Mistral puts the usage in the last chunk unasked, and refuses fields it does not
 * know), the finish reason `model_length` (the context is full) counts as cut off, and errors come as
 * `{object: "error", message, type}` or, for validation, `{detail: [...]}`.
 *
 * @example new MistralChat({ model: 'mistral-small-latest' })   // MISTRAL_API_KEY
 */
export class MistralChat implements ChatProvider {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'mistral_ai';
  readonly model: string;
  readonly baseURL: string;
  readonly #connection: MistralConnection;
  readonly #temperature: number | undefined;
  readonly #maxTokens: number | undefined;

  constructor(options: MistralChatOptions = {}) {
    const parsed = parseOptions(mistralChatOptionsSchema, options, NAME);
    this.#connection = connectMistral(NAME, parsed);
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
    const response = await this.#connection.http.postJson('chat/completions', { ...this.#body(messages, options), stream: false }, { signal: options.signal });
    const { text, usage } = readOpenAICompletion(NAME, response.status, response.body);
    options.onUsage?.(usage);
    return text;
  }

  /** The reply as text deltas. Opening the stream is retried; nothing after the first chunk. */
  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<string> {
    assertChatMessages(messages, NAME);
    const events = this.#connection.http.postEventStream('chat/completions', { ...this.#body(messages, options), stream: true }, { signal: options.signal });
    yield* readOpenAIChatStream(NAME, events, options, (chunk) => this.#connection.streamedError(chunk), { model_length: 'length' });
  }

  #body(messages: ChatMessage[], options: ChatOptions) {
    return openAIChatBody(messages, options, { model: this.model, temperature: this.#temperature, maxTokens: this.#maxTokens, limitField: 'max_tokens' });
  }
}
