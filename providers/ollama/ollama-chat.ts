import { z } from 'zod';
import type { ChatMessage, ChatOptions, ChatProvider } from '../../src/contracts/chat.ts';
import type { Usage } from '../../src/contracts/usage.ts';
import { type HttpClient, invalidResponseError } from '../../src/runtime/http.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import type { Secret } from '../../src/runtime/secret.ts';
import { parseEventObject } from '../../src/runtime/server-sent-events.ts';
import { StreamFinish } from '../shared/chat-finish.ts';
import { assertChatMessages } from '../shared/chat-input.ts';
import { usageFromCounts } from '../shared/usage.ts';
import { connectOllama, ollamaConnectionOptionsShape, ollamaError } from './ollama-client.ts';

export const ollamaChatOptionsSchema = z
  .object({
    /** A model pulled on the server, e.g. `llama3.1`, `qwen2.5:7b`, `mistral`. @default llama3.1 */
    model: z.string().min(1).default('llama3.1'),
    /** Sampling temperature (`options.temperature`) for every call unless a call sets its own. Leave out for the model's default. */
    temperature: z.number().min(0).max(2).optional(),
    /** Upper bound on generated tokens (`options.num_predict`) for every call unless a call sets its own. */
    maxTokens: z.number().int().positive().optional(),
    ...ollamaConnectionOptionsShape,
    /** Time limit of one attempt in milliseconds (a cold model loads first); for `stream`, of the wait for each line. @default 300000 */
    timeoutMs: z.number().int().positive().default(300_000),
  })
  .strict();

export type OllamaChatOptions = z.input<typeof ollamaChatOptionsSchema>;

const NAME = 'ollama-chat';

/**
 * Chat through Ollama's native API (`POST {host}/api/chat`), not its OpenAI-compatible one: the options go in
 * `options` (`temperature`, `num_predict`), the model's residence in `keep_alive`, and `stream` reads
 * newline-delimited JSON, one `{message: {content}, done}` object a line, the last with `done: true`,
 * `done_reason` and the counts. Usage is `prompt_eval_count` in and `eval_count` out (Ollama leaves the first
 * out when the whole prompt came from its cache; then only the output is known). No key.
 *
 * @example new OllamaChat({ model: 'llama3.1' })   // a local `ollama serve`
 */
export class OllamaChat implements ChatProvider {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'ollama';
  readonly model: string;
  readonly host: string;
  readonly #http: HttpClient;
  /** The key a proxy in front of the server expects, redacted from the errors it reports. */
  readonly #apiKey: Secret | undefined;
  readonly #temperature: number | undefined;
  readonly #maxTokens: number | undefined;
  readonly #keepAlive: string | number | undefined;

  constructor(options: OllamaChatOptions = {}) {
    const parsed = parseOptions(ollamaChatOptionsSchema, options, NAME);
    ({ http: this.#http, host: this.host, apiKey: this.#apiKey } = connectOllama(NAME, parsed));
    this.model = parsed.model;
    this.#temperature = parsed.temperature;
    this.#maxTokens = parsed.maxTokens;
    this.#keepAlive = parsed.keepAlive;
  }

  /**
   * @throws ProviderError on a failed request (a model not pulled says how to pull it) or a reply without text.
   * @throws AxonError `ABORTED` when `options.signal` fires.
   */
  async complete(messages: ChatMessage[], options: ChatOptions = {}): Promise<string> {
    assertChatMessages(messages, NAME);
    const response = await this.#http.postJson('api/chat', this.#body(messages, options, false), { signal: options.signal });
    const reply = (response.body ?? {}) as Record<string, unknown>;
    const content = (reply.message as { content?: unknown } | undefined)?.content;
    if (typeof content !== 'string') throw invalidResponseError(NAME, response.status, 'message.content is missing or not a string.');
    options.onUsage?.(usageOf(response.status, reply));
    return content;
  }

  /** The reply as text deltas, one per line. Opening the stream is retried; nothing after the first line. */
  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<string> {
    assertChatMessages(messages, NAME);
    const lines = this.#http.postLineStream('api/chat', this.#body(messages, options, true), { signal: options.signal });
    const finish = new StreamFinish(NAME, options.onFinish);
    let last: Record<string, unknown> | undefined;
    for await (const line of lines) {
      finish.event();
      const chunk = parseEventObject(line, NAME, 'line');
      if (chunk.error !== undefined) throw ollamaError(NAME, undefined, chunk, { secret: this.#apiKey });
      if (chunk.message === undefined && chunk.done !== true) throw invalidResponseError(NAME, 200, 'a streamed line has neither a message nor done: true.');
      const content = (chunk.message as { content?: unknown } | undefined)?.content;
      if (content !== undefined && typeof content !== 'string')
        throw invalidResponseError(NAME, 200, 'a streamed line has a message.content that is not a string.');
      if (typeof content === 'string' && content !== '') yield content;
      if (chunk.done === true) {
        last = chunk;
        finish.finished(typeof chunk.done_reason === 'string' ? chunk.done_reason : 'stop');
        break;
      }
    }
    finish.end();
    options.onUsage?.(last ? usageOf(200, last) : 'unknown');
  }

  #body(messages: ChatMessage[], options: ChatOptions, stream: boolean) {
    const temperature = options.temperature ?? this.#temperature;
    const maxTokens = options.maxTokens ?? this.#maxTokens;
    const modelOptions = {
      ...(temperature === undefined ? {} : { temperature }),
      ...(maxTokens === undefined ? {} : { num_predict: maxTokens }),
    };
    return {
      model: this.model,
      messages: messages.map(({ role, content }) => ({ role, content })),
      stream,
      ...(Object.keys(modelOptions).length === 0 ? {} : { options: modelOptions }),
      ...(this.#keepAlive === undefined ? {} : { keep_alive: this.#keepAlive }),
    };
  }
}

// --- Internal helpers ---

function usageOf(status: number, reply: Record<string, unknown>): Usage {
  return usageFromCounts(NAME, status, {
    inputTokens: { value: reply.prompt_eval_count, path: 'prompt_eval_count' },
    outputTokens: { value: reply.eval_count, path: 'eval_count' },
  });
}
