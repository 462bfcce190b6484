import { z } from 'zod';
import type { ChatMessage, ChatOptions, ChatProvider } from '../../src/contracts/chat.ts';
import { invalidResponseError, request, streamRequest } from '../../src/runtime/http.ts';
import { StreamFinish } from '../shared/chat-finish.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { assertChatMessages } from '../shared/chat-input.ts';
import { type CohereConnection, cohereConnectionOptionsShape, connectCohere } from './cohere-client.ts';

export const cohereChatOptionsSchema = z
  .object({
    /** Chat model, e.g. `command-a-03-2025`, `command-r-plus-08-2024`. @default command-a-03-2025 */
    model: z.string().min(1).default('command-a-03-2025'),
    /** Sampling temperature for every call unless a call sets its own. Leave out for the model's default. */
    temperature: z.number().min(0).max(1).optional(),
    /** Upper bound on generated tokens for every call unless a call sets its own. */
    maxTokens: z.number().int().positive().optional(),
    ...cohereConnectionOptionsShape,
    /** Time limit of one attempt in milliseconds; for `stream`, of the wait for each event. @default 120000 */
    timeoutMs: z.number().int().positive().default(120_000),
  })
  .strict();

export type CohereChatOptions = z.input<typeof cohereChatOptionsSchema>;

const NAME = 'cohere-chat';

/**
 * Chat through `cohere-ai` (v2 chat). `stream` yields the text of `content-delta` events.
 *
 * @example new CohereChat({ model: 'command-a-03-2025' })   // COHERE_API_KEY
 */
export class CohereChat implements ChatProvider {
  readonly name = NAME;
  readonly model: string;
  readonly #connection: CohereConnection;
  readonly #temperature: number | undefined;
  readonly #maxTokens: number | undefined;

  constructor(options: CohereChatOptions = {}) {
    const parsed = parseOptions(cohereChatOptionsSchema, options, NAME);
    this.#connection = connectCohere(NAME, parsed);
    this.model = parsed.model;
    this.#temperature = parsed.temperature;
    this.#maxTokens = parsed.maxTokens;
  }

  /**
   * @throws ProviderError on a failed request or a reply without text content.
   * @throws AxonError `ABORTED` when `options.signal` fires.
   */
  async complete(messages: ChatMessage[], options: ChatOptions = {}): Promise<string> {
    assertChatMessages(messages, NAME);
    const client = await this.#connection.client();
    const { data, rawResponse } = await request(this.#connection.context(options.signal), (signal) =>
      client.chat(this.#body(messages, options), this.#connection.requestOptions(signal)).withRawResponse(),
    );
    const content = (data as { message?: { content?: unknown } } | null)?.message?.content;
    if (!Array.isArray(content)) throw invalidResponseError(NAME, rawResponse.status, 'message.content is missing or not an array.');
    return content
      .filter((part): part is { type: 'text'; text: string } => part?.type === 'text' && typeof part.text === 'string')
      .map((part) => part.text)
      .join('');
  }

  /** The reply as text deltas. Opening the stream is retried; nothing is retried after the first event. */
  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<string> {
    assertChatMessages(messages, NAME);
    const client = await this.#connection.client();
    const events = streamRequest(this.#connection.context(options.signal), (signal) =>
      client.chatStream(this.#body(messages, options), this.#connection.requestOptions(signal)),
    );
    const finish = new StreamFinish(NAME, options.onFinish);
    for await (const event of events) {
      finish.event();
      if (!event || typeof event !== 'object') throw invalidResponseError(NAME, 200, 'a streamed event is not an object.');
      if (event.type === 'message-end') {
        // The SDK hands the event over in camelCase; a raw event keeps the wire's snake_case.
        const delta = (event as { delta?: { finishReason?: unknown; finish_reason?: unknown } }).delta;
        const reason = delta?.finishReason ?? delta?.finish_reason;
        finish.finished(typeof reason === 'string' ? (COHERE_FINISH_REASONS[reason] ?? reason.toLowerCase()) : 'stop');
      }
      if (event.type !== 'content-delta') continue;
      const text = (event as { delta?: { message?: { content?: { text?: unknown } } } }).delta?.message?.content?.text;
      if (typeof text === 'string' && text !== '') yield text;
    }
    finish.end();
  }

  #body(messages: ChatMessage[], options: ChatOptions) {
    const temperature = options.temperature ?? this.#temperature;
    const maxTokens = options.maxTokens ?? this.#maxTokens;
    return {
      model: this.model,
      messages: messages.map(({ role, content }) => ({ role, content })),
      ...(temperature === undefined ? {} : { temperature }),
      ...(maxTokens === undefined ? {} : { maxTokens }),
    };
  }
}

/** Cohere's finish reasons in the words `ChatFinish` uses. */
const COHERE_FINISH_REASONS: Record<string, string> = {
  COMPLETE: 'stop',
  STOP_SEQUENCE: 'stop',
  MAX_TOKENS: 'length',
  TOOL_CALL: 'tool_calls',
  ERROR: 'error',
};
