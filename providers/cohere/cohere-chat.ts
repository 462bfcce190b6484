import { z } from 'zod';
import type { ChatMessage, ChatOptions, ChatProvider } from '../../src/contracts/chat.ts';
import { type HttpClient, invalidResponseError } from '../../src/runtime/http.ts';
import { StreamFinish } from '../shared/chat-finish.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { parseEventObject } from '../../src/runtime/server-sent-events.ts';
import { assertChatMessages } from '../shared/chat-input.ts';
import { cohereBilledUsage, cohereConnectionOptionsShape, connectCohere } from './cohere-client.ts';

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
 * Chat over HTTP (`POST {baseURL}/v2/chat`). `stream` asks for server-sent events and yields the text of
 * `content-delta` events.
 *
 * @example new CohereChat({ model: 'command-a-03-2025' })   // COHERE_API_KEY
 */
export class CohereChat implements ChatProvider {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'cohere';
  readonly model: string;
  readonly #http: HttpClient;
  readonly #temperature: number | undefined;
  readonly #maxTokens: number | undefined;

  constructor(options: CohereChatOptions = {}) {
    const parsed = parseOptions(cohereChatOptionsSchema, options, NAME);
    this.#http = connectCohere(NAME, parsed);
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
    const response = await this.#http.postJson('chat', { ...this.#body(messages, options), stream: false }, { signal: options.signal });
    const content = (response.body as { message?: { content?: unknown } } | null)?.message?.content;
    if (!Array.isArray(content)) throw invalidResponseError(NAME, response.status, 'message.content is missing or not an array.');
    const text = content
      .filter((part): part is { type: 'text'; text: string } => part?.type === 'text' && typeof part.text === 'string')
      .map((part) => part.text)
      .join('');
    options.onUsage?.(cohereBilledUsage(NAME, response.status, response.body, 'usage'));
    return text;
  }

  /** The reply as text deltas. Opening the stream is retried; nothing is retried after the first event. */
  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<string> {
    assertChatMessages(messages, NAME);
    const events = this.#http.postEventStream('chat', { ...this.#body(messages, options), stream: true }, { signal: options.signal });
    const finish = new StreamFinish(NAME, options.onFinish);
    let ending: unknown;
    for await (const { event: name, data } of events) {
      if (data === '[DONE]') break;
      finish.event();
      const event = parseEventObject(data, NAME);
      const type = typeof event.type === 'string' ? event.type : name;
      if (type === 'message-end') {
        const reason = (event as { delta?: { finish_reason?: unknown } }).delta?.finish_reason;
        finish.finished(typeof reason === 'string' ? (COHERE_FINISH_REASONS[reason] ?? reason.toLowerCase()) : 'stop');
        ending = (event as { delta?: unknown }).delta;
      }
      if (type !== 'content-delta') continue;
      // A reasoning model's delta may carry `thinking` and no text; text that is there must be a string.
      const content = (event as { delta?: { message?: { content?: { text?: unknown } } } }).delta?.message?.content;
      const text = content?.text;
      if (text !== undefined && typeof text !== 'string') throw invalidResponseError(NAME, 200, 'a content-delta event has a text that is not a string.');
      if (typeof text === 'string' && text !== '') yield text;
    }
    finish.end();
    options.onUsage?.(cohereBilledUsage(NAME, 200, ending, 'usage'));
  }

  #body(messages: ChatMessage[], options: ChatOptions) {
    const temperature = options.temperature ?? this.#temperature;
    const maxTokens = options.maxTokens ?? this.#maxTokens;
    return {
      model: this.model,
      messages: messages.map(({ role, content }) => ({ role, content })),
      ...(temperature === undefined ? {} : { temperature }),
      ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
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
