/**
 * The part of the AI SDK's provider specifications (`@ai-sdk/provider`) that Axon uses, written structurally so
 * that a model built against any of the versions users run is accepted without Axon depending on one:
 * `LanguageModelV2` (`ai` 5), `LanguageModelV3` (`ai` 6) and `LanguageModelV4` (`ai` 7); `EmbeddingModelV2`–`V4`;
 * `RerankingModelV3`–`V4`. Where the versions differ (usage counts are numbers in V2, `{total}` objects from V3; the
 * finish reason a string in V2, `{unified, raw}` from V3), both shapes are read.
 */

/** A JSON value, as the specifications' provider options hold. */
export type AISdkJsonValue = string | number | boolean | null | AISdkJsonValue[] | { [key: string]: AISdkJsonValue };

/** `providerOptions`: per provider id, that provider's own options. */
export type AISdkProviderOptions = Record<string, Record<string, AISdkJsonValue>>;

/** A prompt message in every version's shape: system text, or user and assistant text parts. */
export type AISdkPromptMessage = { role: 'system'; content: string } | { role: 'user' | 'assistant'; content: Array<{ type: 'text'; text: string }> };

/** The call options Axon sets (every version accepts these). */
export interface AISdkLanguageCallOptions {
  prompt: AISdkPromptMessage[];
  maxOutputTokens?: number;
  temperature?: number;
  abortSignal?: AbortSignal;
  providerOptions?: AISdkProviderOptions;
}

/** A token count: a number (V2) or `{total}` (V3, V4). */
export type AISdkTokenCount = number | { total?: number | undefined } | undefined;

/** Usage of a language model call, in any version's shape. */
export interface AISdkLanguageUsage {
  inputTokens?: AISdkTokenCount;
  outputTokens?: AISdkTokenCount;
}

/** A finish reason: a string (V2) or `{unified, raw}` (V3, V4). */
export type AISdkFinishReason = string | { unified?: string; raw?: string | undefined };

/** The stream parts Axon reads; others (reasoning, tools, metadata) are passed over. */
export type AISdkStreamPart =
  | { type: 'text-delta'; delta?: string; textDelta?: string }
  | { type: 'finish'; finishReason?: AISdkFinishReason; usage?: AISdkLanguageUsage }
  | { type: 'error'; error: unknown }
  | { type: string };

/** A language model (`LanguageModelV2`, `V3` or `V4`). */
export interface AISdkLanguageModel {
  readonly specificationVersion: string;
  readonly provider: string;
  readonly modelId: string;
  doGenerate(
    options: AISdkLanguageCallOptions,
  ): PromiseLike<{ content: Array<{ type: string; text?: string }>; usage?: AISdkLanguageUsage; finishReason?: AISdkFinishReason }>;
  doStream(options: AISdkLanguageCallOptions): PromiseLike<{ stream: ReadableStream<AISdkStreamPart> }>;
}

/** An embedding model (`EmbeddingModelV2<string>`, `V3` or `V4`). */
export interface AISdkEmbeddingModel {
  readonly specificationVersion: string;
  readonly provider: string;
  readonly modelId: string;
  readonly maxEmbeddingsPerCall: PromiseLike<number | undefined> | number | undefined;
  readonly supportsParallelCalls: PromiseLike<boolean> | boolean;
  doEmbed(options: {
    values: string[];
    abortSignal?: AbortSignal;
    providerOptions?: AISdkProviderOptions;
  }): PromiseLike<{ embeddings: number[][]; usage?: { tokens: number } }>;
}

/** A reranking model (`RerankingModelV3` or `V4`). */
export interface AISdkRerankingModel {
  readonly specificationVersion: string;
  readonly provider: string;
  readonly modelId: string;
  doRerank(options: {
    documents: { type: 'text'; values: string[] };
    query: string;
    topN?: number;
    abortSignal?: AbortSignal;
    providerOptions?: AISdkProviderOptions;
  }): PromiseLike<{ ranking: Array<{ index: number; relevanceScore: number }> }>;
}

/** The versions of each specification Axon reads. */
export const SUPPORTED_VERSIONS = {
  language: ['v2', 'v3', 'v4'],
  embedding: ['v2', 'v3', 'v4'],
  reranking: ['v3', 'v4'],
} as const;

/** The number of a token count in either shape, `undefined` when the model did not report it. */
export function tokenCount(count: AISdkTokenCount): number | undefined {
  if (typeof count === 'number') return count;
  return typeof count?.total === 'number' ? count.total : undefined;
}

/** The unified finish reason, in either shape. */
export function finishReasonOf(reason: AISdkFinishReason | undefined): string | undefined {
  return typeof reason === 'string' ? reason : reason?.unified;
}
