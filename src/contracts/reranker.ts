import type { UsageListener } from './usage.ts';

export interface RerankOptions {
  /** How many results to return, best first. */
  topN: number;
  signal?: AbortSignal;
  /** Called once per `rerank` with what the service billed (`searchUnits` or `inputTokens`), or `'unknown'`. See `Usage`. */
  onUsage?: UsageListener;
}

/** One reranked document: its position in the list that was sent, and its relevance to the query. */
export interface RerankResult {
  index: number;
  relevanceScore: number;
}

/**
 * A relevance model that scores documents against a query (Jina, Cohere, LocalAI). Reranker
 * post-processors wrap one of these; `rerank` is called with at most `maxDocumentsPerCall` documents.
 */
export interface Reranker {
  /** Short name shown in the trace and in errors, e.g. `cohere-rerank`. */
  readonly name: string;
  /**
   * Optional: the service, as OpenTelemetry's GenAI conventions name it in `gen_ai.provider.name` (`openai`,
   * `anthropic`, `gcp.gemini`, `azure.ai.openai`, `mistral_ai`, `cohere`, or the service's own name where they have
   * none). Absent, the span of each call names the provider by `name`. Usage and prices name a provider by `name`,
   * and its model by its `model` property where that is a string (or an object with a string `modelId`).
   */
  readonly genAiProvider?: string;
  /** Most documents one call accepts; the post-processor splits longer lists. */
  readonly maxDocumentsPerCall: number;
  /** Results best first, validated: every index in range and unique, every score finite. */
  rerank(query: string, documents: string[], options: RerankOptions): Promise<RerankResult[]>;
}
