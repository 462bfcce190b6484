/**
 * What one request to a model service consumed, in the service's own counts. Providers report it through the
 * optional `onUsage` callback of `ChatOptions`, `EmbedOptions` and `RerankOptions`: the results themselves stay
 * as they are (a string, vectors, ranked indices), so every existing caller and provider keeps working.
 */

/** The counts a service returned for one request. A field is present only when the service reported it. */
export interface UsageCounts {
  /**
   * Tokens the service read: the prompt of a chat call, the texts of an embeddings call, the query and documents
   * of a reranker that bills in tokens. Where a service splits cached from fresh input, this is their sum.
   */
  readonly inputTokens?: number;
  /** Tokens the service generated (chat). */
  readonly outputTokens?: number;
  /** Search units billed (Cohere's rerank). */
  readonly searchUnits?: number;
}

/**
 * One request's usage: the service's counts, or `'unknown'` when the service returned none (Gemini's batch
 * embeddings, a compatible server that leaves usage out). Never an estimate presented as a count.
 */
export type Usage = UsageCounts | 'unknown';

/**
 * Called once per request a provider makes for the call it is given to (an `embed` of one batch, a `rerank`, a
 * `complete`, a `stream` that ended normally). Not called when the request fails or a stream's consumer leaves
 * before its end. A provider that makes no remote request (a local model) reports `{}`: nothing was metered.
 */
export type UsageListener = (usage: Usage) => void;

/** What kind of call a usage was reported for: a chat model's reply, an embedding, a reranking. */
export type UsageKind = 'chat' | 'embeddings' | 'rerank';
