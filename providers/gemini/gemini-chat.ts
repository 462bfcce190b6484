import { z } from 'zod';
import type { ChatMessage, ChatOptions, ChatProvider } from '../../src/contracts/chat.ts';
import type { Usage } from '../../src/contracts/usage.ts';
import { AxonError } from '../../src/errors.ts';
import { invalidResponseError, type ServerSentEvent } from '../../src/runtime/http.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { parseEventObject } from '../../src/runtime/server-sent-events.ts';
import { StreamFinish } from '../shared/chat-finish.ts';
import { assertChatMessages } from '../shared/chat-input.ts';
import { usageFromCounts, usageObject } from '../shared/usage.ts';
import { connectGemini, type GeminiConnection, geminiConnectionOptionsShape, modelPath } from './gemini-client.ts';
import { emptyReplyError, geminiError } from './gemini-error.ts';

export const geminiChatOptionsSchema = z
  .object({
    /** Gemini model, e.g. `gemini-2.5-flash`, `gemini-2.5-pro`, `gemini-2.0-flash`. @default gemini-2.5-flash */
    model: z.string().min(1).default('gemini-2.5-flash'),
    /** Sampling temperature (0 to 2) for every call unless a call sets its own. Leave out for the model's default. */
    temperature: z.number().min(0).max(2).optional(),
    /** Upper bound on generated tokens (`maxOutputTokens`) for every call unless a call sets its own. */
    maxTokens: z.number().int().positive().optional(),
    ...geminiConnectionOptionsShape,
    /** Time limit of one attempt in milliseconds; for `stream`, of the wait for each event. @default 120000 */
    timeoutMs: z.number().int().positive().default(120_000),
  })
  .strict();

export type GeminiChatOptions = z.input<typeof geminiChatOptionsSchema>;

const NAME = 'gemini-chat';

/**
 * Gemini through Google's Gemini API: `POST {baseURL}/models/{model}:generateContent`, and
 * `:streamGenerateContent?alt=sse` for `stream` (each event a whole `GenerateContentResponse` holding the next
 * text). Assistant turns are sent with the role `model`, system messages as `systemInstruction`. Usage is
 * `usageMetadata`: `promptTokenCount` in, `candidatesTokenCount` plus `thoughtsTokenCount` (a thinking model's
 * reasoning, billed as output) out. A prompt the service blocks is an error, never an empty answer.
 *
 * @example new GeminiChat({ model: 'gemini-2.5-flash' })   // GEMINI_API_KEY
 */
export class GeminiChat implements ChatProvider {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'gcp.gemini';
  readonly model: string;
  readonly baseURL: string;
  readonly #connection: GeminiConnection;
  readonly #temperature: number | undefined;
  readonly #maxTokens: number | undefined;

  constructor(options: GeminiChatOptions = {}) {
    const parsed = parseOptions(geminiChatOptionsSchema, options, NAME);
    this.#connection = connectGemini(NAME, parsed);
    this.model = parsed.model;
    this.baseURL = this.#connection.baseURL;
    this.#temperature = parsed.temperature;
    this.#maxTokens = parsed.maxTokens;
  }

  /**
   * @throws ProviderError on a failed request, a blocked prompt, or a reply without candidates.
   * @throws AxonError `ABORTED` when `options.signal` fires.
   */
  async complete(messages: ChatMessage[], options: ChatOptions = {}): Promise<string> {
    const body = this.#body(messages, options);
    const response = await this.#connection.http.postJson(modelPath(this.model, 'generateContent'), body, { signal: options.signal });
    const reply = (response.body ?? {}) as Record<string, unknown>;
    const candidate = this.#candidate(reply, response.status);
    const parts = (candidate.content as { parts?: unknown } | undefined)?.parts;
    if (parts === undefined && typeof candidate.finishReason === 'string' && candidate.finishReason !== 'STOP') {
      throw emptyReplyError(NAME, 'reply', candidate.finishReason);
    }
    const text = textOf(parts, response.status, 'candidates[0].content.parts');
    options.onUsage?.(usageOf(response.status, reply.usageMetadata));
    return text;
  }

