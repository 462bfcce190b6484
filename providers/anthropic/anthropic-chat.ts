import { z } from 'zod';
import type { ChatMessage, ChatOptions, ChatProvider } from '../../src/contracts/chat.ts';
import type { Usage } from '../../src/contracts/usage.ts';
import { AxonError } from '../../src/errors.ts';
import { HttpClient, httpUrlSchema, invalidResponseError, retryPolicyFrom, type ServerSentEvent, transportOptionsShape } from '../../src/runtime/http.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { apiKeySchema, resolveApiKey, type Secret } from '../../src/runtime/secret.ts';
import { parseEventObject } from '../../src/runtime/server-sent-events.ts';
import { StreamFinish } from '../shared/chat-finish.ts';
import { assertChatMessages } from '../shared/chat-input.ts';
import { usageFromCounts, usageObject } from '../shared/usage.ts';
import { anthropicError } from './anthropic-error.ts';

export const anthropicChatOptionsSchema = z
  .object({
    /** Claude model, e.g. `claude-sonnet-4-5`, `claude-haiku-4-5`, `claude-opus-4-1`. @default claude-sonnet-4-5 */
    model: z.string().min(1).default('claude-sonnet-4-5'),
    /**
     * Upper bound on generated tokens for every call unless a call sets its own. The Messages API requires one
     * (`max_tokens`), so Axon always sends it. @default 1024
     */
    maxTokens: z.number().int().positive().default(1024),
    /** Sampling temperature (0 to 1) for every call unless a call sets its own. Leave out for the model's default. */
    temperature: z.number().min(0).max(1).optional(),
    /** The API key: the key itself, `{ env: 'NAME' }`, or a `Secret`; sent as `x-api-key`. @default process.env.ANTHROPIC_API_KEY */
    apiKey: apiKeySchema.optional(),
    /** Base URL of the API (a proxy, a gateway); requests go to `{baseURL}/v1/messages`. @default https://api.anthropic.com */
    baseURL: httpUrlSchema.default('https://api.anthropic.com'),
    /** The API version, sent as `anthropic-version`. @default 2023-06-01 */
    anthropicVersion: z.string().min(1).default('2023-06-01'),
    ...transportOptionsShape,
    /** Time limit of one attempt in milliseconds; for `stream`, of the wait for each event. @default 120000 */
    timeoutMs: z.number().int().positive().default(120_000),
  })
  .strict();

export type AnthropicChatOptions = z.input<typeof anthropicChatOptionsSchema>;

const NAME = 'anthropic-chat';

/**
 * Claude through Anthropic's Messages API (`POST {baseURL}/v1/messages`), in its wire format: the key in
 * `x-api-key`, the `anthropic-version` header, system messages joined into the top-level `system` field (the API
 * has no system role in `messages`), `max_tokens` always sent. `stream` reads its server-sent events
 * (`message_start`, `content_block_delta`, `message_delta`, `message_stop`, `ping`, `error`); an overload
 * (HTTP 529, or an `overloaded_error` event before any text) is retried. Usage is Anthropic's
 * `usage.input_tokens` (plus cache reads and writes) and `output_tokens`.
 *
 * @example new AnthropicChat({ model: 'claude-sonnet-4-5' })   // ANTHROPIC_API_KEY
 */
export class AnthropicChat implements ChatProvider {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'anthropic';
  readonly model: string;
  readonly baseURL: string;
  readonly #http: HttpClient;
  readonly #apiKey: Secret | undefined;
  readonly #temperature: number | undefined;
  readonly #maxTokens: number;

