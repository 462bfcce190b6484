import { z } from 'zod';
import type { ChatMessage, ChatOptions, ChatProvider } from '../../src/contracts/chat.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { assertChatMessages } from '../shared/chat-input.ts';
import { openAIChatBody, readOpenAIChatStream, readOpenAICompletion } from '../shared/openai-format.ts';
import { type AzureOpenAIConnection, azureOpenAIConnectionOptionsShape, connectAzureOpenAI } from './azure-openai-client.ts';

export const azureOpenAIChatOptionsSchema = z
  .object({
    ...azureOpenAIConnectionOptionsShape,
    /** Sampling temperature for every call unless a call sets its own. Leave out for the model's default. */
    temperature: z.number().min(0).max(2).optional(),
    /** Upper bound on generated tokens for every call unless a call sets its own. */
    maxTokens: z.number().int().positive().optional(),
    /**
     * The field the limit is sent in: `max_tokens`, or `max_completion_tokens`, which reasoning (o-series and
     * newer) deployments require. @default max_tokens
     */
    limitField: z.enum(['max_tokens', 'max_completion_tokens']).default('max_tokens'),
    /** Ask for the usage in the stream's last chunk (`stream_options.include_usage`); turn off for API versions before 2024-09-01. @default true */
    streamUsage: z.boolean().default(true),
    /** Time limit of one attempt in milliseconds; for `stream`, of the wait for each chunk. @default 120000 */
    timeoutMs: z.number().int().positive().default(120_000),
  })
  .strict();

export type AzureOpenAIChatOptions = z.input<typeof azureOpenAIChatOptionsSchema>;

const NAME = 'azure-openai-chat';

/**
 * Chat completions of an Azure OpenAI deployment (`POST {endpoint}/openai/deployments/{deployment}/chat/completions
 * ?api-version=…`). The body and replies are OpenAI's, read by the same code (`providers/shared/openai-format.ts`);
 * what differs is the address (the deployment in the path, the `api-version` query), the `api-key` header, no
 * `model` field (the deployment decides), a first stream chunk with empty `choices` (prompt filter results), and
 * errors of its own (`content_filter`, `DeploymentNotFound`).
 *
 * @example new AzureOpenAIChat({ endpoint: 'https://my-resource.openai.azure.com', deployment: 'gpt-4o-mini' })   // AZURE_OPENAI_API_KEY
 */
export class AzureOpenAIChat implements ChatProvider {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'azure.ai.openai';
  readonly deployment: string;

  /** The deployment, which stands for the model in every request: what usage and prices name the model by. */
  get model(): string {
    return this.deployment;
  }
  readonly deploymentURL: string;
  readonly #connection: AzureOpenAIConnection;
  readonly #temperature: number | undefined;
  readonly #maxTokens: number | undefined;
  readonly #limitField: 'max_tokens' | 'max_completion_tokens';
  readonly #streamUsage: boolean;

  constructor(options: AzureOpenAIChatOptions) {
    const parsed = parseOptions(azureOpenAIChatOptionsSchema, options, NAME);
    this.#connection = connectAzureOpenAI(NAME, parsed);
    this.deployment = parsed.deployment;
    this.deploymentURL = this.#connection.deploymentURL;
    this.#temperature = parsed.temperature;
    this.#maxTokens = parsed.maxTokens;
    this.#limitField = parsed.limitField;
    this.#streamUsage = parsed.streamUsage;
  }

  /**
   * @throws ProviderError on a failed request, a filtered prompt or a reply without text.
   * @throws AxonError `ABORTED` when `options.signal` fires.
   */
  async complete(messages: ChatMessage[], options: ChatOptions = {}): Promise<string> {
    assertChatMessages(messages, NAME);
    const response = await this.#connection.http.postJson('chat/completions', this.#body(messages, options), { signal: options.signal });
    const { text, usage } = readOpenAICompletion(NAME, response.status, response.body);
    options.onUsage?.(usage);
    return text;
  }

  /** The reply as text deltas. Opening the stream is retried; nothing after the first chunk. */
  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<string> {
    assertChatMessages(messages, NAME);
    const body = { ...this.#body(messages, options), stream: true, ...(this.#streamUsage ? { stream_options: { include_usage: true } } : {}) };
    const events = this.#connection.http.postEventStream('chat/completions', body, { signal: options.signal });
    yield* readOpenAIChatStream(NAME, events, options, (chunk) => this.#connection.streamedError(chunk));
  }

  #body(messages: ChatMessage[], options: ChatOptions) {
    return openAIChatBody(messages, options, { temperature: this.#temperature, maxTokens: this.#maxTokens, limitField: this.#limitField });
  }
}
