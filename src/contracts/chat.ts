import type { UsageListener } from './usage.ts';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatOptions {
  signal?: AbortSignal;
  /** Sampling temperature, where the model supports it. */
  temperature?: number;
  /** Upper bound on generated tokens. */
  maxTokens?: number;
  /**
   * Called once when a `stream` ends normally, with how it ended: whether the reply is complete, or was cut
   * off (by the token limit, or because the stream stopped without its end event). Not called when it throws.
   */
  onFinish?: (finish: ChatFinish) => void;
  /**
   * Called with the tokens the service counted for this call (`inputTokens`, `outputTokens`), or `'unknown'` when
   * it reported none. For `stream`, once, when the stream ends normally. Optional for providers: one that never
   * calls it reports no usage, and callers count that as unknown.
   */
  onUsage?: UsageListener;
}

/** How a streamed reply ended. */
export interface ChatFinish {
  /** The provider's finish reason in Axon's words: `stop`, `length` (token limit), `content_filter`, `incomplete` (no end event), or the provider's own. */
  reason: string;
  /** The reply is not whole: it hit the token limit, or the stream stopped before its end event. */
  truncated: boolean;
}

/** A chat model. Used to answer, and by pre-processors and the LLM reranker. */
export interface ChatProvider {
  /** Short name shown in the trace and in errors, e.g. `openai-chat`. */
  readonly name: string;
  /**
   * Optional: the service, as OpenTelemetry's GenAI conventions name it in `gen_ai.provider.name` (`openai`,
   * `anthropic`, `gcp.gemini`, `azure.ai.openai`, `mistral_ai`, `cohere`, or the service's own name where they have
   * none). Absent, the span of each call names the provider by `name`. Usage and prices name a provider by `name`,
   * and its model by its `model` property where that is a string (or an object with a string `modelId`).
   */
  readonly genAiProvider?: string;
  /** The whole reply. */
  complete(messages: ChatMessage[], options?: ChatOptions): Promise<string>;
  /** The reply as text deltas, in order. */
  stream(messages: ChatMessage[], options?: ChatOptions): AsyncIterable<string>;
}