  constructor(options: AnthropicChatOptions = {}) {
    const parsed = parseOptions(anthropicChatOptionsSchema, options, NAME);
    this.model = parsed.model;
    this.baseURL = parsed.baseURL.replace(/\/+$/, '');
    this.#temperature = parsed.temperature;
    this.#maxTokens = parsed.maxTokens;
    this.#apiKey = resolveApiKey(parsed.apiKey, { component: NAME, environmentVariable: 'ANTHROPIC_API_KEY' });
    this.#http = new HttpClient({
      provider: NAME,
      baseURL: this.baseURL,
      apiKey: this.#apiKey,
      apiKeyHeader: 'x-api-key',
      keyFix: 'Check the key passed as apiKey or set in ANTHROPIC_API_KEY.',
      headers: { 'anthropic-version': parsed.anthropicVersion },
      describeStatus: (status, body, details) => anthropicError(NAME, { status, body, details }),
      timeoutMs: parsed.timeoutMs,
      retry: retryPolicyFrom(parsed),
      fetch: parsed.fetch,
    });
  }

  /**
   * @throws ProviderError on a failed request or a reply whose `content` is not a list of blocks.
   * @throws AxonError `INVALID_MESSAGES` for a conversation of system messages only; `ABORTED` when `options.signal` fires.
   */
  async complete(messages: ChatMessage[], options: ChatOptions = {}): Promise<string> {
    const response = await this.#http.postJson('v1/messages', this.#body(messages, options, false), { signal: options.signal });
    const reply = (response.body ?? {}) as { content?: unknown; usage?: unknown };
    if (!Array.isArray(reply.content)) throw invalidResponseError(NAME, response.status, 'content is missing or not an array.');
    const text = reply.content
      .filter((block): block is { type: 'text'; text: string } => block?.type === 'text' && typeof block.text === 'string')
      .map((block) => block.text)
      .join('');
    const usage = usageObject(NAME, response.status, reply.usage, 'usage');
    options.onUsage?.(usageOf(response.status, usage && { usage, path: 'usage' }, usage && { usage, path: 'usage' }));
    return text;
  }

  /** The reply as text deltas. Opening the stream is retried, and so is an error event before any text; nothing after. */
  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<string> {
    const events = this.#http.postEventStream('v1/messages', this.#body(messages, options, true), {
      signal: options.signal,
      openedBy: (item) => this.#opened(item as ServerSentEvent),
    });
    const finish = new StreamFinish(NAME, options.onFinish);
    let started: Record<string, unknown> | undefined;
    let delta: Record<string, unknown> | undefined;
    for await (const { event: name, data } of events) {
      finish.event();
      const event = parseEventObject(data, NAME);
      const type = typeof event.type === 'string' ? event.type : name;
      if (type === 'error') throw anthropicError(NAME, { body: event, secret: this.#apiKey });
      if (type === 'message_start') started = usageObject(NAME, 200, (event.message as { usage?: unknown } | undefined)?.usage, 'message.usage');
      if (type === 'message_delta') {
        const reason = (event.delta as { stop_reason?: unknown } | undefined)?.stop_reason;
        if (typeof reason === 'string') finish.finished(FINISH_REASONS[reason] ?? reason);
        delta = usageObject(NAME, 200, event.usage, 'usage') ?? delta;
      }
      if (type === 'message_stop') break;
      if (type !== 'content_block_delta') continue;
      const content = event.delta as { type?: unknown; text?: unknown } | undefined;
      if (content?.type !== 'text_delta') continue;
      if (typeof content.text !== 'string') throw invalidResponseError(NAME, 200, 'a text_delta has a text that is not a string.');
      if (content.text !== '') yield content.text;
    }
    finish.end();
    options.onUsage?.(streamUsage(started, delta));
  }

  /** Opened once text (or the end) arrives; an `error` event before that fails the attempt, retried when it may pass. */
  #opened({ event: name, data }: ServerSentEvent): boolean {
    const event = parseEventObject(data, NAME);
    const type = typeof event.type === 'string' ? event.type : name;
    if (type === 'error') throw anthropicError(NAME, { body: event, secret: this.#apiKey });
    return type === 'content_block_delta' || type === 'message_delta' || type === 'message_stop';
  }

  #body(messages: ChatMessage[], options: ChatOptions, stream: boolean) {
    assertChatMessages(messages, NAME);
    const system = messages.filter((message) => message.role === 'system').map((message) => message.content);
    const turns = messages.filter((message) => message.role !== 'system').map(({ role, content }) => ({ role, content }));
    if (turns.length === 0) {
      throw new AxonError('INVALID_MESSAGES', 'messages hold only system messages; the Messages API needs at least one user message.', {
        component: NAME,
        fix: 'Add the user message to the conversation.',
        details: { argument: 'messages' },
      });
    }
    const temperature = options.temperature ?? this.#temperature;
    return {
      model: this.model,
      max_tokens: options.maxTokens ?? this.#maxTokens,
      ...(system.length === 0 ? {} : { system: system.join('\n\n') }),
      messages: turns,
      ...(temperature === undefined ? {} : { temperature }),
      stream,
    };
  }
}

// --- Internal helpers ---

/** Anthropic's stop reasons in the words `ChatFinish` uses. */
const FINISH_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

type UsageSource = { usage: Record<string, unknown>; path: string } | undefined;

/**
 * The usage of one reply from the `usage` object(s) that hold its input and output counts. Input tokens are
 * `input_tokens` plus the cache's reads and writes, which Anthropic counts apart.
 */
function usageOf(status: number, input: UsageSource, output: UsageSource): Usage {
  return usageFromCounts(NAME, status, {
    inputTokens:
      input &&
      ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'].map((field) => ({
        value: input.usage[field],
        path: `${input.path}.${field}`,
      })),
    outputTokens: output && { value: output.usage.output_tokens, path: `${output.path}.output_tokens` },
  });
}

/**
 * A stream's usage: `message_start` has the input, `message_delta` the final (cumulative) output and, in newer API
 * versions, the input again. `message_start`'s own `output_tokens` is a running count, never taken as the total.
 */
function streamUsage(started: Record<string, unknown> | undefined, delta: Record<string, unknown> | undefined): Usage {
  const deltaHasInput = delta !== undefined && delta.input_tokens !== undefined && delta.input_tokens !== null;
  const input: UsageSource = deltaHasInput ? { usage: delta, path: 'usage' } : started && { usage: started, path: 'message.usage' };
  return usageOf(200, input, delta && { usage: delta, path: 'usage' });
}