  /** The reply as text deltas. Opening the stream is retried, and so is an error chunk before any text; nothing after. */
  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<string> {
    const body = this.#body(messages, options);
    const events = this.#connection.http.postEventStream(modelPath(this.model, 'streamGenerateContent?alt=sse'), body, {
      signal: options.signal,
      openedBy: (item) => this.#opened(item as ServerSentEvent),
    });
    const finish = new StreamFinish(NAME, options.onFinish);
    let usage: unknown;
    for await (const { data } of events) {
      finish.event();
      const chunk = parseEventObject(data, NAME, 'chunk');
      if (chunk.error !== undefined) throw geminiError(NAME, { body: chunk, secret: this.#connection.apiKey });
      // Every chunk repeats the running usage; the last one holds the totals.
      if (chunk.usageMetadata !== undefined) usage = chunk.usageMetadata;
      const candidate = this.#candidate(chunk, 200);
      if (typeof candidate.finishReason === 'string') finish.finished(FINISH_REASONS[candidate.finishReason] ?? candidate.finishReason.toLowerCase());
      const parts = (candidate.content as { parts?: unknown } | undefined)?.parts;
      if (parts === undefined) continue;
      const text = textOf(parts, 200, 'candidates[0].content.parts');
      if (text !== '') yield text;
    }
    finish.end();
    options.onUsage?.(usageOf(200, usage));
  }

  /** Opened once a chunk holds a candidate; an error chunk before that fails the attempt, retried when it may pass. */
  #opened({ data }: ServerSentEvent): boolean {
    const chunk = parseEventObject(data, NAME, 'chunk');
    if (chunk.error !== undefined) throw geminiError(NAME, { body: chunk, secret: this.#connection.apiKey });
    return true;
  }

  /** The first candidate; a reply with none is a blocked prompt (with its reason) or no reply at all. */
  #candidate(reply: Record<string, unknown>, status: number): Record<string, unknown> {
    const candidates = reply.candidates;
    if (Array.isArray(candidates) && candidates[0] && typeof candidates[0] === 'object') return candidates[0] as Record<string, unknown>;
    const blockReason = (reply.promptFeedback as { blockReason?: unknown } | undefined)?.blockReason;
    if (typeof blockReason === 'string') throw emptyReplyError(NAME, 'prompt', blockReason);
    throw invalidResponseError(NAME, status, 'candidates is missing or empty, and no promptFeedback.blockReason says why.');
  }

  #body(messages: ChatMessage[], options: ChatOptions) {
    assertChatMessages(messages, NAME);
    const system = messages.filter((message) => message.role === 'system').map((message) => ({ text: message.content }));
    const contents = messages
      .filter((message) => message.role !== 'system')
      .map((message) => ({ role: message.role === 'assistant' ? 'model' : 'user', parts: [{ text: message.content }] }));
    if (contents.length === 0) {
      throw new AxonError('INVALID_MESSAGES', 'messages hold only system messages; the Gemini API needs at least one user message.', {
        component: NAME,
        fix: 'Add the user message to the conversation.',
        details: { argument: 'messages' },
      });
    }
    const temperature = options.temperature ?? this.#temperature;
    const maxTokens = options.maxTokens ?? this.#maxTokens;
    const generationConfig = {
      ...(temperature === undefined ? {} : { temperature }),
      ...(maxTokens === undefined ? {} : { maxOutputTokens: maxTokens }),
    };
    return {
      contents,
      ...(system.length === 0 ? {} : { systemInstruction: { parts: system } }),
      ...(Object.keys(generationConfig).length === 0 ? {} : { generationConfig }),
    };
  }
}

// --- Internal helpers ---

/** Gemini's finish reasons in the words `ChatFinish` uses; the rest (`RECITATION`, `OTHER`…) are passed on lowercased. */
const FINISH_REASONS: Record<string, string> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
};

/** The text parts of a candidate, joined; a thinking model's thought summaries (`thought: true`) are left out. */
function textOf(parts: unknown, status: number, path: string): string {
  if (!Array.isArray(parts)) throw invalidResponseError(NAME, status, `${path} is missing or not an array.`);
  let text = '';
  for (const part of parts) {
    const { text: value, thought } = (part ?? {}) as { text?: unknown; thought?: unknown };
    if (value === undefined || thought === true) continue;
    if (typeof value !== 'string') throw invalidResponseError(NAME, status, `${path}[].text is not a string.`);
    text += value;
  }
  return text;
}

function usageOf(status: number, metadata: unknown): Usage {
  const usage = usageObject(NAME, status, metadata, 'usageMetadata');
  if (usage === undefined) return 'unknown';
  return usageFromCounts(NAME, status, {
    inputTokens: { value: usage.promptTokenCount, path: 'usageMetadata.promptTokenCount' },
    outputTokens: [
      { value: usage.candidatesTokenCount, path: 'usageMetadata.candidatesTokenCount' },
      { value: usage.thoughtsTokenCount, path: 'usageMetadata.thoughtsTokenCount' },
    ],
  });
}
