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
}

/** A chat model. Used to answer, and by pre-processors and the LLM reranker. */
export interface ChatProvider {
  /** Short name shown in the trace and in errors, e.g. `openai-chat`. */
  readonly name: string;
  /** The whole reply. */
  complete(messages: ChatMessage[], options?: ChatOptions): Promise<string>;
  /** The reply as text deltas, in order. */
  stream(messages: ChatMessage[], options?: ChatOptions): AsyncIterable<string>;
}
